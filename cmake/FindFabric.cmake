# Finds libfabric. Defines Fabric::fabric.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_FABRIC QUIET libfabric)
endif()
find_path(Fabric_INCLUDE_DIR rdma/fabric.h HINTS ${PC_FABRIC_INCLUDE_DIRS})
find_library(Fabric_LIBRARY fabric HINTS ${PC_FABRIC_LIBRARY_DIRS})
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Fabric REQUIRED_VARS Fabric_LIBRARY Fabric_INCLUDE_DIR)
if(Fabric_FOUND AND NOT TARGET Fabric::fabric)
  add_library(Fabric::fabric UNKNOWN IMPORTED)
  set_target_properties(Fabric::fabric PROPERTIES
    IMPORTED_LOCATION "${Fabric_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Fabric_INCLUDE_DIR}")
endif()
mark_as_advanced(Fabric_INCLUDE_DIR Fabric_LIBRARY)
