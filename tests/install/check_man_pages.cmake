# Installs the documentation (install component docs) into a scratch prefix
# and checks it as a user of the installed package finds it:
#   <mandir>/man1/lcrun.1 and lci_info.1, which groff (or man -l) renders
#   without a warning;
#   with the API reference (WITH_DOC): <docdir>/html/index.html and
#   <mandir>/man3/LCI_sendm.3 (a link to its group's page, which renders),
#   and none of lci.hpp's bare member names (man3/read.3).
# Variables: BUILD (build tree), WORK (scratch folder), MANDIR and DOCDIR
# (relative install folders), WITH_DOC, GROFF and MAN (programs, or empty
# / NOTFOUND).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(prefix ${WORK}/prefix)

include(${CMAKE_CURRENT_LIST_DIR}/../common/run_checked.cmake)

if(WITH_DOC)
  # The reference is part of the default build; build it if it is not yet.
  run(${CMAKE_COMMAND} --build ${BUILD} --target doc)
endif()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix} --component docs)

set(expect ${MANDIR}/man1/lcrun.1 ${MANDIR}/man1/lci_info.1)
if(WITH_DOC)
  list(APPEND expect ${DOCDIR}/html/index.html ${MANDIR}/man3/LCI_sendm.3
       ${MANDIR}/man3/lci_two_sided.3 ${MANDIR}/man3/LCT_now.3 ${MANDIR}/man3/lci.h.3)
endif()
foreach(f ${expect})
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
if(EXISTS ${prefix}/${MANDIR}/man3/read.3)
  message(FATAL_ERROR "installed ${MANDIR}/man3/read.3, a bare name of lci.hpp")
endif()

# Renders a page; fails on a non-zero status or any diagnostic.
function(render page)
  if(GROFF)
    # -ww: every warning; -z: format, print nothing. Run from the man
    # folder, where a link page's ".so man3/..." resolves.
    execute_process(COMMAND ${GROFF} -man -Tutf8 -ww -z ${page}
                    WORKING_DIRECTORY ${prefix}/${MANDIR}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  elseif(MAN)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env MANWIDTH=80 ${MAN} -l ${page}
                    WORKING_DIRECTORY ${prefix}/${MANDIR}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  else()
    message(FATAL_ERROR "neither groff nor man is installed to render the man pages "
                        "(Debian: apt-get install groff-base, or scripts/install-deps.sh)")
  endif()
  if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
    message(FATAL_ERROR "${page} does not render (status ${rc}):\n${err}")
  endif()
  message(STATUS "${page}: renders")
endfunction()

render(man1/lcrun.1)
render(man1/lci_info.1)
if(WITH_DOC)
  render(man3/LCI_sendm.3)
  render(man3/lci_two_sided.3)
endif()
message(STATUS "check_man_pages: the documentation installs and renders")
