# docs/configuration.md from the table of settings (lci/core/settings.def),
# through `lci_info --config-markdown`.
#
#   cmake -DLCI_INFO=<lci_info> -DDOC=<docs/configuration.md> -DMODE=write -P config_doc.cmake
#     rewrites the page (the target config-doc);
#   ... -DMODE=check
#     fails when the committed page differs from the generator's output (the
#     test docs.configuration_current). A build whose build-time defaults
#     differ from the page's (its first line names them) skips instead.
if(NOT LCI_INFO OR NOT DOC OR NOT MODE)
  message(FATAL_ERROR "config_doc: give -DLCI_INFO=, -DDOC= and -DMODE=write|check")
endif()
execute_process(COMMAND ${LCI_INFO} --config-markdown
  OUTPUT_VARIABLE generated RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "config_doc: ${LCI_INFO} --config-markdown failed (${rc}): ${err}")
endif()

if(MODE STREQUAL "write")
  file(WRITE ${DOC} "${generated}")
  message(STATUS "config_doc: wrote ${DOC}")
  return()
endif()

set(regenerate "regenerate it with `cmake --build <build dir> --target config-doc` and commit it")
if(NOT EXISTS ${DOC})
  message(FATAL_ERROR "config_doc: ${DOC} does not exist; ${regenerate}")
endif()
file(READ ${DOC} committed)
if(committed STREQUAL generated)
  message(STATUS "config_doc: ${DOC} matches lci_info --config-markdown")
  return()
endif()

string(REGEX MATCH "^[^\n]*" committed_build "${committed}")
string(REGEX MATCH "^[^\n]*" generated_build "${generated}")
if(NOT committed_build STREQUAL generated_build)
  message(STATUS "config_doc: skipped: this build's defaults differ from those the page was "
                 "generated with (${generated_build})")
  return()
endif()

# Where they differ: a unified diff against the generated page, written
# next to the test (the working directory).
set(generated_file "${CMAKE_CURRENT_BINARY_DIR}/configuration.md.generated")
file(WRITE "${generated_file}" "${generated}")
set(where "the generated page is ${generated_file}\n")
find_program(DIFF diff)
if(DIFF)
  execute_process(COMMAND ${DIFF} -u "${DOC}" "${generated_file}" OUTPUT_VARIABLE diff_text)
  set(where "${where}${diff_text}")
endif()
message("${where}")
message(FATAL_ERROR "config_doc: ${DOC} is out of date with lci/core/settings.def; ${regenerate}")
