// Fixture: one -> two -> three -> one (a longer cycle).
#pragma once

#include "lci/core/two.hpp"
