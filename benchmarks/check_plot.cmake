# benchmarks.compare.plot: `compare plot` draws the plots of a small recorded
# document (plot_fixture.json) with gnuplot; each SVG must exist and name its
# series. Timings are never checked. Arguments: -DCOMPARE= -DFIXTURE= -DOUT=
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${COMPARE} plot ${FIXTURE} --out ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compare plot failed (${rc}): ${out}${err}")
endif()
set(expect
  "latency_vs_size|raw libfabric|LCI|MPI"
  "rate_vs_threads|LCI shared device|LCI device per thread|MPI"
  "intra_node_latency|LCI native|MPICH|UCX|LCI over libfabric shm"
  "intra_node_rate|LCI native|MPICH|UCX|raw libfabric shm")
foreach(entry IN LISTS expect)
  string(REPLACE "|" ";" words "${entry}")
  list(POP_FRONT words base)
  foreach(ext svg png)
    if(NOT EXISTS ${OUT}/${base}.${ext})
      message(FATAL_ERROR "compare plot wrote no ${base}.${ext}")
    endif()
  endforeach()
  file(READ ${OUT}/${base}.svg svg)
  foreach(word IN LISTS words)
    string(FIND "${svg}" "${word}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${base}.svg does not name the series '${word}'")
    endif()
  endforeach()
  message(STATUS "check_plot: ${base}.svg and .png name ${words}")
endforeach()
message(STATUS "check_plot: 4 plots drawn")
