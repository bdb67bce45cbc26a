# Installs the build tree into a scratch prefix, then builds and runs against
# it what clients of LCI 1.7.9 do:
#   consumer      C,   find_package(LCI) through CMAKE_PREFIX_PATH, LCI::lci
#   consumer_cxx  C++, find_package(LCI CONFIG HINTS $LCI_ROOT PATH_SUFFIXES
#                 lib/cmake lib64/cmake), LCI_VERSION/LCI_WITH_LCT_ONLY, LCI::LCI,
#                 under the environment's LCI_GENERATION=1 (reports 1.7.9)
#   consumer_lci2 C++, LCI 2 (lci.hpp): find_package(LCI 2.0), LCI::LCI, one rank
#   find_version  what find_package(LCI [version]) reports, with and without
#                 -DLCI_GENERATION=1, and the package's targets
#   the C, LCI 1.7 C++ and LCI 2 C++ programs load the same liblci
#   consumer_lct  C,   LCI::LCT alone (liblci must not be linked)
#   pkg-config    liblci and lci (C), lct (LCT alone)
#   consumer_alias C, LCI::Shared and LCI::Static (1.7.1 to 1.7.7), found
#                 through LCI_DIR=<prefix>/lib/cmake (where 1.7.9 installs
#                 LCIConfig.cmake), LCI_DIR=<prefix>/lib/cmake/LCI and
#                 CMAKE_PREFIX_PATH, and from a copy of the prefix moved
#                 elsewhere; plus lci_config.h's macros (tests/compat)
# Variables: BUILD (build tree), SRC (this folder), WORK (scratch folder), CC.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# The version switch is this script's to set (consumer_cxx, find_version).
unset(ENV{LCI_GENERATION})
set(prefix ${WORK}/prefix)

include(${CMAKE_CURRENT_LIST_DIR}/../common/run_checked.cmake)

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/lci.h include/lci_config.h include/lct.h include/lci.hpp include/lci_config.hpp
          bin/lcrun lib/liblci.so lib/liblct.so
          lib/cmake/LCI/LCIConfig.cmake lib/cmake/LCI/LCIConfigVersion.cmake
          lib/cmake/LCIConfig.cmake lib/cmake/LCIConfigVersion.cmake
          lib/pkgconfig/lci.pc lib/pkgconfig/liblci.pc lib/pkgconfig/lct.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# C, CMAKE_PREFIX_PATH, LCI::lci
run(${CMAKE_COMMAND} -S ${SRC}/consumer -B ${WORK}/consumer -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK}/consumer)
run(${prefix}/bin/lcrun -n 2 ${WORK}/consumer/consumer)

# C++, HINTS from the LCI_ROOT environment variable, LCI::LCI; the
# environment's LCI_GENERATION=1 makes the package report 1.7.9
set(ENV{LCI_ROOT} ${prefix})
set(ENV{LCI_GENERATION} 1)
run(${CMAKE_COMMAND} -S ${SRC}/consumer_cxx -B ${WORK}/consumer_cxx -DCMAKE_BUILD_RPATH=${prefix}/lib)
unset(ENV{LCI_GENERATION})
unset(ENV{LCI_ROOT})
run(${CMAKE_COMMAND} --build ${WORK}/consumer_cxx)
run(${prefix}/bin/lcrun -n 2 ${WORK}/consumer_cxx/consumer_cxx)

# LCI 2: lci.hpp, find_package(LCI 2.0), LCI::LCI, run as one rank
run(${CMAKE_COMMAND} -S ${SRC}/consumer_lci2 -B ${WORK}/consumer_lci2
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK}/consumer_lci2)
run(${WORK}/consumer_lci2/consumer_lci2)

# The version the package reports: "ask;expected" (ask "any": no version;
# expected "none": not found), then extra configure arguments.
foreach(probe IN ITEMS "1.7;1.7.9" "1.7.9;1.7.9" "2.0;2.0.0" "any;2.0.0" "3.0;none" "1.8;none"
                       "any;1.7.9;-DLCI_GENERATION=1" "2.0;none;-DLCI_GENERATION=1"
                       "1.7;1.7.9;-DLCI_GENERATION=1" "1.7;none;-DLCI_GENERATION=2")
  list(GET probe 0 ask)
  list(GET probe 1 expected)
  if(ask STREQUAL "any")
    set(ask "")
  endif()
  set(extra "")
  list(LENGTH probe n)
  if(n GREATER 2)
    list(SUBLIST probe 2 -1 extra)
  endif()
  string(MAKE_C_IDENTIFIER "find_${ask}_${expected}_${extra}" name)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/find_version -B ${WORK}/${name}
                  -DCMAKE_PREFIX_PATH=${prefix} "-DLCI_ASK=${ask}" ${extra}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "find_version: found=([01]) version=([^\n]*)")
    message(FATAL_ERROR "find_package(LCI ${ask}) ${extra}: the probe failed:\n${out}\n${err}")
  endif()
  set(found ${CMAKE_MATCH_1})
  set(version "${CMAKE_MATCH_2}")
  if(expected STREQUAL "none")
    if(found)
      message(FATAL_ERROR "find_package(LCI ${ask}) ${extra} found LCI ${version}; it must fail")
    endif()
  elseif(NOT found OR NOT version STREQUAL expected)
    message(FATAL_ERROR "find_package(LCI ${ask}) ${extra}: found=${found} version '${version}', "
                        "expected ${expected}\n${out}\n${err}")
  endif()
  message(STATUS "find_package(LCI ${ask}) ${extra}: ${expected}")
  if(ask STREQUAL "" AND extra STREQUAL "")
    foreach(t LCI::LCI LCI::lci LCI::LCT LCI::lct LCI::Shared LCI::Static)
      if(NOT out MATCHES "find_version: target ${t}\n")
        message(FATAL_ERROR "the LCI package gives no target ${t}:\n${out}")
      endif()
    endforeach()
  endif()
