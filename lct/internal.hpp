// Private to liblct: helpers the groups share. Not installed; every symbol
// here has hidden visibility (the target's default), only LCT_API names
// leave the library.
#pragma once

#include <cstdarg>
#include <string>

namespace lct::detail {

// Prints "LCT <who>: <message>" (printf-style) on stderr and aborts.
[[noreturn]] void fatal(const char* who, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// The handler of every function of lct.h (see lci/util/log.hpp, "The
// boundary of the C API"): prints "LCT <who>: C++ exception: <what()>" on
// stderr and aborts. Call only from inside a catch clause.
[[noreturn, gnu::cold]] void fatal_exception(const char* who) noexcept;

// printf into a std::string.
std::string vformat(const char* format, va_list args);
std::string format(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace lct::detail
