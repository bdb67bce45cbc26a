// Fixture: beta is a header and a source.
#pragma once
