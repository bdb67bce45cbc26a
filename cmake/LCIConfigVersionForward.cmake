# Installed as <libdir>/cmake/LCIConfigVersion.cmake, next to the forwarding
# LCIConfig.cmake: the version check is the one of LCI/LCIConfigVersion.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/LCI/LCIConfigVersion.cmake")
