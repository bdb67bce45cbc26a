# Finds the PMIx client library (OpenPMIx). Defines PMIx::pmix.
#
# pkg-config first: distributions install PMIx outside the default search
# paths (Debian: /usr/lib/<triplet>/pmix2), and its .pc file knows where.
# PMIx_ROOT (or CMAKE_PREFIX_PATH) covers a source install without one.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_PMIX QUIET pmix)
endif()
find_path(PMIx_INCLUDE_DIR pmix.h HINTS ${PC_PMIX_INCLUDE_DIRS} PATH_SUFFIXES include)
find_library(PMIx_LIBRARY pmix HINTS ${PC_PMIX_LIBRARY_DIRS} PATH_SUFFIXES lib lib64)
set(PMIx_VERSION "${PC_PMIX_VERSION}")
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(PMIx REQUIRED_VARS PMIx_LIBRARY PMIx_INCLUDE_DIR
  VERSION_VAR PMIx_VERSION)
if(PMIx_FOUND AND NOT TARGET PMIx::pmix)
  add_library(PMIx::pmix UNKNOWN IMPORTED)
  set_target_properties(PMIx::pmix PROPERTIES
    IMPORTED_LOCATION "${PMIx_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PMIx_INCLUDE_DIR}")
endif()
mark_as_advanced(PMIx_INCLUDE_DIR PMIx_LIBRARY)
