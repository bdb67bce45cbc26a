# LCI 1.7.9's build options, for the builds that already set them: a parent
# project pulling this tree in with add_subdirectory or FetchContent, or a
# build script written for 1.7.9. Each option is either mapped onto this
# build's own setting or ignored with one status line saying why.
# Included from the top-level CMakeLists.txt after project(), before its own
# options are declared (option() then takes a normal variable set here, as
# policy CMP0077 says).
#
# Sets LCI_IS_SUBPROJECT and LCI_INSTALL for the caller.

if(CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR)
  set(LCI_IS_SUBPROJECT OFF)
else()
  set(LCI_IS_SUBPROJECT ON)
endif()

# LCI_WITH_{EXAMPLES,TESTS,BENCHMARKS} -> LCI_BUILD_*. A subproject builds
# only the libraries and lcrun: nothing else is added to the parent's build
# or its tests.
foreach(part EXAMPLES TESTS BENCHMARKS)
  if(LCI_IS_SUBPROJECT)
    set(LCI_BUILD_${part} OFF)
  elseif(DEFINED LCI_WITH_${part})
    set(LCI_BUILD_${part} ${LCI_WITH_${part}})
    message(STATUS "LCI: LCI_WITH_${part}=${LCI_WITH_${part}} (1.7.9 name) -> LCI_BUILD_${part}")
  endif()
endforeach()
if(LCI_IS_SUBPROJECT)
  message(STATUS "LCI: built as a subproject of ${CMAKE_PROJECT_NAME}: libraries and lcrun only")
endif()

# Installing: always at the top level; as a subproject when
# LCI_FETCHCONTENT_INSTALL is ON (the default, as in 1.7.9).
option(LCI_FETCHCONTENT_INSTALL "Install LCI with the parent project when built as a subproject" ON)
if(NOT LCI_IS_SUBPROJECT OR LCI_FETCHCONTENT_INSTALL)
  set(LCI_INSTALL ON)
else()
  set(LCI_INSTALL OFF)
  message(STATUS "LCI: LCI_FETCHCONTENT_INSTALL=OFF: nothing of LCI is installed with ${CMAKE_PROJECT_NAME}")
endif()

# LCI_SERVER: 1.7.9 picks its one network layer at build time. Here ofi is
# always built and the backend is chosen at run time (LCI_BACKEND), so ibv
# means "build the verbs backend" and ucx is not available.
if(DEFINED LCI_SERVER)
  string(TOLOWER "${LCI_SERVER}" lci_server)
  if(lci_server STREQUAL "ibv")
    set(LCI_WITH_IBV ON CACHE STRING "Build the verbs backend: AUTO, ON or OFF" FORCE)
    message(STATUS "LCI: LCI_SERVER=ibv -> LCI_WITH_IBV=ON (the backend is picked at run time: LCI_BACKEND)")
  elseif(lci_server STREQUAL "ofi")
    message(STATUS "LCI: LCI_SERVER=ofi: the libfabric backend is always built")
  else()
    message(STATUS "LCI: LCI_SERVER=${LCI_SERVER} ignored: this LCI has the ofi and ibv network backends only")
  endif()
endif()

# The registration cache is always compiled; LCI_USE_DREG_DEFAULT sets the
# default of LCI_USE_DREG (environment) in lci_config.h.
if(DEFINED LCI_COMPILE_DREG)
  message(STATUS "LCI: LCI_COMPILE_DREG ignored: the registration cache is always compiled")
endif()
set(LCI_USE_DREG_DEFAULT 0 CACHE STRING "Default of LCI_USE_DREG (registration cache for LCI_SEGMENT_ALL)")
if(LCI_USE_DREG_DEFAULT)
  set(LCI_USE_DREG_DEFAULT_VALUE 1)
else()
  set(LCI_USE_DREG_DEFAULT_VALUE 0)
endif()

# LCI_WITH_DOC keeps its 1.7.9 meaning in a top-level build: the target doc
# (docs/CMakeLists.txt). A subproject builds no documentation.
if(DEFINED LCI_WITH_DOC AND LCI_IS_SUBPROJECT)
  message(STATUS "LCI: LCI_WITH_DOC ignored: the API reference is built only by a top-level build")
endif()
if(DEFINED LCI_ENABLE_MULTITHREAD_PROGRESS)
  message(STATUS "LCI: LCI_ENABLE_MULTITHREAD_PROGRESS ignored: LCI_progress is always thread-safe")
endif()

# Compile-time defaults of the device's resources (lci_config.h), each still
# overridden at run time by the environment variable without _DEFAULT.
set(LCI_PACKET_SIZE_DEFAULT 12288 CACHE STRING "Default packet size in bytes (multiple of 64)")
set(LCI_SERVER_NUM_PKTS_DEFAULT 8192 CACHE STRING "Default packets per device")
set(LCI_SERVER_MAX_SENDS_DEFAULT 64 CACHE STRING "Default LCI_SERVER_MAX_SENDS")
set(LCI_SERVER_MAX_RECVS_DEFAULT 1024 CACHE STRING "Default receive packets kept posted")
set(LCI_SERVER_MAX_CQES_DEFAULT 65536 CACHE STRING "Default LCI_SERVER_MAX_CQES")
foreach(v PACKET_SIZE SERVER_NUM_PKTS SERVER_MAX_SENDS SERVER_MAX_RECVS SERVER_MAX_CQES)
  if(NOT LCI_${v}_DEFAULT MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "LCI_${v}_DEFAULT='${LCI_${v}_DEFAULT}' is not a positive integer")
  endif()
endforeach()
math(EXPR lci_pkt_rem "${LCI_PACKET_SIZE_DEFAULT} % 64")
if(NOT lci_pkt_rem EQUAL 0 OR LCI_PACKET_SIZE_DEFAULT LESS 4160)
  message(FATAL_ERROR "LCI_PACKET_SIZE_DEFAULT=${LCI_PACKET_SIZE_DEFAULT} must be a multiple of 64, at least 4160")
endif()
