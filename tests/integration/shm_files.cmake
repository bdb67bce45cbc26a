# No /dev/shm file of an LCI job outlives it, however its ranks end (exit
# without LCI_finalize, SIGKILL) and under every launcher, and files a dead
# process or another user left where libfabric's shm provider would name a
# region by default do not stop a job (shm_files.cpp, shm_files.sh).
# Included from tests/integration/CMakeLists.txt.
add_executable(shm_files shm_files.cpp)
target_link_libraries(shm_files PRIVATE lci_test_harness)

set(lci_shm_files_check sh ${CMAKE_CURRENT_SOURCE_DIR}/shm_files.sh)
set(lci_shm_files_env LCI_BACKEND=ofi FI_PROVIDER=shm)

# shm_files_test(NAME name [ENV var=value...] COMMAND ...)
function(shm_files_test)
  cmake_parse_arguments(T "" "NAME" "ENV;COMMAND" ${ARGN})
  add_test(NAME integration.shm_files.${T_NAME} COMMAND ${lci_shm_files_check} ${T_COMMAND})
  set_tests_properties(integration.shm_files.${T_NAME} PROPERTIES
    ENVIRONMENT "${lci_shm_files_env};${T_ENV}" LABELS "integration;shm" TIMEOUT 150
    SKIP_RETURN_CODE 77)
endfunction()

set(lcrun $<TARGET_FILE:lcrun>)
set(prog $<TARGET_FILE:shm_files>)
shm_files_test(NAME exit0.lcrun.np2 COMMAND --status 0 -- ${lcrun} -n 2 ${prog} exit0)
shm_files_test(NAME exit0.singleton COMMAND --status 0 -- ${prog} exit0)
shm_files_test(NAME finalize.lcrun.np2 COMMAND --status 0 -- ${lcrun} -n 2 ${prog} finalize)
shm_files_test(NAME sigkill.lcrun.np3 COMMAND --status 137 -- ${lcrun} -n 3 ${prog} kill 1)
# Files under the pids the job's processes will probably get: the job runs.
shm_files_test(NAME hostile.lcrun.np2
  COMMAND --hostile 64 --status 0 -- ${lcrun} -n 2 ${prog} finalize)
shm_files_test(NAME hostile.singleton COMMAND --hostile 64 --status 0 -- ${prog} finalize)
# Hydra and Open MPI's mpirun treat a rank that exits without finalizing as
# a failed job and SIGKILL the ranks still running; their exit statuses
# vary with that race, so only the files are checked there. Each rank
# unlinks its region's name once every peer has mapped it (end of device
# set-up), so even a SIGKILL-ed rank leaves nothing.
if(LCI_MPIEXEC_HYDRA)
  shm_files_test(NAME exit0.hydra.np2 ENV LCI_PMI=pmi1
    COMMAND -- ${LCI_MPIEXEC_HYDRA} -n 2 ${prog} exit0)
  shm_files_test(NAME sigkill.hydra.np3 ENV LCI_PMI=pmi1
    COMMAND -- ${LCI_MPIEXEC_HYDRA} -n 3 ${prog} kill 1)
  shm_files_test(NAME hostile.hydra.np2 ENV LCI_PMI=pmi1
    COMMAND --hostile 64 --status 0 -- ${LCI_MPIEXEC_HYDRA} -n 2 ${prog} finalize)
  set_property(TEST integration.shm_files.exit0.hydra.np2 integration.shm_files.sigkill.hydra.np3
    integration.shm_files.hostile.hydra.np2 APPEND PROPERTY LABELS hydra)
endif()
if(LCI_HAVE_PMIX AND LCI_MPIRUN_OPENMPI)
  shm_files_test(NAME exit0.pmix.np2
    ENV LCI_PMI=pmix OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    COMMAND -- ${LCI_MPIRUN_OPENMPI} --oversubscribe --bind-to none -n 2 ${prog} exit0)
  shm_files_test(NAME sigkill.pmix.np3
    ENV LCI_PMI=pmix OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    COMMAND -- ${LCI_MPIRUN_OPENMPI} --oversubscribe --bind-to none -n 3 ${prog} kill 1)
  set_property(TEST integration.shm_files.exit0.pmix.np2 integration.shm_files.sigkill.pmix.np3
    APPEND PROPERTY LABELS pmix)
endif()
