# Resources the network refuses (resource_failures.cpp), over shm and tcp.
# Included from tests/integration/CMakeLists.txt.
add_executable(resource_failures ${CMAKE_CURRENT_LIST_DIR}/resource_failures.cpp)
target_link_libraries(resource_failures PRIVATE lci_test_harness)
target_compile_options(resource_failures PRIVATE -Wall -Wextra)

foreach(prov shm tcp)
  # A refused receive post while a queued control message is being sent: no
  # deadlock on the device's backlog. A small pool, so that it can be emptied.
  lci_add_launched_test(NAME integration.resource_failures.backlog_refused_recv.${prov}.np2
    TARGET resource_failures NP 2 PROVIDER ${prov} ARGS --case backlog_refused_recv
    ENV LCI_TEST_HOOKS=1 LCI_SERVER_NUM_PKTS=64 TIMEOUT 180)
  # Failed registrations: LCI_ERR_RETRY at the origin or a refused rendezvous,
  # never an abort.
  lci_add_launched_test(NAME integration.resource_failures.registration.${prov}.np2
    TARGET resource_failures NP 2 PROVIDER ${prov} ARGS --case registration_failures
    ENV LCI_TEST_HOOKS=1 TIMEOUT 180)
  # Long sends and puts from read-only memory.
  lci_add_launched_test(NAME integration.resource_failures.readonly_source.${prov}.np2
    TARGET resource_failures NP 2 PROVIDER ${prov} ARGS --case readonly_source TIMEOUT 180)
  # RDMA pieces within the backend's maximum message size (forced to 65537
  # bytes by the hook), and at an odd LCI_MAX_SINGLE_MESSAGE_SIZE, whose
  # effective value the info log shows.
  lci_add_launched_test(NAME integration.resource_failures.piece_limit.${prov}.np2
    TARGET resource_failures NP 2 PROVIDER ${prov} ARGS --case piece_limit
    ENV LCI_TEST_HOOKS=1 TIMEOUT 180)
  lci_add_launched_test(NAME integration.resource_failures.pieces.${prov}.np2
    TARGET resource_failures NP 2 PROVIDER ${prov} ARGS --case pieces
    ENV LCI_MAX_SINGLE_MESSAGE_SIZE=4097 LCI_LOG_LEVEL=info TIMEOUT 180)
  set_tests_properties(integration.resource_failures.pieces.${prov}.np2 PROPERTIES
    PASS_REGULAR_EXPRESSION "RDMA pieces of at most 4097 bytes \\(LCI_MAX_SINGLE_MESSAGE_SIZE 4097"
    FAIL_REGULAR_EXPRESSION "FAILED|FATAL|watchdog|exited with status [1-9]|Sanitizer|runtime error")
endforeach()
