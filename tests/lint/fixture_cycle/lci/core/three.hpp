// Fixture: closes the cycle one -> two -> three -> one.
#pragma once

#include "lci/core/one.hpp"
