# Installs the build tree into a fresh prefix, then builds and runs a
# consumer through find_package(LCI) and one through pkg-config.
# Variables: BUILD (build tree), SRC (this folder), WORK (scratch folder), CC.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(prefix ${WORK}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/lci.h include/lci_config.h bin/lcrun lib/liblci.so
          lib/cmake/LCI/LCIConfig.cmake lib/pkgconfig/lci.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# find_package(LCI), target LCI::lci
run(${CMAKE_COMMAND} -S ${SRC}/consumer -B ${WORK}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK}/consumer)
run(${prefix}/bin/lcrun -n 2 ${WORK}/consumer/consumer)

# pkg-config: cc main.c $(pkg-config --cflags --libs lci)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs lci OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know lci")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${CC} -std=c99 ${SRC}/consumer/main.c ${flags} -Wl,-rpath,${prefix}/lib -o ${WORK}/consumer_pc)
run(${prefix}/bin/lcrun -n 2 ${WORK}/consumer_pc)
