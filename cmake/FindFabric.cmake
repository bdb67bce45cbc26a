# Finds libfabric. Defines Fabric::fabric, the name this tree links it by.
# The search itself is FindOFI.cmake (cmake_modules/, LCI 1.7.9's module
# name; installed next to this file), which must be on CMAKE_MODULE_PATH.
set(lci_find_args)
if(Fabric_FIND_REQUIRED)
  list(APPEND lci_find_args REQUIRED)
endif()
if(Fabric_FIND_QUIETLY)
  list(APPEND lci_find_args QUIET)
endif()
find_package(OFI ${Fabric_FIND_VERSION} MODULE ${lci_find_args})
set(Fabric_FOUND ${OFI_FOUND})
set(Fabric_VERSION ${OFI_VERSION})
if(OFI_FOUND AND NOT TARGET Fabric::fabric)
  add_library(Fabric::fabric INTERFACE IMPORTED)
  set_target_properties(Fabric::fabric PROPERTIES INTERFACE_LINK_LIBRARIES OFI::OFI)
endif()
