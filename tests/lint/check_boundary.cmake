# Checks the boundary of the C API (lci/util/log.hpp, "The boundary of the C
# API"): every function that lci.h, lct.h and the test hooks' header declare
# is defined exactly once, in lci/api/, lci/core/test_hooks.cpp or lct/, as
#   <result> <name>(<parameters>) noexcept try {
# and each of those files ends as many bodies with "} catch (...) {" as it
# has such definitions. A hot entry point may instead be
#   // boundary: tail call
#   <result> <name>(<parameters>) noexcept {
# when it only checks its arguments and returns the result of a noexcept
# function that holds the handler (lci/core/eager.hpp, send_eager_entry):
# a handler of its own would rule out the tail call.
#
#   cmake -DROOT=<dir holding lci/ and lct/> -P check_boundary.cmake
# Prints one line per function that breaks the rule and fails if any does.
if(NOT ROOT)
  message(FATAL_ERROR "check_boundary: give -DROOT=<directory that holds lci/ and lct/>")
endif()

# The first line of a declaration or definition at column 0: a result type,
# then a name of the C API and its opening parenthesis.
set(head "\n(LCI_API |LCT_API )?[A-Za-z_][A-Za-z0-9_ *]* \\*?(LCI|LCIX|LCT|LCIT)_[A-Za-z0-9_]+\\(")

set(declared "")
foreach(h lci/api/lci.h lct/api/lct.h tests/common/test_hooks.h)
  if(NOT EXISTS "${ROOT}/${h}")
    continue()
  endif()
  file(READ "${ROOT}/${h}" text)
  string(REGEX MATCHALL "${head}" decls "${text}")
  foreach(d IN LISTS decls)
    string(REGEX MATCH "[A-Z]+_[A-Za-z0-9_]+\\($" name "${d}")
    string(REPLACE "(" "" name "${name}")
    list(APPEND declared ${name})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES declared)

file(GLOB sources "${ROOT}/lci/api/*.cpp" "${ROOT}/lct/*.cpp")
if(EXISTS "${ROOT}/lci/core/test_hooks.cpp")
  list(APPEND sources "${ROOT}/lci/core/test_hooks.cpp")
endif()
set(bad 0)
set(all_tails 0)
foreach(src IN LISTS sources)
  file(RELATIVE_PATH rel "${ROOT}" "${src}")
  file(READ "${src}" text)
  # Definitions: the head up to the body's brace (no ';' on the way).
  string(REGEX MATCHALL "${head}[^;{]*\\{" defs "${text}")
  set(guarded 0)
  set(tails 0)
  foreach(d IN LISTS defs)
    string(REGEX MATCH "[A-Z]+_[A-Za-z0-9_]+\\(" name "${d}")
    string(REPLACE "(" "" name "${name}")
    list(FIND declared ${name} known)
    if(known EQUAL -1)
      continue()  # not a function of the headers
    endif()
    list(APPEND defined_${name} ${rel})
    string(FIND "${text}" "\n// boundary: tail call${d}" tail)
    if(d MATCHES "\\) noexcept try \\{$")
      math(EXPR guarded "${guarded} + 1")
    elseif(d MATCHES "\\) noexcept \\{$" AND tail GREATER -1)
      math(EXPR tails "${tails} + 1")
    else()
      message("${rel}: ${name} is not defined as \"${name}(...) noexcept try {\"")
      math(EXPR bad "${bad} + 1")
    endif()
  endforeach()
  math(EXPR all_tails "${all_tails} + ${tails}")
  string(REGEX MATCHALL "\n} catch \\(\\.\\.\\.\\) {\n" handlers "${text}")
  list(LENGTH handlers nhandlers)
  if(NOT nhandlers EQUAL guarded)
    message("${rel}: ${guarded} guarded definitions but ${nhandlers} \"} catch (...) {\" handlers")
    math(EXPR bad "${bad} + 1")
  endif()
endforeach()

set(checked 0)
foreach(name IN LISTS declared)
  list(LENGTH defined_${name} n)
  if(n EQUAL 0)
    message("${name}: declared, defined nowhere in lci/api/, lci/core/test_hooks.cpp or lct/")
    math(EXPR bad "${bad} + 1")
  elseif(n GREATER 1)
    message("${name}: defined ${n} times (${defined_${name}})")
    math(EXPR bad "${bad} + 1")
  else()
    math(EXPR checked "${checked} + 1")
  endif()
endforeach()

if(bad GREATER 0)
  message(FATAL_ERROR "check_boundary: ${bad} violations")
endif()
message("check_boundary: ${checked} functions of the C API end in the boundary (${all_tails} in a tail call to one)")
