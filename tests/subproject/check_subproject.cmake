# Configures, builds, tests and installs tests/subproject/parent with LCI as
# a subproject in MODE (add_subdirectory | fetchcontent), and checks:
#   - the parent's build has the targets LCI, LCT, LCI::LCI, LCI::lci,
#     LCI::LCT, LCI::Shared, LCI::Static and lcrun (programs linking the
#     last two run), and none of LCI's examples, benchmarks or tests
#     (checked by the parent's CMakeLists);
#   - the parent's ctest lists only the parent's own test, which passes;
#   - installing the parent installs liblci and liblct when
#     LCI_FETCHCONTENT_INSTALL is ON, and nothing of LCI when it is OFF.
# Variables: TREE (this source tree), SRC (the parent), WORK, MODE, INSTALL.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/../common/run_checked.cmake)

set(args -S ${SRC} -B ${WORK}/build -DMODE=${MODE} -DLCI_FETCHCONTENT_INSTALL=${INSTALL}
  -DCMAKE_BUILD_TYPE=)  # no optimisation: this test is about the build, not speed
if(MODE STREQUAL "fetchcontent")
  list(APPEND args -DFETCHCONTENT_SOURCE_DIR_LCI=${TREE})
else()
  list(APPEND args -DLCI_TREE=${TREE})
endif()
run(${CMAKE_COMMAND} ${args})
foreach(line "LCI: built as a subproject" "LCI_WITH_DOC ignored"
             "LCI_ENABLE_MULTITHREAD_PROGRESS ignored" "LCI_COMPILE_DREG ignored")
  string(FIND "${out}" "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "configure did not say '${line}'")
  endif()
endforeach()
include(ProcessorCount)
ProcessorCount(n)
run(${CMAKE_COMMAND} --build ${WORK}/build -j${n})
run(${CMAKE_COMMAND} -E chdir ${WORK}/build ctest -N)
if(NOT out MATCHES "Total Tests: 1\n")
  message(FATAL_ERROR "the parent's ctest lists tests of LCI's:\n${out}")
endif()
run(${CMAKE_COMMAND} -E chdir ${WORK}/build ctest --output-on-failure)
run(${WORK}/build/parent_app_lct)
file(READ ${WORK}/build/lcrun_path.txt lcrun)
foreach(app parent_app_shared parent_app_static)
  run(${lcrun} -n 2 ${WORK}/build/${app})
endforeach()

run(${CMAKE_COMMAND} --install ${WORK}/build --prefix ${WORK}/prefix)
file(GLOB_RECURSE installed_lci ${WORK}/prefix/*liblci.so* ${WORK}/prefix/*liblct.so*
  ${WORK}/prefix/*lci.h)
if(INSTALL AND NOT installed_lci)
  message(FATAL_ERROR "LCI_FETCHCONTENT_INSTALL=ON but nothing of LCI was installed")
elseif(NOT INSTALL AND installed_lci)
  message(FATAL_ERROR "LCI_FETCHCONTENT_INSTALL=OFF but LCI installed: ${installed_lci}")
endif()
if(NOT EXISTS ${WORK}/prefix/bin/parent_app)
  message(FATAL_ERROR "the parent's own program was not installed")
endif()
