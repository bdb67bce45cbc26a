// Fixture: part of the cycle one -> two -> three.
#pragma once
