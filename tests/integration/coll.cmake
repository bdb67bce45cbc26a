# The LCIX collectives (collectives.cpp): every operation, every root, sizes
# from 0 bytes to LCI_MEDIUM_SIZE and past 1 MiB, several collectives back to
# back on one tag, and every message-port completion type, at 1 to 5
# processes over shm and tcp. Included from tests/integration/CMakeLists.txt.
add_executable(collectives ${CMAKE_CURRENT_LIST_DIR}/collectives.cpp)
target_link_libraries(collectives PRIVATE lci_test_harness)
target_compile_options(collectives PRIVATE -Wall -Wextra)
foreach(prov shm tcp)
  foreach(np 1 2 3 4 5)
    lci_add_launched_test(NAME integration.collectives.${prov}.np${np} TARGET collectives
      NP ${np} PROVIDER ${prov} TIMEOUT 120)
  endforeach()
endforeach()
# Started by hand, without a launcher: rank 0 of 1.
add_test(NAME integration.collectives.singleton COMMAND collectives --rounds 1)
set_tests_properties(integration.collectives.singleton PROPERTIES
  ENVIRONMENT "FI_PROVIDER=shm" LABELS "integration" TIMEOUT 60)
