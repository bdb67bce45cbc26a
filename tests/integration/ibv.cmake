# The verbs backend (LCI_BACKEND=ibv) on a representative subset of the
# integration programs. Included from tests/integration/CMakeLists.txt after
# rdma.cmake (its targets). Registered only when the backend is built; on a
# machine without an active verbs port each test is reported SKIPPED by
# ctest with "no active verbs device: skipped" (ibv_check, run_if_ibv.sh).
if(NOT LCI_HAVE_IBV)
  return()
endif()
add_executable(ibv_check ibv_check.cpp ${PROJECT_SOURCE_DIR}/lci/backend/ibv/probe.cpp)
target_include_directories(ibv_check PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(ibv_check PRIVATE IBVerbs::ibverbs)

lci_add_launched_test(NAME integration.two_sided.ibv.np2.t1 TARGET two_sided
  NP 2 PROVIDER ibv ARGS --threads 1)
lci_add_launched_test(NAME integration.two_sided.ibv.np2.t4 TARGET two_sided
  NP 2 PROVIDER ibv ARGS --threads 4 TIMEOUT 300)
lci_add_launched_test(NAME integration.long_two_sided.ibv.np2 TARGET long_two_sided
  NP 2 PROVIDER ibv ARGS --quick TIMEOUT 300)
lci_add_launched_test(NAME integration.one_sided_long.ibv.np2 TARGET one_sided_long
  NP 2 PROVIDER ibv TIMEOUT 300)
lci_add_launched_test(NAME integration.fence.ibv.np4 TARGET fence
  NP 4 PROVIDER ibv TIMEOUT 300)
lci_add_launched_test(NAME integration.backpressure.ibv.np2 TARGET backpressure
  NP 2 PROVIDER ibv ENV LCI_SERVER_NUM_PKTS=64)
