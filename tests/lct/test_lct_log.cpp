// Log contexts: level from <CTX>_LOG_LEVEL, file output, tag filters, the
// default context of LCT_init, and LCT_Assert's report and abort. Each case
// runs in a forked child so that environment changes and aborts stay there.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "child.hpp"
#include "lct.h"

namespace {

const char* const levels[] = {"error", "warn", "diag", "info", "debug", "trace"};

std::string temp_path(const char* tag) {
  return std::string("/tmp/lct_log_test_") + tag + "_" + std::to_string(getpid());
}

std::string read_all(const std::string& path) {
  char buf[8192];
  ssize_t n = LCT_read_file(buf, sizeof buf, "%s", path.c_str());
  return n < 0 ? std::string("<unreadable>") : std::string(buf, static_cast<size_t>(n));
}

}  // namespace

TEST_CASE("level from the context's environment variable") {
  child_result r = run_in_child([] {
    setenv("MYLIB_LOG_LEVEL", "info", 1);
    LCT_log_ctx_t ctx =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_WARN, "mylib", nullptr, nullptr, nullptr, nullptr);
    if (LCT_log_get_level(ctx) != LCT_LOG_INFO) _exit(3);
    LCT_Log(ctx, LCT_LOG_INFO, "net", "visible info %d\n", 42);
    LCT_Log(ctx, LCT_LOG_DEBUG, "net", "hidden debug %d", 43);
    LCT_Warn(ctx, "a warning");
    LCT_log_ctx_free(&ctx);
    if (ctx != nullptr) _exit(4);
  });
  CHECK(r.exited_with(0));
  // 1.7.9's line: rank:host:pid:thread:file:func:line<ctx:level:tag> message
  CHECK(r.has("<mylib:info:net> visible info 42\n"));
  CHECK_FALSE(r.has("hidden debug"));
  CHECK(r.has("<mylib:warn:warn> a warning\n"));
  CHECK(r.has("test_lct_log.cpp:"));
  // one line per message
  size_t lines = 0;
  for (char c : r.output) lines += c == '\n';
  CHECK(lines == 2);
}

TEST_CASE("numeric level and default without the variable") {
  child_result r = run_in_child([] {
    setenv("NUMLIB_LOG_LEVEL", "5", 1);
    LCT_log_ctx_t a =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_WARN, "numlib", nullptr, nullptr, nullptr, nullptr);
    unsetenv("OTHERLIB_LOG_LEVEL");
    LCT_log_ctx_t b =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_DIAG, "otherlib", nullptr, nullptr, nullptr, nullptr);
    char explicit_level[] = "ERROR";
    LCT_log_ctx_t c = LCT_log_ctx_alloc(levels, 6, LCT_LOG_WARN, "numlib", nullptr,
                                        explicit_level, nullptr, nullptr);
    std::printf("levels %d %d %d\n", LCT_log_get_level(a), LCT_log_get_level(b),
                LCT_log_get_level(c));
    LCT_log_ctx_free(&a);
    LCT_log_ctx_free(&b);
    LCT_log_ctx_free(&c);
  });
  CHECK(r.exited_with(0));
  CHECK(r.has("levels 5 2 0"));
}

TEST_CASE("an unknown level warns and keeps the default") {
  child_result r = run_in_child([] {
    setenv("BADLIB_LOG_LEVEL", "loud", 1);
    LCT_log_ctx_t a =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_WARN, "badlib", nullptr, nullptr, nullptr, nullptr);
    std::printf("level %d\n", LCT_log_get_level(a));
    LCT_log_ctx_free(&a);
  });
  CHECK(r.exited_with(0));
  CHECK(r.has("unknown log level 'loud'"));
  CHECK(r.has("level 1\n"));
}

TEST_CASE("file output with the rank in its name, and tag filters") {
  const std::string pattern = temp_path("out") + "_%.log";
  const std::string expected = temp_path("out") + "_7.log";
  std::remove(expected.c_str());
  child_result r = run_in_child([pattern] {
    setenv("FILELIB_LOG_OUTFILE", pattern.c_str(), 1);
    setenv("FILELIB_LOG_LEVEL", "debug", 1);
    setenv("FILELIB_LOG_BLACKLIST", "noisy, chatty", 1);
    LCT_set_rank(7);
    LCT_log_ctx_t ctx =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_WARN, "filelib", nullptr, nullptr, nullptr, nullptr);
    LCT_Log(ctx, LCT_LOG_DEBUG, "mem", "kept line");
    LCT_Log(ctx, LCT_LOG_DEBUG, "noisy", "dropped line");
    LCT_Log(ctx, LCT_LOG_DEBUG, "chatty", "dropped too");
    LCT_Log_flush(ctx);
    LCT_log_ctx_free(&ctx);
  });
  CHECK(r.exited_with(0));
  CHECK_FALSE(r.has("kept line"));  // not on stderr
  const std::string text = read_all(expected);
  CHECK(text.rfind("7:", 0) == 0);
  CHECK(text.find("<filelib:debug:mem> kept line") != std::string::npos);
  CHECK(text.find("dropped") == std::string::npos);
  std::remove(expected.c_str());

  child_result w = run_in_child([] {
    char white[] = "keep";
    char out[] = "stdout";
    LCT_log_ctx_t ctx =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_INFO, "wl", out, nullptr, white, nullptr);
    LCT_Log(ctx, LCT_LOG_INFO, "keep", "whitelisted");
    LCT_Log(ctx, LCT_LOG_INFO, "other", "not whitelisted");
    LCT_log_ctx_free(&ctx);
  });
  CHECK(w.exited_with(0));
  CHECK(w.has("whitelisted"));
  CHECK_FALSE(w.has("not whitelisted"));
}

