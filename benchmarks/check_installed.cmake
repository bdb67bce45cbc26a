# benchmarks.installed.help: installs the build into a scratch prefix and
# runs the installed lci_pingpong, lci_msgrate and lci_bw: --help exits 0
# and names each option the program takes, an unknown option exits 2 and
# prints the usage. Nothing is timed. Arguments: -DBUILD= -DPREFIX= -DBINDIR=
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}): ${out}${err}")
endif()
set(common_options --help --iters --warmup --min-size --max-size --window --csv --pin
  --max-time --stat --timeout)
set(expect
  "lci_pingpong|--only-medium|--comp|--windows|--proto|--settle"
  "lci_msgrate|--threads|--max-threads|--device|--progress|--windows|--size-factor"
  "lci_bw|--windows|--segment-all|--tests")
set(checked 0)
foreach(entry IN LISTS expect)
  string(REPLACE "|" ";" words "${entry}")
  list(POP_FRONT words bench)
  set(program ${PREFIX}/${BINDIR}/${bench})
  if(NOT EXISTS ${program})
    message(FATAL_ERROR "${bench} is not installed in ${PREFIX}/${BINDIR}")
  endif()
  execute_process(COMMAND ${program} --help
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${bench} --help exited ${rc}: ${out}${err}")
  endif()
  if(NOT out MATCHES "^Usage: ")
    message(FATAL_ERROR "${bench} --help printed no usage: ${out}")
  endif()
  foreach(option IN LISTS common_options words)
    string(FIND "${out}" "  ${option}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${bench} --help does not name ${option}:\n${out}")
    endif()
  endforeach()
  execute_process(COMMAND ${program} --no-such-option
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "unknown option '--no-such-option'.*Usage: .*--help")
    message(FATAL_ERROR "${bench} --no-such-option: exit ${rc} (expected 2 and the usage): ${err}")
  endif()
  message(STATUS "check_installed: ${bench} --help names ${common_options} ${words}")
  math(EXPR checked "${checked} + 1")
endforeach()
message(STATUS "check_installed: ${checked} benchmarks")
