# Finds libibverbs (rdma-core). Defines IBVerbs::ibverbs, the name this tree
# links it by. The search itself is FindIBV.cmake (cmake_modules/, LCI
# 1.7.9's module name: pkg-config first, then IBV_ROOT or
# CMAKE_PREFIX_PATH), which must be on CMAKE_MODULE_PATH.
set(lci_find_args)
if(IBVerbs_FIND_REQUIRED)
  list(APPEND lci_find_args REQUIRED)
endif()
if(IBVerbs_FIND_QUIETLY)
  list(APPEND lci_find_args QUIET)
endif()
find_package(IBV ${IBVerbs_FIND_VERSION} MODULE ${lci_find_args})
set(IBVerbs_FOUND ${IBV_FOUND})
set(IBVerbs_VERSION ${IBV_VERSION})
if(IBV_FOUND AND NOT TARGET IBVerbs::ibverbs)
  add_library(IBVerbs::ibverbs INTERFACE IMPORTED)
  set_target_properties(IBVerbs::ibverbs PROPERTIES INTERFACE_LINK_LIBRARIES IBV::IBV)
endif()
