# Checks that every LCI_* or LCT_* environment variable the sources read is a
# row of the table of settings (lci/core/settings.def), so that it is parsed
# once, printed by LCIX_config_print and lci_info, and documented in
# docs/configuration.md.
#
# A read is a call of a function whose name contains "env" (getenv,
# secure_getenv, the bootstrap's env_set, ...; not setenv, unsetenv, putenv)
# with a literal "LCI_..." or "LCT_..." name, anywhere under lci/, lct/ and
# tools/; and each name LCT's log contexts read (lct/log.cpp: the context's
# name, upper-cased, followed by each suffix passed to setting()), for each
# context the sources allocate with a literal name. The table's own reads
# (env(e.name) in config.cpp) take their names from the table.
#
#   cmake -DROOT=<dir holding lci/> -P check_settings.cmake
# Prints one line per read of an undeclared name and fails if there is any.
cmake_minimum_required(VERSION 3.20)
if(NOT ROOT)
  message(FATAL_ERROR "check_settings: give -DROOT=<directory that holds lci/>")
endif()

# Read but not settings of LCI's table, each with its reason.
set(allowed
  # LCT's own log context "lct" (LCT_init), read by LCT_log_ctx_alloc as
  # documented in lct.h: LCT's API, not a setting of LCI.
  LCT_LOG_LEVEL LCT_LOG_OUTFILE LCT_LOG_WHITELIST LCT_LOG_BLACKLIST
  # LCT's performance counters (lct/pcounter.cpp, read when a pcounter
  # context is made, as LCI 1.7.9's LCT does): LCT's API, listed in
  # docs/configuration.md under "LCT's own variables".
  LCT_PCOUNTER_MODE LCT_PCOUNTER_AUTO_DUMP LCT_PCOUNTER_RECORD_INTERVAL
  LCT_PCOUNTER_DUMP_ON_THE_FLY)

set(table_file "${ROOT}/lci/core/settings.def")
if(NOT EXISTS "${table_file}")
  message(FATAL_ERROR "check_settings: no table at ${table_file}")
endif()
file(READ "${table_file}" table_text)
string(REGEX MATCHALL "LCI_SETTING(_ALIAS)?\\([ \t\n]*LC[IT]_[A-Z0-9_]+" rows "${table_text}")
set(declared "")
foreach(row IN LISTS rows)
  string(REGEX REPLACE ".*\\([ \t\n]*" "" name "${row}")
  list(APPEND declared ${name})
endforeach()
list(LENGTH declared n_declared)
if(n_declared EQUAL 0)
  message(FATAL_ERROR "check_settings: ${table_file} declares no setting")
endif()

file(GLOB_RECURSE sources RELATIVE "${ROOT}"
  "${ROOT}/lci/*.cpp" "${ROOT}/lci/*.hpp" "${ROOT}/lci/*.h" "${ROOT}/lci/*.c"
  "${ROOT}/lct/*.cpp" "${ROOT}/lct/*.hpp" "${ROOT}/lct/*.h" "${ROOT}/lct/*.c"
  "${ROOT}/tools/*.cpp" "${ROOT}/tools/*.hpp" "${ROOT}/tools/*.h" "${ROOT}/tools/*.c")

set(reads "")       # "file|NAME" for each read
set(log_suffixes "")
set(log_contexts "")
foreach(src IN LISTS sources)
  file(READ "${ROOT}/${src}" text)
  string(REGEX MATCHALL "[A-Za-z_]*env[A-Za-z_]*\\([ \t\n]*\"LC[IT]_[A-Z0-9_]*\"" calls "${text}")
  foreach(call IN LISTS calls)
    string(REGEX MATCH "^[A-Za-z_]*" fn "${call}")
    if(fn MATCHES "^(setenv|unsetenv|putenv)$")
      continue()
    endif()
    string(REGEX MATCH "LC[IT]_[A-Z0-9_]*" name "${call}")
    list(APPEND reads "${src}|${name}")
  endforeach()
  if(src STREQUAL "lct/log.cpp")
    string(REGEX MATCHALL "setting\\([^;]*\"_[A-Z_]+\"\\)" found "${text}")
    foreach(f IN LISTS found)
      string(REGEX MATCH "\"_[A-Z_]+\"" suffix "${f}")
      string(REPLACE "\"" "" suffix "${suffix}")
      list(APPEND log_suffixes ${suffix})
    endforeach()
  endif()
  string(REGEX MATCHALL "LCT_log_ctx_alloc\\([^\";]*\"[A-Za-z0-9_]+\"" allocs "${text}")
  foreach(a IN LISTS allocs)
    string(REGEX MATCH "\"[A-Za-z0-9_]+\"$" ctx "${a}")
    string(REPLACE "\"" "" ctx "${ctx}")
    string(TOUPPER "${ctx}" ctx)
    list(APPEND log_contexts "${src}|${ctx}")
  endforeach()
endforeach()
foreach(c IN LISTS log_contexts)
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 src)
  list(GET parts 1 ctx)
  foreach(suffix IN LISTS log_suffixes)
    list(APPEND reads "${src}|${ctx}${suffix}")
  endforeach()
endforeach()

set(bad 0)
set(names "")
foreach(r IN LISTS reads)
  string(REPLACE "|" ";" parts "${r}")
  list(GET parts 0 src)
  list(GET parts 1 name)
  list(APPEND names ${name})
  if(name IN_LIST declared OR name IN_LIST allowed)
    continue()
  endif()
  message("${src}: reads ${name}, which has no row in lci/core/settings.def")
  math(EXPR bad "${bad} + 1")
endforeach()
list(LENGTH reads n_reads)
list(REMOVE_DUPLICATES names)
list(LENGTH names n_names)
if(bad GREATER 0)
  message(FATAL_ERROR "check_settings: ${bad} read(s) of undeclared variables; add a row to "
                      "lci/core/settings.def (or, for a variable that is not a setting, to the "
                      "allow-list of tests/lint/check_settings.cmake, with its reason)")
endif()
message("check_settings: ${n_reads} reads of ${n_names} variables, each a row of the table "
        "(${n_declared} rows) or allowed")
