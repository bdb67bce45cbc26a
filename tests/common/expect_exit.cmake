# cmake -DPROG=... [-DARGS=a,b] -DENV=A=1,B=2 -DEXPECT_RC=N -DEXPECT=regex [-DEXPECT2=regex]
#       -P expect_exit.cmake
# Runs PROG (with the arguments of ARGS) with the variables of ENV (comma-separated) added to the
# environment and checks that it exits with status EXPECT_RC (a number: a
# death by a signal, which execute_process reports as text, fails) and that
# its standard error and output match EXPECT (and EXPECT2).
string(REPLACE "," ";" vars "${ENV}")
string(REPLACE "," ";" args "${ARGS}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${vars} ${PROG} ${args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
set(all "${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "${PROG} with ${ENV}: status '${rc}', expected ${EXPECT_RC}\n${all}")
endif()
foreach(re IN ITEMS "${EXPECT}" "${EXPECT2}")
  if(re AND NOT all MATCHES "${re}")
    message(FATAL_ERROR "${PROG} with ${ENV}: the output does not match '${re}'\n${all}")
  endif()
endforeach()
message(STATUS "${PROG} with ${ENV}: status ${rc} as expected\n${all}")
