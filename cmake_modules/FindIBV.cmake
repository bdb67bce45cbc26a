# Finds libibverbs (rdma-core), under LCI 1.7.9's module name.
#
# Gives IBV_FOUND, IBV_VERSION, IBV_INCLUDE_DIRS, IBV_LIBRARIES and the
# imported target IBV::IBV. The cache variables IBV_INCLUDE_DIR and
# IBV_LIBRARY, or IBV_ROOT / LIBIBVERBS_ROOT (CMake variables or environment),
# point it at an install without libibverbs.pc.
#
# This is the one libibverbs search of this tree: cmake/FindIBVerbs.cmake (the
# IBVerbs::ibverbs the build links) calls it. It lives in cmake_modules/
# because parents that build LCI as a subproject (HPX's HPX_WITH_FETCH_LCI)
# install cmake_modules/FindOFI.cmake and FindIBV.cmake; it needs no other file.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_IBV QUIET libibverbs)
endif()
find_path(IBV_INCLUDE_DIR infiniband/verbs.h
  HINTS ${IBV_ROOT} $ENV{IBV_ROOT} ${LIBIBVERBS_ROOT} $ENV{LIBIBVERBS_ROOT} ${PC_IBV_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(IBV_LIBRARY ibverbs
  HINTS ${IBV_ROOT} $ENV{IBV_ROOT} ${LIBIBVERBS_ROOT} $ENV{LIBIBVERBS_ROOT} ${PC_IBV_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64)
set(IBV_VERSION "${PC_IBV_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(IBV REQUIRED_VARS IBV_LIBRARY IBV_INCLUDE_DIR
  VERSION_VAR IBV_VERSION)
if(IBV_FOUND)
  set(IBV_INCLUDE_DIRS ${IBV_INCLUDE_DIR})
  set(IBV_LIBRARIES ${IBV_LIBRARY})
  if(NOT TARGET IBV::IBV)
    add_library(IBV::IBV UNKNOWN IMPORTED)
    set_target_properties(IBV::IBV PROPERTIES
      IMPORTED_LOCATION "${IBV_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${IBV_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(IBV_INCLUDE_DIR IBV_LIBRARY)
