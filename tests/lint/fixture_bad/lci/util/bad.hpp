// Fixture: a lower layer including a higher one.
#pragma once
#include "lci/core/device.hpp"
