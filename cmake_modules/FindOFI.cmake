# Finds libfabric (the OpenFabrics Interfaces), under LCI 1.7.9's module name.
#
# Gives OFI_FOUND, OFI_VERSION, OFI_INCLUDE_DIRS, OFI_LIBRARIES and the
# imported target OFI::OFI. The cache variables OFI_INCLUDE_DIR and
# OFI_LIBRARY, or OFI_ROOT / LIBFABRIC_ROOT (CMake variables or environment),
# point it at an install that pkg-config does not know.
#
# This is the one libfabric search of this tree: cmake/FindFabric.cmake (the
# Fabric::fabric the build links) calls it. It lives in cmake_modules/ because
# parents that build LCI as a subproject (HPX's HPX_WITH_FETCH_LCI) install
# cmake_modules/FindOFI.cmake and FindIBV.cmake; it needs no other file.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_OFI QUIET libfabric)
endif()
find_path(OFI_INCLUDE_DIR rdma/fabric.h
  HINTS ${OFI_ROOT} $ENV{OFI_ROOT} ${LIBFABRIC_ROOT} $ENV{LIBFABRIC_ROOT} ${PC_OFI_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(OFI_LIBRARY fabric
  HINTS ${OFI_ROOT} $ENV{OFI_ROOT} ${LIBFABRIC_ROOT} $ENV{LIBFABRIC_ROOT} ${PC_OFI_LIBRARY_DIRS}
  PATH_SUFFIXES lib lib64)
set(OFI_VERSION "${PC_OFI_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OFI REQUIRED_VARS OFI_LIBRARY OFI_INCLUDE_DIR
  VERSION_VAR OFI_VERSION)
if(OFI_FOUND)
  set(OFI_INCLUDE_DIRS ${OFI_INCLUDE_DIR})
  set(OFI_LIBRARIES ${OFI_LIBRARY})
  if(NOT TARGET OFI::OFI)
    add_library(OFI::OFI UNKNOWN IMPORTED)
    set_target_properties(OFI::OFI PROPERTIES
      IMPORTED_LOCATION "${OFI_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${OFI_INCLUDE_DIR}")
  endif()
endif()
mark_as_advanced(OFI_INCLUDE_DIR OFI_LIBRARY)
