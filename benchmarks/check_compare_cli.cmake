# benchmarks.compare.cli: compare's command line. An unknown subcommand
# exits non-zero and lists the valid ones; `compare SUB --help` of every
# subcommand shows the output options they share (--out, --json, and where
# there is something to draw, --plot and --no-plot). Nothing is run.
# Arguments: -DCOMPARE=
set(subcommands all rate latency bandwidth instructions shm-table apps plot tables)
execute_process(COMMAND ${COMPARE} nosuch
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "compare nosuch exited 0: ${out}${err}")
endif()
foreach(sub IN LISTS subcommands)
  string(FIND "${err}" " ${sub}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "compare nosuch does not list the subcommand ${sub}: ${err}")
  endif()
endforeach()
message(STATUS "check_compare_cli: compare nosuch exits ${rc} and lists ${subcommands}")
set(expect
  "all|--out|--json|--plot|--no-plot"
  "rate|--out|--json|--plot|--no-plot"
  "latency|--out|--json|--plot|--no-plot"
  "bandwidth|--out|--json|--plot|--no-plot"
  "shm-table|--out|--json|--plot|--no-plot"
  "instructions|--out|--json"
  "apps|--out|--json"
  "plot|--out|--plot"
  "tables|--out")
set(checked 0)
foreach(entry IN LISTS expect)
  string(REPLACE "|" ";" words "${entry}")
  list(POP_FRONT words sub)
  execute_process(COMMAND ${COMPARE} ${sub} --help
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "compare ${sub} --help exited ${rc}: ${err}")
  endif()
  foreach(word IN LISTS words "output (the same in every subcommand)")
    string(FIND "${out}" "${word}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "compare ${sub} --help does not show '${word}':\n${out}")
    endif()
  endforeach()
  math(EXPR checked "${checked} + 1")
endforeach()
message(STATUS "check_compare_cli: ${checked} subcommands show the common options")
