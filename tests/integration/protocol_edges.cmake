# Protocol edge cases (protocol_edges.cpp), over shm and tcp. Included from
# tests/integration/CMakeLists.txt.
add_executable(protocol_edges ${CMAKE_CURRENT_LIST_DIR}/protocol_edges.cpp)
target_link_libraries(protocol_edges PRIVATE lci_test_harness)
target_compile_options(protocol_edges PRIVATE -Wall -Wextra)

foreach(prov shm tcp)
  foreach(np 1 2)
    foreach(c getv_empty_piggy recvl_zero)
      lci_add_launched_test(NAME integration.protocol_edges.${c}.${prov}.np${np}
        TARGET protocol_edges NP ${np} PROVIDER ${prov} ARGS --case ${c})
    endforeach()
  endforeach()
  lci_add_launched_test(NAME integration.protocol_edges.retry_trailer.${prov}.np2
    TARGET protocol_edges NP 2 PROVIDER ${prov} ARGS --case retry_trailer)
endforeach()
# Operations failed by the library's fault-injection hook (LCI_TEST_HOOKS=1).
foreach(prov shm tcp)
  foreach(np 1 2 3)
    lci_add_launched_test(NAME integration.protocol_edges.failed_rdma_fence.${prov}.np${np}
      TARGET protocol_edges NP ${np} PROVIDER ${prov} ARGS --case failed_rdma_fence
      ENV LCI_TEST_HOOKS=1)
  endforeach()
endforeach()

# Receive capacities, medium-buffer frees and segment/device pairing
# (buffer_checks.cpp); its debug-build expectations follow LCI_DEBUG.
add_executable(buffer_checks ${CMAKE_CURRENT_LIST_DIR}/buffer_checks.cpp)
target_link_libraries(buffer_checks PRIVATE lci_test_harness)
target_compile_options(buffer_checks PRIVATE -Wall -Wextra)
if(LCI_DEBUG)
  target_compile_definitions(buffer_checks PRIVATE LCI_TEST_DEBUG_BUILD=1)
endif()
foreach(prov shm tcp)
  foreach(np 1 2)
    lci_add_launched_test(NAME integration.buffer_checks.${prov}.np${np} TARGET buffer_checks
      NP ${np} PROVIDER ${prov})
  endforeach()
endforeach()
