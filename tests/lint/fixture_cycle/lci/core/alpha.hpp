// Fixture: alpha and beta include each other (a pair).
#pragma once

#include "lci/core/beta.hpp"
#include "lci/util/log.hpp"
