// Strings (replace, dictionary search, LCT_parse_arg), LCT_read_file,
// thread ids and the argument parser (flags, required and optional
// values, dictionaries, print, errors).
#include <doctest/doctest.h>

#include <getopt.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "child.hpp"
#include "lct.h"

namespace {

LCT_dict_str_int_t colors[] = {{"red", 1}, {"green", 2}, {"blue", 4}};

std::string take(const char* s) {
  std::string out = s != nullptr ? s : "<null>";
  std::free(const_cast<char*>(s));
  return out;
}

}  // namespace

TEST_CASE("str_replace_one and str_replace_all") {
  CHECK(take(LCT_str_replace_one("a-b-c", "-", "+")) == "a+b-c");
  CHECK(take(LCT_str_replace_all("a-b-c", "-", "+")) == "a+b+c");
  CHECK(take(LCT_str_replace_all("hostname_%", "%", "12")) == "hostname_12");
  CHECK(take(LCT_str_replace_all("aaaa", "aa", "b")) == "bb");
  CHECK(take(LCT_str_replace_all("abc", "x", "y")) == "abc");
  CHECK(take(LCT_str_replace_all("abc", "", "y")) == "abc");
  CHECK(take(LCT_str_replace_all("abcabc", "bc", "")) == "aa");
  CHECK(take(LCT_str_replace_one("x", "x", "longer")) == "longer");
}

TEST_CASE("str_int_search and parse_arg") {
  int v = -1;
  CHECK(LCT_str_int_search(colors, 3, "green", 9, &v) == 1);
  CHECK(v == 2);
  CHECK(LCT_str_int_search(colors, 3, "blue", 9, &v) == 1);
  CHECK(v == 4);
  // 1.7.9: keys are exact (case-sensitive), and a NULL key finds a NULL entry.
  CHECK(LCT_str_int_search(colors, 3, "BLUE", 9, &v) == 0);
  CHECK(v == 9);
  LCT_dict_str_int_t with_null[] = {{"a", 1}, {nullptr, 7}};
  CHECK(LCT_str_int_search(with_null, 2, nullptr, 9, &v) == 1);
  CHECK(v == 7);
  CHECK(LCT_str_int_search(colors, 3, "pink", 9, &v) == 0);
  CHECK(v == 9);
  CHECK(LCT_parse_arg(colors, 3, "red", ",") == 1u);
  CHECK(LCT_parse_arg(colors, 3, "red,blue", ",") == 5u);
  CHECK(LCT_parse_arg(colors, 3, "red;green|blue", ";|") == 7u);
  CHECK(LCT_parse_arg(colors, 3, " green , green ", ",") == 2u);
  CHECK(LCT_parse_arg(colors, 3, "", ",") == 0u);
  child_result r = run_in_child([] { std::printf("=%llu\n", (unsigned long long)LCT_parse_arg(colors, 3, "red,pink", ",")); });
  CHECK(r.exited_with(0));
  CHECK(r.has("=1\n"));
  CHECK(r.has("unknown key 'pink'"));
}

TEST_CASE("read_file") {
  const std::string path = "/tmp/lct_read_file_" + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("0123456789", f);
  std::fclose(f);
  char buf[64];
  std::memset(buf, 'z', sizeof buf);
  CHECK(LCT_read_file(buf, sizeof buf, "/tmp/lct_read_file_%d", static_cast<int>(getpid())) == 10);
  CHECK(std::string(buf) == "0123456789");
  CHECK(LCT_read_file(buf, 5, "%s", path.c_str()) == 4);
  CHECK(std::string(buf) == "0123");
  CHECK(LCT_read_file(buf, 1, "%s", path.c_str()) == 0);
  CHECK(buf[0] == '\0');
  errno = 0;
  CHECK(LCT_read_file(buf, sizeof buf, "%s.missing", path.c_str()) == -1);
  CHECK(errno == ENOENT);
  std::remove(path.c_str());
}

