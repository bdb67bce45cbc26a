// lcrun's command line (tools/lcrun/options.hpp): the shell-like splitting
// of --prefix, its placeholders, and parse_options on good and bad
// arguments with the exact messages and statuses lcrun exits with.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "tests/unit/lcrun_test_text.hpp"
#include "tools/lcrun/options.hpp"

namespace lcrun = lci::lcrun;
using words = std::vector<std::string>;

namespace {

words split(const std::string& text) {
  words w;
  std::string why;
  REQUIRE(lcrun::split_words(text, w, why));
  CHECK(why.empty());
  return w;
}

std::string split_error(const std::string& text) {
  words w;
  std::string why;
  CHECK_FALSE(lcrun::split_words(text, w, why));
  return why;
}

// parse_options on "lcrun args...", with LCRUN_TIMEOUT set to timeout (or
// unset for nullptr); what it prints is kept in out and err.
struct parsed {
  int status = 0;
  lcrun::options opts;
  std::string out, err;
};

parsed parse(std::initializer_list<const char*> args, const char* timeout = nullptr) {
  std::vector<std::string> storage{"lcrun"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (timeout != nullptr)
    ::setenv("LCRUN_TIMEOUT", timeout, 1);
  else
    ::unsetenv("LCRUN_TIMEOUT");
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  parsed p;
  p.status = lcrun::parse_options(static_cast<int>(storage.size()), argv.data(), p.opts, out, err);
  ::unsetenv("LCRUN_TIMEOUT");
  p.out = lcrun_test::take_text(out);
  p.err = lcrun_test::take_text(err);
  return p;
}

// A rejected command line: status 2, nothing on out, exactly `message` on
// err (followed by the usage text when with_usage).
void check_rejected(const parsed& p, const std::string& message, bool with_usage = false) {
  CHECK(p.status == 2);
  CHECK(p.out.empty());
  CHECK(p.err.substr(0, message.size()) == message);
  if (with_usage)
    CHECK(p.err.find("usage: lcrun") == message.size());
  else
    CHECK(p.err == message);
}

}  // namespace

TEST_CASE("lcrun split_words: blanks separate words") {
  CHECK(split("") == words{});
  CHECK(split(" \t\n ") == words{});
  CHECK(split("env A=1") == words{"env", "A=1"});
  CHECK(split("  ip\tnetns\n exec  node{host} ") == words{"ip", "netns", "exec", "node{host}"});
}

TEST_CASE("lcrun split_words: quotes and backslashes") {
  // '...' is literal, backslashes included.
  CHECK(split("'a b' 'c\\d'") == words{"a b", "c\\d"});
  // "..." escapes only \" \\ \$ and \`; any other backslash stays.
  CHECK(split("\"a \\\" \\\\ \\$ \\` \\n\"") == words{"a \" \\ $ ` \\n"});
  // Outside quotes a backslash escapes any character, a blank included.
  CHECK(split("a\\ b \\'c\\\"") == words{"a b", "'c\""});
  // Quoted and bare parts of one word join up.
  CHECK(split("x'y z'\"w\"v") == words{"xy zwv"});
  // Nothing is expanded.
  CHECK(split("$HOME ~ *") == words{"$HOME", "~", "*"});
}

TEST_CASE("lcrun split_words: empty quotes are empty words") {
  CHECK(split("''") == words{""});
  CHECK(split("a \"\" b") == words{"a", "", "b"});
  CHECK(split("'' ''") == words{"", ""});
}

TEST_CASE("lcrun split_words: appends to the words it is given") {
  words w{"first"};
  std::string why;
  REQUIRE(lcrun::split_words("second third", w, why));
  CHECK(w == words{"first", "second", "third"});
}

TEST_CASE("lcrun split_words: unterminated quotes and a trailing backslash") {
  CHECK(split_error("a\\") == "ends with a backslash");
  CHECK(split_error("'abc") == "has an unterminated ' quote");
  CHECK(split_error("a 'b c") == "has an unterminated ' quote");
  CHECK(split_error("\"abc") == "has an unterminated \" quote");
  CHECK(split_error("\"abc\\\"") == "has an unterminated \" quote");  // the quote is escaped
  CHECK(split_error("\"abc\\") == "has an unterminated \" quote");
}

TEST_CASE("lcrun placeholders: unknown names are found") {
  CHECK(lcrun::unknown_placeholder("node{host}-{rank}of{size}on{hosts}").empty());
  CHECK(lcrun::unknown_placeholder("plain").empty());
  CHECK(lcrun::unknown_placeholder("{rnak}") == "{rnak}");
  CHECK(lcrun::unknown_placeholder("{rank}{my_host}{nope}") == "{my_host}");
  // Not a lowercase name: left alone (a shell brace, JSON, a path).
  CHECK(lcrun::unknown_placeholder("{RANK}").empty());
  CHECK(lcrun::unknown_placeholder("{}").empty());
  CHECK(lcrun::unknown_placeholder("{a b}").empty());
  CHECK(lcrun::unknown_placeholder("{r1}").empty());
  CHECK(lcrun::unknown_placeholder("{rank").empty());
  CHECK(lcrun::unknown_placeholder("{{rank}}").empty());
}

TEST_CASE("lcrun placeholders: expanded per rank") {
  lcrun::options opts;
  opts.nranks = 6;
  opts.nhosts = 4;
  CHECK(lcrun::expand_placeholders("node{host}", 5, opts) == "node1");  // 5 mod 4
  CHECK(lcrun::expand_placeholders("{rank}/{size}/{hosts}", 5, opts) == "5/6/4");
  CHECK(lcrun::expand_placeholders("{rank}{rank}", 0, opts) == "00");
  CHECK(lcrun::expand_placeholders("{{rank}}", 2, opts) == "{2}");
  CHECK(lcrun::expand_placeholders("{other} {rank", 2, opts) == "{other} {rank");
  CHECK(lcrun::expand_placeholders("", 2, opts).empty());
  opts.nhosts = 1;
  CHECK(lcrun::expand_placeholders("{host}", 3, opts) == "0");
}

TEST_CASE("lcrun parse_options: the program and its arguments") {
  parsed p = parse({"prog", "a", "-n", "3"});
  CHECK(p.status == -1);
  CHECK(p.out.empty());
  CHECK(p.err.empty());
  CHECK(p.opts.nranks == 1);
  CHECK(p.opts.nhosts == 1);
  CHECK(p.opts.prefix.empty());
  CHECK(p.opts.command == words{"prog", "a", "-n", "3"});  // options end at the program
  CHECK(p.opts.timeout_s == 0);

  p = parse({"--", "-prog", "--help"});
  CHECK(p.status == -1);
  CHECK(p.opts.command == words{"-prog", "--help"});

  p = parse({"-", "x"});  // a lone '-' is a program name
  CHECK(p.status == -1);
  CHECK(p.opts.command == words{"-", "x"});
}

TEST_CASE("lcrun parse_options: the spellings of the rank count") {
  CHECK(parse({"-n", "4", "prog"}).opts.nranks == 4);
  CHECK(parse({"-np", "8", "prog"}).opts.nranks == 8);
  CHECK(parse({"--np", "2", "prog"}).opts.nranks == 2);
  CHECK(parse({"-n=3", "prog"}).opts.nranks == 3);
  CHECK(parse({"-np=4096", "prog"}).opts.nranks == 4096);
  CHECK(parse({"-n", "2", "-n", "5", "prog"}).opts.nranks == 5);  // the last one counts
}

TEST_CASE("lcrun parse_options: --prefix and --hosts") {
  parsed p = parse({"-n", "4", "--hosts", "2", "--prefix", "ip netns exec 'node{host}'", "prog"});
  CHECK(p.status == -1);
  CHECK(p.err.empty());
  CHECK(p.opts.nranks == 4);
  CHECK(p.opts.nhosts == 2);
  CHECK(p.opts.prefix == words{"ip", "netns", "exec", "node{host}"});
  CHECK(p.opts.command == words{"prog"});

  p = parse({"--prefix=env RANK={rank}", "--hosts=3", "prog", "x"});
  CHECK(p.status == -1);
  CHECK(p.opts.nhosts == 3);
  CHECK(p.opts.prefix == words{"env", "RANK={rank}"});
  CHECK(p.opts.command == words{"prog", "x"});
}

TEST_CASE("lcrun parse_options: --keep-going") {
  parsed p = parse({"-n", "4", "--keep-going", "prog"});
  CHECK(p.status == -1);
  CHECK(p.opts.keep_going);
  CHECK(p.opts.command == words{"prog"});
  p = parse({"-n", "4", "prog", "--keep-going"});  // the program's argument, not lcrun's
  CHECK(!p.opts.keep_going);
  CHECK(p.opts.command == words{"prog", "--keep-going"});
}

TEST_CASE("lcrun parse_options: help") {
  for (const char* flag : {"-h", "--help"}) {
    parsed p = parse({"-n", "2", flag, "--bogus"});
    CHECK(p.status == 0);
    CHECK(p.out.rfind("usage: lcrun [-n N | -np N] [--hosts H] [--prefix CMD] [--keep-going] [--]",
                      0) == 0);
    CHECK(p.out.find("at most 4096") != std::string::npos);
    CHECK(p.err.empty());
  }
}

TEST_CASE("lcrun parse_options: bad rank and host counts") {
  check_rejected(parse({"-n"}), "lcrun: -n needs a number\n");
  check_rejected(parse({"-np"}), "lcrun: -np needs a number\n");
  check_rejected(parse({"--np"}), "lcrun: --np needs a number\n");
  check_rejected(parse({"-n", "0", "prog"}),
                 "lcrun: the number of ranks must be 1 to 4096, not '0'\n");
  check_rejected(parse({"-n", "4097", "prog"}),
                 "lcrun: the number of ranks must be 1 to 4096, not '4097'\n");
  check_rejected(parse({"-n", "2x", "prog"}),
                 "lcrun: the number of ranks must be 1 to 4096, not '2x'\n");
  check_rejected(parse({"-n=", "prog"}), "lcrun: the number of ranks must be 1 to 4096, not ''\n");
  check_rejected(parse({"-np", "-1", "prog"}),
                 "lcrun: the number of ranks must be 1 to 4096, not '-1'\n");
  check_rejected(parse({"-n", "99999999999999999999", "prog"}),
                 "lcrun: the number of ranks must be 1 to 4096, not '99999999999999999999'\n");
  check_rejected(parse({"--hosts"}), "lcrun: --hosts needs a number\n");
  check_rejected(parse({"--hosts", "0", "--prefix", "env", "prog"}),
                 "lcrun: the number of hosts must be 1 to 4096, not '0'\n");
  check_rejected(parse({"--hosts", "2", "prog"}),
                 "lcrun: --hosts only numbers the {host} of --prefix; give --prefix too\n");
}

TEST_CASE("lcrun parse_options: bad --prefix") {
  check_rejected(parse({"--prefix"}), "lcrun: --prefix needs a command\n");
  check_rejected(parse({"--prefix", "env", "--prefix", "env", "prog"}),
                 "lcrun: --prefix given twice\n");
  check_rejected(parse({"--prefix", "env 'A=1", "prog"}),
                 "lcrun: --prefix 'env 'A=1' has an unterminated ' quote\n");
  check_rejected(parse({"--prefix", "env \\", "prog"}),
                 "lcrun: --prefix 'env \\' ends with a backslash\n");
  check_rejected(parse({"--prefix", " \t", "prog"}),
                 "lcrun: --prefix needs a command, not an empty string\n");
  check_rejected(parse({"--prefix=", "prog"}),
                 "lcrun: --prefix needs a command, not an empty string\n");
  check_rejected(parse({"--prefix", "ip netns exec node{hots}", "prog"}),
                 "lcrun: --prefix 'ip netns exec node{hots}' has the unknown placeholder {hots} "
                 "(known: {rank} {host} {size} {hosts})\n");
}

TEST_CASE("lcrun parse_options: unknown options and no program") {
  check_rejected(parse({"--bogus", "prog"}), "lcrun: unknown option '--bogus'\n", true);
  check_rejected(parse({"-x"}), "lcrun: unknown option '-x'\n", true);
  check_rejected(parse({}), "lcrun: no program to run\n", true);
  check_rejected(parse({"-n", "2"}), "lcrun: no program to run\n", true);
  check_rejected(parse({"-n", "2", "--"}), "lcrun: no program to run\n", true);
}

TEST_CASE("lcrun parse_options: LCRUN_TIMEOUT") {
  parsed p = parse({"prog"}, "1.5");
  CHECK(p.status == -1);
  CHECK(p.opts.timeout_s == 1.5);
  CHECK(parse({"prog"}, "").opts.timeout_s == 0);  // empty: no timeout
  CHECK(parse({"prog"}, "10000000").opts.timeout_s == 1e7);
  for (const char* bad : {"0", "-1", "abc", "5s", "inf", "nan", "1e8"})
    check_rejected(parse({"prog"}, bad), std::string("lcrun: LCRUN_TIMEOUT='") + bad +
                                             "' is not a positive number of seconds\n");
  // Read only once the arguments are good.
  check_rejected(parse({"-n", "0", "prog"}, "abc"),
                 "lcrun: the number of ranks must be 1 to 4096, not '0'\n");
}

TEST_CASE("lcrun parse_options: the dump signal asked for before a timeout") {
  ::unsetenv("LCI_DUMP_SIGNAL");
  // No timeout: no signal, nothing set for the ranks.
  parsed p = parse({"prog"});
  CHECK(p.opts.dump_signal == 0);
  CHECK_FALSE(p.opts.set_dump_signal);
  // A timeout: USR2, set in the ranks' environment by lcrun.
  p = parse({"prog"}, "3");
  CHECK(p.opts.dump_signal == SIGUSR2);
  CHECK(p.opts.set_dump_signal);
  // The user's choice stands, and lcrun sets nothing.
  ::setenv("LCI_DUMP_SIGNAL", "USR1", 1);
  p = parse({"prog"}, "3");
  CHECK(p.opts.dump_signal == SIGUSR1);
  CHECK_FALSE(p.opts.set_dump_signal);
  ::setenv("LCI_DUMP_SIGNAL", "none", 1);
  p = parse({"prog"}, "3");
  CHECK(p.opts.dump_signal == 0);
  CHECK_FALSE(p.opts.set_dump_signal);
  // Malformed: no signal (the ranks refuse the value at LCI_initialize).
  ::setenv("LCI_DUMP_SIGNAL", "TERM", 1);
  p = parse({"prog"}, "3");
  CHECK(p.status == -1);
  CHECK(p.opts.dump_signal == 0);
  CHECK_FALSE(p.opts.set_dump_signal);
  ::unsetenv("LCI_DUMP_SIGNAL");
}
