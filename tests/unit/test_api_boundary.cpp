// Unit tests of the boundary of the C API (lci/util/log.hpp): every function
// of lci.h and lct.h is noexcept in C++, and a C++ exception raised inside
// one comes out as LCI_ERR_FATAL and one line naming the call, or, where
// the result has no room for an error, as that line and an abort. The
// exceptions are real ones: a queue too large for any memory makes the size
// of its ring overflow, and operator new[] throws std::bad_array_new_length.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "lci.h"
#include "lci/util/log.hpp"

// The declarations say so, for C++ callers (and a definition that is not
// noexcept would not compile against them).
static_assert(noexcept(LCI_progress(nullptr)), "LCI_progress is noexcept in C++");
static_assert(noexcept(LCIX_config_print(nullptr)), "LCIX_config_print is noexcept in C++");
static_assert(noexcept(LCT_now()), "LCT_now is noexcept in C++");
static_assert(noexcept(LCT_queue_pop(nullptr)), "LCT_queue_pop is noexcept in C++");

namespace {

// 2^62 entries: more bytes than a size_t counts, whatever the entry's size.
constexpr size_t k_too_many = size_t(1) << 62;

// Runs f() with stderr going to a temporary file; returns what it wrote.
template <class F>
std::string capture_stderr(F f) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  const int saved = dup(2);
  REQUIRE(saved >= 0);
  REQUIRE(dup2(fileno(tmp), 2) == 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::string text;
  std::rewind(tmp);
  char buf[512];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, tmp)) > 0) text.append(buf, n);
  std::fclose(tmp);
  return text;
}

// Runs f() in a child process; returns the child's stderr and stores the
// signal that ended it (0 if it exited).
template <class F>
std::string run_in_child(F f, int* signal) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);  // doctest's crash handler would catch the abort
    dup2(fds[1], 2);
    close(fds[0]);
    f();
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  *signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return text;
}

}  // namespace

TEST_CASE("an exception inside an LCI_error_t call returns LCI_ERR_FATAL and names the call") {
  auto* const untouched = reinterpret_cast<LCI_comp_t>(uintptr_t(0x1234));
  LCI_comp_t cq = untouched;
  LCI_error_t rc = LCI_OK;
  const std::string err =
      capture_stderr([&] { rc = LCI_queue_createx(nullptr, k_too_many, &cq); });
  CHECK(rc == LCI_ERR_FATAL);
  CHECK(cq == untouched);
  INFO("stderr: ", err);
  CHECK(err.find("error: LCI_queue_createx: C++ exception: std::bad_array_new_length\n") !=
        std::string::npos);
  // One line.
  CHECK(err.find('\n') == err.size() - 1);
}

TEST_CASE("a queue length whose rounding would overflow returns LCI_ERR_FATAL, never loops") {
  LCI_comp_t cq = nullptr;
  LCI_error_t rc = LCI_OK;
  const std::string err = capture_stderr([&] { rc = LCI_queue_createx(nullptr, SIZE_MAX, &cq); });
  CHECK(rc == LCI_ERR_FATAL);
  CHECK(cq == nullptr);
  INFO("stderr: ", err);
  CHECK(err.find("error: LCI_queue_createx: C++ exception: queue length 18446744073709551615 "
                 "exceeds the largest queue") != std::string::npos);
}

TEST_CASE("an exception inside an LCT call without an error result ends the process naming it") {
  int signal = 0;
  const std::string err = run_in_child(
      [] { LCT_queue_alloc(LCT_QUEUE_ARRAY_ATOMIC_FAA, k_too_many); }, &signal);
  CHECK(signal == SIGABRT);
  INFO("stderr: ", err);
  CHECK(err.find("LCT LCT_queue_alloc: C++ exception: std::bad_array_new_length\n") !=
        std::string::npos);
}

TEST_CASE("the handler's text: what() of a std::exception, a fixed text for anything else") {
  std::string text;
  try {
    throw std::runtime_error("ring overflow");
  } catch (...) {
    text = lci::exception_text();
  }
  CHECK(text == "ring overflow");
  try {
    throw 42;
  } catch (...) {
    text = lci::exception_text();
  }
  CHECK(text == "not a std::exception");
  int signal = 0;
  const std::string err = run_in_child(
      [] {
        try {
          throw std::length_error("too long");
        } catch (...) {
          lci::fatal_exception("LCIX_transport_of");
        }
      },
      &signal);
  CHECK(signal == SIGABRT);
  INFO("stderr: ", err);
  CHECK(err.find("error: LCIX_transport_of: C++ exception: too long\n") != std::string::npos);
}
