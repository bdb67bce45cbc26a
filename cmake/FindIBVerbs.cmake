# Finds libibverbs (rdma-core). Defines IBVerbs::ibverbs.
#
# pkg-config first (rdma-core installs libibverbs.pc); IBVerbs_ROOT (or
# CMAKE_PREFIX_PATH) covers an install without one.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_IBVERBS QUIET libibverbs)
endif()
find_path(IBVerbs_INCLUDE_DIR infiniband/verbs.h HINTS ${PC_IBVERBS_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(IBVerbs_LIBRARY ibverbs HINTS ${PC_IBVERBS_LIBRARY_DIRS} PATH_SUFFIXES lib lib64)
set(IBVerbs_VERSION "${PC_IBVERBS_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(IBVerbs REQUIRED_VARS IBVerbs_LIBRARY IBVerbs_INCLUDE_DIR
  VERSION_VAR IBVerbs_VERSION)
if(IBVerbs_FOUND AND NOT TARGET IBVerbs::ibverbs)
  add_library(IBVerbs::ibverbs UNKNOWN IMPORTED)
  set_target_properties(IBVerbs::ibverbs PROPERTIES
    IMPORTED_LOCATION "${IBVerbs_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${IBVerbs_INCLUDE_DIR}")
endif()
mark_as_advanced(IBVerbs_INCLUDE_DIR IBVerbs_LIBRARY)