endforeach()

# One library for both generations: the C program, the LCI 1.7 C++ program
# and the LCI 2 C++ program load the same liblci.
set(liblci "")
foreach(program consumer/consumer consumer_cxx/consumer_cxx consumer_lci2/consumer_lci2)
  execute_process(COMMAND ldd ${WORK}/${program} OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT deps MATCHES "liblci\\.so[.0-9]* => ([^ ]+)")
    message(FATAL_ERROR "${program} does not load liblci:\n${deps}")
  endif()
  get_filename_component(lib "${CMAKE_MATCH_1}" REALPATH)
  if(liblci STREQUAL "")
    set(liblci "${lib}")
  elseif(NOT lib STREQUAL liblci)
    message(FATAL_ERROR "${program} loads ${lib}, the others ${liblci}")
  endif()
endforeach()
if(NOT liblci MATCHES "^${prefix}/lib/")
  message(FATAL_ERROR "the consumers load ${liblci}, not the installed liblci in ${prefix}/lib")
endif()
message(STATUS "C, LCI 1.7 C++ and LCI 2 C++ programs all load ${liblci}")

# LCT alone
run(${CMAKE_COMMAND} -S ${SRC}/consumer_lct -B ${WORK}/consumer_lct -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_RPATH=${prefix}/lib)
run(${CMAKE_COMMAND} --build ${WORK}/consumer_lct)
execute_process(COMMAND readelf -d ${WORK}/consumer_lct/consumer_lct OUTPUT_VARIABLE needed)
if(needed MATCHES "liblci")
  message(FATAL_ERROR "consumer_lct links liblci although it asked for LCI::LCT only:\n${needed}")
endif()
run(${WORK}/consumer_lct/consumer_lct)

# pkg-config: cc main.c $(pkg-config --cflags --libs liblci), and lci
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
foreach(module liblci lci)
  execute_process(COMMAND pkg-config --cflags --libs ${module} OUTPUT_VARIABLE flags
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config does not know ${module}")
  endif()
  execute_process(COMMAND pkg-config --modversion ${module} OUTPUT_VARIABLE version
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT version STREQUAL "1.7.9")
    message(FATAL_ERROR "pkg-config --modversion ${module} gives '${version}', expected 1.7.9")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CC} -std=c99 ${SRC}/consumer/main.c ${flags} -Wl,-rpath,${prefix}/lib
      -o ${WORK}/consumer_pc_${module})
  run(${prefix}/bin/lcrun -n 2 ${WORK}/consumer_pc_${module})
endforeach()
execute_process(COMMAND pkg-config --cflags --libs lct OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know lct")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${CC} -std=c99 ${SRC}/consumer_lct/main.c ${flags} -Wl,-rpath,${prefix}/lib
    -o ${WORK}/consumer_lct_pc)
run(${WORK}/consumer_lct_pc)

# LCI::Shared and LCI::Static, the package found three ways. Each configure
# must report the LCIConfig.cmake it was asked to use.
set(moved ${WORK}/moved-prefix)
file(COPY ${prefix}/ DESTINATION ${moved})
foreach(way IN ITEMS "lib_cmake;LCI::Shared;-DLCI_DIR=${prefix}/lib/cmake;${prefix}/lib/cmake/LCIConfig.cmake"
                     "lib_cmake_LCI;LCI::Static;-DLCI_DIR=${prefix}/lib/cmake/LCI;${prefix}/lib/cmake/LCI/LCIConfig.cmake"
                     "prefix_path;LCI::Static;-DCMAKE_PREFIX_PATH=${prefix};${prefix}/lib/cmake/LCI/LCIConfig.cmake"
                     "moved;LCI::Shared;-DLCI_DIR=${moved}/lib/cmake;${moved}/lib/cmake/LCIConfig.cmake")
  list(GET way 0 name)
  list(GET way 1 target)
  list(GET way 2 how)
  list(GET way 3 config)
  set(dir ${WORK}/consumer_alias_${name})
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/consumer_alias -B ${dir} ${how}
                  -DLCI_TARGET=${target} -DCMAKE_BUILD_RPATH=${prefix}/lib
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer_alias (${target}, ${how}) does not configure:\n${out}\n${err}")
  endif()
  if(NOT out MATCHES "found LCI 1\\.7\\.9 through ([^,]*), library ([^\n]*)")
    message(FATAL_ERROR "consumer_alias (${how}): no 'found LCI' line:\n${out}")
  endif()
  set(found_config "${CMAKE_MATCH_1}")
  set(found_library "${CMAKE_MATCH_2}")
  if(NOT found_config STREQUAL config)
    message(FATAL_ERROR "consumer_alias (${how}) used ${found_config}, expected ${config}")
  endif()
  if(name STREQUAL "moved" AND NOT found_library MATCHES "^${moved}/")
    message(FATAL_ERROR "the moved package points at ${found_library}, outside ${moved}")
  endif()
  message(STATUS "consumer_alias: ${target} through ${how}: ${found_config}")
  run(${CMAKE_COMMAND} --build ${dir})
  run(${prefix}/bin/lcrun -n 2 ${dir}/consumer_alias)
  run(${dir}/config_macros)
endforeach()