TEST_CASE("the default context reads LCT_LOG_LEVEL") {
  child_result r = run_in_child([] {
    setenv("LCT_LOG_LEVEL", "trace", 1);
    LCT_init();
    LCT_set_rank(3);
    if (LCT_get_rank() != 3) _exit(5);
    LCT_Log(LCT_log_ctx_default, LCT_LOG_TRACE, "t", "trace from default");
    LCT_fina();
    if (LCT_log_ctx_default != nullptr) _exit(6);
  });
  CHECK(r.exited_with(0));
  CHECK(r.has("<lct:trace:t> trace from default"));
  CHECK(r.output.rfind("3:", 0) == 0);
}

TEST_CASE("a false LCT_Assert reports and aborts") {
  child_result r = run_in_child([] {
    LCT_init();
    int x = 2;
    LCT_Assert(LCT_log_ctx_default, x == 3, "x is %d", x);
    _exit(0);  // not reached
  });
  CHECK(r.killed_by(SIGABRT));
  CHECK(r.has("<lct:Assert failed: x == 3> x is 2"));
  CHECK(r.has("test_lct_log.cpp:"));
  CHECK(r.has("x is 2"));
  CHECK(r.has("operator()"));  // the function of the assert

  child_result ok = run_in_child([] {
    LCT_init();
    LCT_Assert(LCT_log_ctx_default, 1 + 1 == 2, "never");
    int a[32];
    LCT_ASSERT_SAME_CACHE_LINE(&a[0], &a[0]);
    LCT_fina();
  });
  CHECK(ok.exited_with(0));
  CHECK(ok.output.empty());

  child_result line = run_in_child([] {
    LCT_init();
    alignas(64) char buf[128];
    LCT_ASSERT_SAME_CACHE_LINE(&buf[0], &buf[64]);
  });
  CHECK(line.killed_by(SIGABRT));
  CHECK(line.has("not in the same cache line"));
}

TEST_CASE("tag filters match substrings of the list, as 1.7.9's strstr") {
  child_result w = run_in_child([] {
    char white[] = "send,recv";
    char black[] = "recv_ack";
    char out[] = "stdout";
    LCT_log_ctx_t ctx =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_INFO, "ss", out, nullptr, white, black);
    LCT_Log(ctx, LCT_LOG_INFO, "send", "line-send");
    LCT_Log(ctx, LCT_LOG_INFO, "recv", "line-recv");  // in the whitelist, and in "recv_ack"
    LCT_Log(ctx, LCT_LOG_INFO, "end", "line-end");    // a substring of "send"
    LCT_Log(ctx, LCT_LOG_INFO, "put", "line-put");
    LCT_log_ctx_free(&ctx);
  });
  CHECK(w.exited_with(0));
  CHECK(w.has("line-send"));
  CHECK_FALSE(w.has("line-recv"));
  CHECK(w.has("line-end"));
  CHECK_FALSE(w.has("line-put"));
}

TEST_CASE("a log file is appended to") {
  const std::string path = temp_path("append");
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("earlier\n", f);
    std::fclose(f);
  }
  child_result r = run_in_child([path] {
    std::string p = path;
    LCT_log_ctx_t ctx =
        LCT_log_ctx_alloc(levels, 6, LCT_LOG_WARN, "ap", &p[0], nullptr, nullptr, nullptr);
    LCT_Warn(ctx, "later");
    LCT_log_ctx_free(&ctx);
  });
  CHECK(r.exited_with(0));
  const std::string text = read_all(path);
  CHECK(text.rfind("earlier\n", 0) == 0);
  CHECK(text.find("later\n") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("a NULL context warns and does nothing, as in 1.7.9") {
  child_result r = run_in_child([] {
    LCT_Log(nullptr, LCT_LOG_ERROR, "t", "lost message");
    if (LCT_log_get_level(nullptr) != 0) _exit(3);
    LCT_Assert(nullptr, 1 == 2, "assert on a NULL context");
    LCT_log_ctx_t none = nullptr;
    LCT_log_ctx_free(&none);
    LCT_init();
    LCT_Log_flush(nullptr);
    LCT_fina();
  });
  CHECK(r.exited_with(0));
  CHECK_FALSE(r.has("lost message"));
  CHECK(r.has("LCT_Logv_: LCT_log_ctx_default is invalid!"));
  CHECK(r.has("LCT_log_get_level: LCT_log_ctx_default is invalid!"));
  CHECK(r.has("LCT_Report_false_assert: LCT_log_ctx_default is invalid!"));
  CHECK(r.has("LCT_log_ctx_free: LCT_log_ctx_default is invalid!"));
  CHECK(r.has("<lct:warn:warn> LCT_Log_flush: Invalid log context!"));
}
