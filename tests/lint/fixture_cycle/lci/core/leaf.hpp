// Fixture: below every other module, in no cycle.
#pragma once
