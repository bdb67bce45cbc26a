# benchmarks.compare.plot: `compare plot` draws the plots of a small recorded
# document (plot_fixture.json) with gnuplot; each SVG must exist, name its
# series, say whether lower or higher is better, draw the spread of the
# repetitions (error bars) and carry the values it draws, which
# `compare tables --svg` checks against the document; the thread plot marks
# the thread counts above the machine's cores. Timings are never checked.
# Arguments: -DCOMPARE= -DFIXTURE= -DOUT=
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${COMPARE} plot ${FIXTURE} --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compare plot failed (${rc}): ${out}${err}")
endif()
set(expect
  "latency_vs_size|lower is better|raw libfabric|LCI|MPI"
  "rate_vs_threads|higher is better|LCI shared device|LCI device per thread|MPI|threads > 2 cores"
  "bandwidth_vs_size|higher is better|raw write|LCI sendl|LCI putl"
  "intra_node_latency|lower is better|LCI native|MPICH|UCX|LCI over libfabric shm"
  "intra_node_rate|higher is better|LCI native|MPICH|UCX|raw libfabric shm")
set(drawn 0)
foreach(entry IN LISTS expect)
  string(REPLACE "|" ";" words "${entry}")
  list(POP_FRONT words base)
  foreach(ext svg png)
    if(NOT EXISTS ${OUT}/${base}.${ext})
      message(FATAL_ERROR "compare plot wrote no ${base}.${ext}")
    endif()
  endforeach()
  file(READ ${OUT}/${base}.svg svg)
  foreach(word IN LISTS words "error bars: smallest and largest repetition" "<desc id=\"plot-data\">")
    string(FIND "${svg}" "${word}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${base}.svg does not show '${word}'")
    endif()
  endforeach()
  message(STATUS "check_plot: ${base}.svg and .png show ${words}, the spread and the values")
  math(EXPR drawn "${drawn} + 1")
endforeach()
execute_process(COMMAND ${COMPARE} tables ${FIXTURE} --svg ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the SVGs carry other values than ${FIXTURE} (${rc}): ${out}${err}")
endif()
message(STATUS "check_plot: ${drawn} plots drawn")
