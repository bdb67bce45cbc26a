// Fixture: the source of beta includes alpha.
#include "lci/core/beta.hpp"

#include "lci/core/alpha.hpp"
