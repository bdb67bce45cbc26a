# The integration programs under MPICH's Hydra (mpiexec.hydra, PMI-1) and
# Open MPI's mpirun (PMIx, lci/bootstrap/pmix.cpp) instead of lcrun: the same
# programs and checks, other launchers. Registered where the launcher is
# installed (Debian: mpich, openmpi-bin) and, for mpirun, LCI has PMIx.
# Included from tests/integration/CMakeLists.txt.
set(launchers)
if(LCI_MPIEXEC_HYDRA)
  list(APPEND launchers hydra)
endif()
if(LCI_HAVE_PMIX AND LCI_MPIRUN_OPENMPI)
  list(APPEND launchers openmpi)
endif()

foreach(launcher ${launchers})
  if(launcher STREQUAL "openmpi")
    set(prefix integration.pmix)
  else()
    set(prefix integration.${launcher})
  endif()
  foreach(prov shm tcp)
    set(common PROVIDER ${prov} LAUNCHER ${launcher} TIMEOUT 180)
    lci_add_launched_test(NAME ${prefix}.two_sided.${prov}.np4 TARGET two_sided NP 4
      ${common} ARGS --threads 1)
    lci_add_launched_test(NAME ${prefix}.two_sided.${prov}.np2.t2 TARGET two_sided NP 2
      ${common} ARGS --threads 2 LABELS threaded)
    lci_add_launched_test(NAME ${prefix}.long_two_sided.${prov}.np2 TARGET long_two_sided
      NP 2 ${common} ARGS --quick)
    lci_add_launched_test(NAME ${prefix}.long_two_sided.${prov}.np4 TARGET long_two_sided
      NP 4 ${common} ARGS --quick)
    lci_add_launched_test(NAME ${prefix}.one_sided_long.${prov}.np2 TARGET one_sided_long
      NP 2 ${common})
    lci_add_launched_test(NAME ${prefix}.fence.${prov}.np4 TARGET fence NP 4 ${common})
  endforeach()
endforeach()
