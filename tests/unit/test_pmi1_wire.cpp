// The PMI-1 wire text shared by the bootstrap client and lcrun
// (lci/bootstrap/pmi1_wire.hpp): line splitting, strict integers, and the
// percent coding of abort messages.
#include <doctest/doctest.h>

#include <climits>
#include <string>

#include "lci/bootstrap/pmi1_wire.hpp"

namespace wire = lci::bootstrap::pmi1_wire;

TEST_CASE("pmi1 wire: a line splits into key=value fields") {
  const wire::line l = wire::parse_line("cmd=put kvsname=kvs_1 key=a value=x=y");
  REQUIRE(l.fields.size() == 4);
  CHECK(l.get_or("cmd", "") == "put");
  CHECK(l.get_or("kvsname", "") == "kvs_1");
  CHECK(l.get_or("key", "") == "a");
  CHECK(l.get_or("value", "") == "x=y");  // split at the first '='
  CHECK(l.find("missing") == nullptr);
  CHECK(l.get_or("missing", "fallback") == "fallback");
  CHECK(l.text == "cmd=put kvsname=kvs_1 key=a value=x=y");
}

TEST_CASE("pmi1 wire: blanks, bare tokens and repeated keys") {
  const wire::line l = wire::parse_line("  cmd=get\t\tflag  key=1 key=2 ");
  REQUIRE(l.fields.size() == 4);
  CHECK(l.get_or("cmd", "") == "get");
  REQUIRE(l.find("flag") != nullptr);
  CHECK(l.find("flag")->empty());          // no '=': an empty value
  CHECK(l.get_or("key", "") == "1");       // the first of repeated keys counts
  CHECK(wire::parse_line("").fields.empty());
  CHECK(wire::parse_line(" \t ").fields.empty());
  const wire::line empty_value = wire::parse_line("cmd= =x");
  REQUIRE(empty_value.fields.size() == 2);
  CHECK(empty_value.get_or("cmd", "?").empty());
  CHECK(empty_value.fields[1].first.empty());
  CHECK(empty_value.fields[1].second == "x");
}

TEST_CASE("pmi1 wire: integers are whole decimal strings") {
  long v = -1;
  CHECK(wire::parse_int("0", v));
  CHECK(v == 0);
  CHECK(wire::parse_int("-17", v));
  CHECK(v == -17);
  CHECK(wire::parse_int("4096", v));
  CHECK(v == 4096);
  v = 5;
  CHECK_FALSE(wire::parse_int("", v));
  CHECK_FALSE(wire::parse_int(nullptr, v));
  CHECK_FALSE(wire::parse_int("12x", v));
  CHECK_FALSE(wire::parse_int("1 ", v));
  CHECK_FALSE(wire::parse_int("99999999999999999999999", v));  // overflow
  CHECK(v == 5);  // untouched on failure
}

TEST_CASE("pmi1 wire: abort messages round-trip through the percent coding") {
  const std::string message = "rank 3: bad value 50% of \"x\"~";
  const std::string encoded = wire::percent_encode(message);
  CHECK(encoded.find(' ') == std::string::npos);
  CHECK(encoded == "rank%203:%20bad%20value%2050%25%20of%20\"x\"~");
  CHECK(wire::percent_decode(encoded) == message);
  // At most 512 bytes of the message travel.
  CHECK(wire::percent_decode(wire::percent_encode(std::string(2000, 'a'))).size() == 512);
}

TEST_CASE("pmi1 wire: decoding prints controls as spaces and keeps stray '%'") {
  CHECK(wire::percent_decode("a%0Db%1Bc") == "a b c");        // encoded CR and ESC
  CHECK(wire::percent_decode(std::string("a\rb\x1b" "c")) == "a b c");  // raw ones
  CHECK(wire::percent_decode("100%") == "100%");
  CHECK(wire::percent_decode("%zz%4") == "%zz%4");
  CHECK(wire::percent_decode("%41%42") == "AB");
  CHECK(wire::printable(std::string("x\ty\x7f")) == "x y ");
}
