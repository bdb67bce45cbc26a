// Fixture: a higher layer including a lower one (allowed).
#pragma once
#include "lci/util/bad.hpp"
