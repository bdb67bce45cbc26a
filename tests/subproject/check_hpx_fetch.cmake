# HPX 1.11's HPX_WITH_FETCH_LCI path (hpx_fetch/CMakeLists.txt does what its
# cmake/HPX_SetupLCI.cmake does): the parent configures, builds and installs
# LCI into a scratch prefix, which must then hold lci.h, lci_config.h and
# lct.h (and no internal header), the libraries, HPXLCITarget.cmake and
# FindIBV.cmake / FindOFI.cmake; a program built against the installed
# headers, both through HPXLCITarget.cmake and with a plain compiler line,
# links and runs under lcrun, and lci_config.h's macros check out.
# Variables: TREE (this source tree), SRC (hpx_fetch/), WORK, CC.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/../common/run_checked.cmake)

set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/build -DFETCHCONTENT_SOURCE_DIR_LCI=${TREE}
  -DCMAKE_BUILD_TYPE=)  # no optimisation: this test is about the packaging
include(ProcessorCount)
ProcessorCount(n)
run(${CMAKE_COMMAND} --build ${WORK}/build -j${n})
run(${CMAKE_COMMAND} --install ${WORK}/build --prefix ${prefix})

foreach(f include/lci.h include/lci_config.h include/lct.h lib/liblci.so lib/liblct.so
          lib/cmake/HPX/HPXLCITarget.cmake lib/cmake/HPX/FindIBV.cmake lib/cmake/HPX/FindOFI.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the HPX-like install lacks ${f}")
  endif()
endforeach()
file(GLOB headers RELATIVE ${prefix}/include ${prefix}/include/*)
list(SORT headers)
if(NOT headers STREQUAL "lci.h;lci_config.h;lct.h")
  message(FATAL_ERROR "the HPX-like install has include/ ${headers}, expected lci.h lci_config.h lct.h")
endif()

file(READ ${WORK}/build/lcrun_path.txt lcrun)
# Through HPXLCITarget.cmake, as an installed HPX's users get LCI.
run(${CMAKE_COMMAND} -S ${SRC}/consumer -B ${WORK}/consumer -DPREFIX=${prefix} -DSRC=${SRC}
  -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK}/consumer)
run(${lcrun} -n 2 ${WORK}/consumer/consumer)
run(${WORK}/consumer/config_macros)
# A plain compiler line against the installed headers and libraries.
run(${CC} -std=c99 -Wall -Werror -I${prefix}/include ${SRC}/../../install/consumer/main.c
  -L${prefix}/lib -llci -Wl,-rpath,${prefix}/lib -o ${WORK}/consumer_cc)
run(${lcrun} -n 2 ${WORK}/consumer_cc)
