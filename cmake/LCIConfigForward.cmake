# Installed as <libdir>/cmake/LCIConfig.cmake, where LCI 1.7.9 installs its
# package config, so that builds passing LCI_DIR=<prefix>/lib/cmake find this
# LCI. The package itself is LCI/LCIConfig.cmake, next to this file; the path
# is relative, so the install can be moved.
include("${CMAKE_CURRENT_LIST_DIR}/LCI/LCIConfig.cmake")
