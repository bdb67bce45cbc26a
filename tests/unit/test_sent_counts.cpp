// The teardown check's message counts as PMI values
// (lci/backend/ofi/sent_counts.hpp): every value fits the PMI limit at any
// job size, each rank reads back what its peers sent it, and a malformed or
// out-of-range value from a peer is refused.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lci/backend/ofi/sent_counts.hpp"

using namespace lci::ofi;

namespace {

// What rank `self` reads from `values`; fails the test on a refusal.
uint64_t read_back(const std::vector<std::string>& values, int nranks, int self,
                   size_t limit = sent_value_chars) {
  REQUIRE(sent_count_values(values[0], nranks, limit) == values.size());
  uint64_t c = 1234;
  REQUIRE(sent_count_to(values, nranks, self, &c));
  return c;
}

}  // namespace

TEST_CASE("a rank that sent nothing publishes one short value") {
  const std::vector<std::string> v = encode_sent_counts(std::vector<uint64_t>(64, 0));
  REQUIRE(v.size() == 1);
  CHECK(v[0] == "1;");
  CHECK(read_back(v, 64, 5) == 0);
}

TEST_CASE("two neighbours of 1024 ranks: one value, counts read back") {
  std::vector<uint64_t> sent(1024, 0);
  sent[7] = 3;
  sent[1023] = 0xfedcba9876543210ull;
  const std::vector<std::string> v = encode_sent_counts(sent);
  REQUIRE(v.size() == 1);
  CHECK(read_back(v, 1024, 7) == 3);
  CHECK(read_back(v, 1024, 1023) == 0xfedcba9876543210ull);
  CHECK(read_back(v, 1024, 8) == 0);
}

TEST_CASE("every peer of a large job: every value within the limit, every count read back") {
  for (int n : {2, 33, 64, 300, 4096}) {
    std::vector<uint64_t> sent(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) sent[static_cast<size_t>(r)] = static_cast<uint64_t>(r) * 977 + 1;
    const std::vector<std::string> v = encode_sent_counts(sent);
    for (const std::string& s : v) CHECK(s.size() <= 512);
    if (n >= 64) CHECK(v.size() > 1);  // the dense form would not fit one value
    for (int r = 0; r < n; ++r) CHECK(read_back(v, n, r) == static_cast<uint64_t>(r) * 977 + 1);
  }
}

TEST_CASE("a small limit splits into many values") {
  std::vector<uint64_t> sent(200, 1);
  const std::vector<std::string> v = encode_sent_counts(sent, 64);
  CHECK(v.size() > 10);
  for (const std::string& s : v) CHECK(s.size() <= 64);
  CHECK(read_back(v, 200, 199, 64) == 1);
}

TEST_CASE("malformed values from a peer are refused") {
  uint64_t c = 0;
  // The announced number of values.
  CHECK(sent_count_values("", 64) == 0);
  CHECK(sent_count_values("0;", 64) == 0);
  CHECK(sent_count_values("x;", 64) == 0);
  CHECK(sent_count_values("123456789;", 64) == 0);
  CHECK(sent_count_values("ffff;", 64) == 0);  // more than 64 ranks' entries need
  CHECK(sent_count_values("1;3:1,", 64) == 1);
  // The entries.
  CHECK_FALSE(sent_count_to({"1;3:1"}, 64, 3, &c));                    // no ','
  CHECK_FALSE(sent_count_to({"1;3,1,"}, 64, 3, &c));                   // no ':'
  CHECK_FALSE(sent_count_to({"1;:1,"}, 64, 3, &c));                    // no rank
  CHECK_FALSE(sent_count_to({"1;3:,"}, 64, 3, &c));                    // no count
  CHECK_FALSE(sent_count_to({"1;40:1,"}, 64, 3, &c));                  // rank 64 of 64
  CHECK_FALSE(sent_count_to({"1;3:Z,"}, 64, 3, &c));                   // not hex
  CHECK_FALSE(sent_count_to({"1;3:12345678901234567,"}, 64, 3, &c));   // 17 digits
  CHECK_FALSE(sent_count_to({"13:1,"}, 64, 3, &c));                    // no prefix
  CHECK(sent_count_to({"2;3:5,", "4:6,"}, 64, 4, &c));
  CHECK(c == 6);
}
