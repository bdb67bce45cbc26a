# Long messages, memory registration, one-sided, I/O-vector and fence
# integration tests, over shm and tcp. Included from
# tests/integration/CMakeLists.txt. Each program bounds every wait (60 s) and
# its whole run (a 240 s watchdog) and names the phase it was in when it fails.
set(lci_rdma_tests long_two_sided long_threads memory_reuse one_sided_medium one_sided_long
    one_sided_bad_range one_sided_putla_refused iovec fence)
foreach(name ${lci_rdma_tests})
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.cpp)
  target_link_libraries(${name} PRIVATE lci_test_harness)
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

# The munmap/mremap/madvise hooks and the registration cache's policy.
# fork() while other threads are inside the hooks: every child must run and
# exit (fork_hooks.cpp). LCI_USE_DREG=1 so that a cache listens to the hooks.
add_executable(fork_hooks ${CMAKE_CURRENT_LIST_DIR}/fork_hooks.cpp)
target_link_libraries(fork_hooks PRIVATE lci_test_harness)
target_compile_options(fork_hooks PRIVATE -Wall -Wextra)
foreach(prov shm tcp)
  lci_add_launched_test(NAME integration.memory.fork_hooks.${prov}.np1 TARGET fork_hooks
    NP 1 PROVIDER ${prov} ENV LCI_USE_DREG=1 LABELS threaded TIMEOUT 180)
endforeach()
# LCI_USE_DREG: memory_reuse's LCI_SEGMENT_ALL transfers, with the device's
# registration counters (logged at LCI_finalize) checked: 0 registers every
# use and caches nothing; 1 caches over shm, whose registrations do not pin.
lci_add_launched_test(NAME integration.memory.dreg0.shm.np2 TARGET memory_reuse
  NP 2 PROVIDER shm ENV LCI_USE_DREG=0 LCI_LOG_LEVEL=info TIMEOUT 300)
lci_add_launched_test(NAME integration.memory.dreg1.shm.np2 TARGET memory_reuse
  NP 2 PROVIDER shm ENV LCI_USE_DREG=1 LCI_LOG_LEVEL=info TIMEOUT 300)
set_tests_properties(integration.memory.dreg0.shm.np2 PROPERTIES
  PASS_REGULAR_EXPRESSION "registrations: 0 hits, 0 misses, [1-9][0-9]* per use"
  FAIL_REGULAR_EXPRESSION "registrations: [1-9][0-9]* hits|registrations: [0-9]+ hits, [1-9][0-9]* misses|FAIL|exited with status [1-9]")
set_tests_properties(integration.memory.dreg1.shm.np2 PROPERTIES
  PASS_REGULAR_EXPRESSION "registrations cached.*registrations: [0-9]+ hits, [1-9][0-9]* misses, 0 per use"
  FAIL_REGULAR_EXPRESSION "FAIL|exited with status [1-9]")
