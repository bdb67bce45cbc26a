# Long messages, memory registration, one-sided, I/O-vector and fence
# integration tests, over shm and tcp. Included from
# tests/integration/CMakeLists.txt. Each program bounds every wait (60 s) and
# its whole run (a 240 s watchdog) and names the phase it was in when it fails.
set(lci_rdma_tests long_two_sided long_threads memory_reuse one_sided_medium one_sided_long
    one_sided_bad_range one_sided_putla_refused iovec fence)
foreach(name ${lci_rdma_tests})
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.cpp)
  target_link_libraries(${name} PRIVATE LCI::lci Threads::Threads)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
endforeach()

foreach(prov shm tcp)
  # Every size, buffer kind, completion type and match type between two ranks;
  # a subset on one rank (loopback).
  lci_add_launched_test(NAME integration.long_two_sided.${prov}.np2 TARGET long_two_sided
    NP 2 PROVIDER ${prov} TIMEOUT 300)
  lci_add_launched_test(NAME integration.long_two_sided.${prov}.np1 TARGET long_two_sided
    NP 1 PROVIDER ${prov} ARGS --quick TIMEOUT 300)
  # Long transfers split at LCI_MAX_SINGLE_MESSAGE_SIZE=1002 (1 MiB: ~1000 pieces).
  lci_add_launched_test(NAME integration.long_two_sided.split.${prov}.np2 TARGET long_two_sided
    NP 2 PROVIDER ${prov} ARGS --split --quick ENV LCI_MAX_SINGLE_MESSAGE_SIZE=1002 TIMEOUT 300)
  # 4 ranks x 4 threads mixing short, medium and long traffic; also in the
  # ThreadSanitizer subset.
  lci_add_launched_test(NAME integration.long_threads.${prov}.np4 TARGET long_threads
    NP 4 PROVIDER ${prov} ARGS --threads 4 LABELS threaded TIMEOUT 300)
  foreach(name memory_reuse one_sided_medium one_sided_long one_sided_bad_range iovec fence)
    foreach(np 1 2)
      lci_add_launched_test(NAME integration.${name}.${prov}.np${np} TARGET ${name}
        NP ${np} PROVIDER ${prov} TIMEOUT 300)
    endforeach()
  endforeach()
  lci_add_launched_test(NAME integration.one_sided_putla_refused.${prov}.np2
    TARGET one_sided_putla_refused NP 2 PROVIDER ${prov} TIMEOUT 300)
  lci_add_launched_test(NAME integration.fence.${prov}.np4 TARGET fence
    NP 4 PROVIDER ${prov} TIMEOUT 300)
endforeach()

# 64 MiB transfers, on shm only: two-sided and putla/putl/getl.
lci_add_launched_test(NAME integration.long_two_sided.big.shm.np2 TARGET long_two_sided
  NP 2 PROVIDER shm ARGS --big TIMEOUT 300)
lci_add_launched_test(NAME integration.one_sided_long.big.shm.np2 TARGET one_sided_long
  NP 2 PROVIDER shm ARGS --big TIMEOUT 300)
