// Fixture: part of the cycle one -> two -> three.
#include "lci/core/two.hpp"

#include "lci/core/three.hpp"
