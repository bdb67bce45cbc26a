// Fixture: a lower layer, included from core.
#pragma once
