# Failures inside a rendezvous (rdv_failures.cpp), over shm and tcp.
# Included from tests/integration/CMakeLists.txt.
add_executable(rdv_failures ${CMAKE_CURRENT_LIST_DIR}/rdv_failures.cpp)
target_link_libraries(rdv_failures PRIVATE lci_test_harness)
target_compile_options(rdv_failures PRIVATE -Wall -Wextra)

foreach(prov shm tcp)
  # RDMA writes failed by the library's fault-injection hook (LCI_TEST_HOOKS=1).
  lci_add_launched_test(NAME integration.rdv_failures.failed_rdv.${prov}.np2
    TARGET rdv_failures NP 2 PROVIDER ${prov} ARGS --case failed_rdv ENV LCI_TEST_HOOKS=1)
  # A dynamic recvl that cannot allocate aborts the job with a message. The
  # receiver limits its memory with RLIMIT_AS, which AddressSanitizer defeats.
  if(NOT LCI_SANITIZE)
    lci_add_launched_test(NAME integration.rdv_failures.recvl_no_memory.${prov}.np2
      TARGET rdv_failures NP 2 PROVIDER ${prov} ARGS --case recvl_no_memory TIMEOUT 180)
    set_tests_properties(integration.rdv_failures.recvl_no_memory.${prov}.np2 PROPERTIES
      PASS_REGULAR_EXPRESSION "LCI_recvl: cannot allocate 4294967296 bytes for a message from rank 0 \\(tag 81\\). aborting")
  endif()
endforeach()

# Malformed messages from a peer are dropped with a warning (header_validation.cpp).
add_executable(header_validation ${CMAKE_CURRENT_LIST_DIR}/header_validation.cpp)
target_link_libraries(header_validation PRIVATE lci_test_harness)
target_compile_options(header_validation PRIVATE -Wall -Wextra)
foreach(prov shm tcp)
  lci_add_launched_test(NAME integration.header_validation.${prov}.np2
    TARGET header_validation NP 2 PROVIDER ${prov} ENV LCI_TEST_HOOKS=1)
  # Passes only if rank 0 warned about a drop and then both ranks passed.
  set_tests_properties(integration.header_validation.${prov}.np2 PROPERTIES
    PASS_REGULAR_EXPRESSION "dropped a malformed [a-zA-Z ]+ from rank 1: bad .*rank 0: header_validation passed.*rank 1: header_validation passed|dropped a malformed [a-zA-Z ]+ from rank 1: bad .*rank 1: header_validation passed.*rank 0: header_validation passed"
    FAIL_REGULAR_EXPRESSION "FAILED|FATAL|Sanitizer|runtime error")
endforeach()

# A process outside the job (another user id where possible) sends forged
# messages and RDMA operations to a rank over tcp (outsider.sh).
add_executable(outsider_job ${CMAKE_CURRENT_LIST_DIR}/outsider_job.cpp)
target_link_libraries(outsider_job PRIVATE lci_test_harness)
target_compile_options(outsider_job PRIVATE -Wall -Wextra)
add_executable(outsider_attacker ${CMAKE_CURRENT_LIST_DIR}/outsider_attacker.cpp)
target_link_libraries(outsider_attacker PRIVATE Fabric::fabric)
target_compile_options(outsider_attacker PRIVATE -Wall -Wextra)
add_test(NAME integration.outsider.tcp COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/outsider.sh
  $<TARGET_FILE:lcrun> $<TARGET_FILE:outsider_job> $<TARGET_FILE:outsider_attacker>)
set_tests_properties(integration.outsider.tcp PROPERTIES LABELS "integration;tcp" TIMEOUT 300
  PASS_REGULAR_EXPRESSION "outsider.sh: passed"
  FAIL_REGULAR_EXPRESSION "FAILED|FATAL|Sanitizer|runtime error")

# 4 bytes of immediate data, as on verbs;ofi_rxm and efa (forced with
# LCI_OFI_CQ_DATA_SIZE=4): the sender's rank comes from FI_SOURCE alone and
# no job token travels. Two-sided, RDMA (writes with immediate data) and
# iovec traffic must work as with 8 bytes; the info log shows the path taken.
foreach(prov shm tcp)
  foreach(prog two_sided one_sided_long iovec)
    set(args "")
    if(prog STREQUAL "two_sided")
      set(args --threads 1)
    endif()
    lci_add_launched_test(NAME integration.cq_data4.${prog}.${prov}.np2 TARGET ${prog} NP 2
      PROVIDER ${prov} ARGS ${args} ENV LCI_OFI_CQ_DATA_SIZE=4 LCI_LOG_LEVEL=info TIMEOUT 300)
    set_tests_properties(integration.cq_data4.${prog}.${prov}.np2 PROPERTIES
      PASS_REGULAR_EXPRESSION "without a job token \\(4-byte data\\).*rank [01]: ${prog} passed.*rank [01]: ${prog} passed"
      FAIL_REGULAR_EXPRESSION "FAILED|FATAL|Sanitizer|runtime error|dropped a malformed")
  endforeach()
endforeach()