TEST_CASE("thread ids are dense and stable") {
  const int mine = LCT_get_thread_id();
  CHECK(LCT_get_thread_id() == mine);
  const int before = LCT_get_nthreads();
  CHECK(before >= 1);
  constexpr int n = 8;
  std::vector<int> ids(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      ids[i] = LCT_get_thread_id();
      if (LCT_get_thread_id() != ids[i]) ids[i] = -1;
    });
  for (auto& t : threads) t.join();
  std::set<int> distinct(ids.begin(), ids.end());
  CHECK(distinct.size() == n);
  CHECK(*distinct.begin() == before);
  CHECK(*distinct.rbegin() == before + n - 1);
  CHECK(LCT_get_nthreads() == before + n);
}

TEST_CASE("args parser: flags, values, dictionaries, print") {
  child_result r = run_in_child([] {
    int size = 8, verbose = 0, level = 3, color = 0, mask = 0, untouched = 77;
    LCT_args_parser_t p = LCT_args_parser_alloc();
    LCT_args_parser_add(p, "size", required_argument, &size);
    LCT_args_parser_add(p, "verbose", no_argument, &verbose);
    LCT_args_parser_add(p, "level", optional_argument, &level);
    LCT_args_parser_add_dict(p, "color", required_argument, &color, colors, 3);
    LCT_args_parser_add_dict(p, "mask", required_argument, &mask, colors, 3);
    LCT_args_parser_add(p, "untouched", required_argument, &untouched);
    const char* args[] = {"prog", "--size", "0x40", "input.txt", "--verbose", "--level",
                          "--color=blue", "--mask", "red,green", nullptr};
    std::vector<char*> argv;
    for (const char* a : args) argv.push_back(const_cast<char*>(a));
    LCT_args_parser_parse(p, 9, argv.data());
    std::printf("values %d %d %d %d %d %d\n", size, verbose, level, color, mask, untouched);
    std::printf("argv3 %s\n", argv[3]);
    LCT_args_parser_print(p, false);
    LCT_args_parser_print(p, true);
    // A second parse works (getopt state reset), --level=5 sets it.
    const char* again[] = {"prog", "--level=5", nullptr};
    std::vector<char*> argv2;
    for (const char* a : again) argv2.push_back(const_cast<char*>(a));
    LCT_args_parser_parse(p, 2, argv2.data());
    std::printf("level %d\n", level);
    LCT_args_parser_free(p);
  });
  CHECK(r.exited_with(0));
  CHECK(r.has("values 64 1 1 4 3 77\n"));
  CHECK(r.has("argv3 input.txt\n"));
  CHECK(r.has("args: --size 64 --verbose 1 --level 1 --color blue --mask 3 --untouched 77\n"));
  CHECK(r.has("--color blue (4) [required argument]\n"));
  CHECK(r.has("--verbose 1 [flag]\n"));
  CHECK(r.has("--level 1 [optional argument]\n"));
  CHECK(r.has("level 5\n"));
}

TEST_CASE("args parser errors exit(1) with a message") {
  struct bad_case {
    std::vector<const char*> args;
    const char* message;
  };
  const bad_case cases[] = {
      {{"prog", "--nosuch", "1"}, "unknown option '--nosuch'"},
      {{"prog", "--size"}, "option '--size' needs a value"},
      {{"prog", "--size", "ten"}, "option --size: 'ten' is not an integer"},
      {{"prog", "--color", "pink"}, "option --color: 'pink' is not one of: red, green, blue"},
      {{"prog", "--flag=1"}, "option '--flag=1' takes no value"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.message);
    child_result r = run_in_child([&c] {
      int size = 0, color = 0, flag = 0;
      LCT_args_parser_t p = LCT_args_parser_alloc();
      LCT_args_parser_add(p, "size", required_argument, &size);
      LCT_args_parser_add(p, "flag", no_argument, &flag);
      LCT_args_parser_add_dict(p, "color", required_argument, &color, colors, 3);
      std::vector<char*> argv;
      for (const char* a : c.args) argv.push_back(const_cast<char*>(a));
      argv.push_back(nullptr);
      LCT_args_parser_parse(p, static_cast<int>(c.args.size()), argv.data());
      std::printf("parsed without error\n");
    });
    CHECK(r.exited_with(1));
    CHECK(r.has(c.message));
    CHECK_FALSE(r.has("parsed without error"));
  }
}
