# FindMPICH: Debian's MPICH (libmpich-dev) through its pkg-config module
# `mpich`, for the MPI comparison programs (examples/graph/bfs_mpi,
# benchmarks/mpi_bench). One MPI, chosen on purpose: its launcher is MPICH's
# Hydra (mpiexec.hydra), which the suite already uses. pkg-config is asked,
# never the `mpicc`/`mpicxx` wrappers, so whatever else is installed (Open
# MPI's runtime without its headers, both MPIs, neither) cannot turn this
# into a configure error: MPICH is found or it is not.
#   MPICH_FOUND, MPICH_VERSION, MPICH_MPIEXEC (mpiexec.hydra, if found),
#   target MPICH::mpich
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_MPICH QUIET IMPORTED_TARGET mpich)
endif()
find_program(MPICH_MPIEXEC NAMES mpiexec.hydra mpiexec.mpich)
include(FindPackageHandleStandardArgs)
if(PC_MPICH_FOUND)
  set(MPICH_VERSION ${PC_MPICH_VERSION})
  set(MPICH_INCLUDE_DIRS ${PC_MPICH_INCLUDE_DIRS})
  pkg_get_variable(MPICH_PC_INCLUDEDIR mpich includedir)
  find_file(MPICH_MPI_H mpi.h PATHS ${PC_MPICH_INCLUDE_DIRS} ${MPICH_PC_INCLUDEDIR}
    NO_DEFAULT_PATH)
endif()
find_package_handle_standard_args(MPICH REQUIRED_VARS PC_MPICH_FOUND MPICH_MPI_H
  VERSION_VAR MPICH_VERSION)
if(MPICH_FOUND AND NOT TARGET MPICH::mpich)
  add_library(MPICH::mpich INTERFACE IMPORTED)
  target_link_libraries(MPICH::mpich INTERFACE PkgConfig::PC_MPICH)
endif()
