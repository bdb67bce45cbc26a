// lci_info --config-markdown (config_markdown.cpp).
#pragma once

#include <cstdio>

// Prints docs/configuration.md: the reference page of every setting,
// generated from lci/core/settings.def.
void print_config_markdown(FILE* out);
