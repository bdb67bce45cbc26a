# run(COMMAND...): runs a command from a cmake -P check script, stops the
# script with the command, its status and its output when it fails, and
# leaves its standard output in `out` (also printed).
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  message(STATUS "${out}")
endfunction()
