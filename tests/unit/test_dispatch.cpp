// The dispatch tables of progress (lci/core/progress.hpp): every message
// kind, control kind, dispatched completion kind, backlog entry kind, RDMA
// completion (by role) and matched kind has exactly one handler in the
// library, and the table check reports a kind with none or with two.
#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "lci/core/handler_table.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/protocol.hpp"

using namespace lci;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& line : lines) s += line + "\n";
  return s;
}

using test_handler = int (*)(int);
int first(int x) { return x + 1; }
int second(int x) { return x + 2; }
enum class test_kind : unsigned char { a = 0, b = 1, c = 3 };
constexpr test_kind test_kinds[] = {test_kind::a, test_kind::b, test_kind::c};

}  // namespace

TEST_CASE("every kind of every dispatch table has exactly one handler") {
  // liblci's static initialisers (the LCI_ARRIVAL, ... registrations of
  // each module) ran when the library was loaded.
  const std::vector<std::string> problems = handler_problems();
  INFO(joined(problems));
  CHECK(problems.empty());
}

TEST_CASE("the kinds that need a handler are the kinds of the wire and the backlog") {
  CHECK(std::size(arrival_kinds) == 12);
  CHECK(std::size(tagged_arrival_kinds) == 3);
  for (const msg_kind k : tagged_arrival_kinds) CHECK(k != msg_kind::tagged);
  CHECK(std::size(control_kinds) == 6);
  for (const msg_kind k : arrival_kinds) {
    CHECK(k != msg_kind::control);
    CHECK(k != write_imm_kind);
  }
  CHECK(std::size(backlog_kinds) == 3);
  CHECK(std::size(rdma_roles) == 4);
  for (const rdv_role r : rdma_roles) {
    CHECK(r != rdv_role::recv);
    CHECK(r != rdv_role::recv_alloc);
  }
}

TEST_CASE("a second handler for a kind is refused and reported") {
  static handler_table<test_handler, 4> table;  // constant-initialised, as the library's
  CHECK(table.add(static_cast<size_t>(test_kind::a), first));
  CHECK(table.add(static_cast<size_t>(test_kind::b), first));
  CHECK(table.add(static_cast<size_t>(test_kind::c), first));
  std::vector<std::string> problems;
  check_table(table, "test kind", test_kinds, problems);
  CHECK(problems.empty());

  CHECK_FALSE(table.add(static_cast<size_t>(test_kind::b), second));
  CHECK((table[static_cast<size_t>(test_kind::b)] == first));  // the first one stays
  check_table(table, "test kind", test_kinds, problems);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "test kind 1: 2 handlers (needs exactly one)");
}

TEST_CASE("a kind without a handler, or a handler for a kind that needs none, is reported") {
  static handler_table<test_handler, 4> table;
  CHECK(table.add(static_cast<size_t>(test_kind::a), first));
  CHECK(table.add(2, second));  // not one of test_kinds
  CHECK_FALSE(table.add(4, second));  // out of range
  std::vector<std::string> problems;
  check_table(table, "test kind", test_kinds, problems);
  REQUIRE(problems.size() == 3);
  CHECK(problems[0] == "test kind 1: 0 handlers (needs exactly one)");
  CHECK(problems[1] == "test kind 2: 1 handler (needs none)");
  CHECK(problems[2] == "test kind 3: 0 handlers (needs exactly one)");
}
