// Property lists through the C API: defaults, setters, decode, free. They
// need no LCI_initialize (a list made before it has no default queue).
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "lci.h"

TEST_CASE("a new property list has the documented defaults") {
  LCI_plist_t plist = nullptr;
  REQUIRE(LCI_plist_create(&plist) == LCI_OK);
  REQUIRE(plist != nullptr);
  char text[256];
  REQUIRE(LCI_plist_decode(plist, text) == LCI_OK);
  const std::string s = text;
  CHECK(s.find("match=ranktag") != std::string::npos);
  CHECK(s.find("command_port=queue") != std::string::npos);
  CHECK(s.find("message_port=queue") != std::string::npos);
  CHECK(s.size() < 256);
  REQUIRE(LCI_plist_free(&plist) == LCI_OK);
  CHECK(plist == nullptr);
}

TEST_CASE("setters change exactly their property") {
  LCI_plist_t plist;
  REQUIRE(LCI_plist_create(&plist) == LCI_OK);
  char text[256];

  REQUIRE(LCI_plist_set_match_type(plist, LCI_MATCH_TAG) == LCI_OK);
  LCI_plist_decode(plist, text);
  CHECK(std::string(text).find("match=tag ") != std::string::npos);
  CHECK(std::string(text).find("command_port=queue") != std::string::npos);

  REQUIRE(LCI_plist_set_match(plist, LCI_MATCH_RANKTAG) == LCI_OK);  // the spec's alias
  LCI_plist_decode(plist, text);
  CHECK(std::string(text).find("match=ranktag") != std::string::npos);

  REQUIRE(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_SYNC) == LCI_OK);
  REQUIRE(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER) == LCI_OK);
  LCI_plist_decode(plist, text);
  CHECK(std::string(text).find("command_port=sync") != std::string::npos);
  CHECK(std::string(text).find("message_port=handler") != std::string::npos);

  REQUIRE(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_NONE) == LCI_OK);
  LCI_plist_decode(plist, text);
  CHECK(std::string(text).find("message_port=none") != std::string::npos);
  CHECK(std::string(text).find("command_port=sync") != std::string::npos);

  LCI_comp_t cq;
  REQUIRE(LCI_queue_createx(nullptr, 4, &cq) == LCI_OK);
  REQUIRE(LCI_plist_set_default_comp(plist, cq) == LCI_OK);
  LCI_plist_decode(plist, text);
  char expected[64];
  snprintf(expected, sizeof(expected), "default_comp=%p", cq);
  CHECK(std::string(text).find(expected) != std::string::npos);
  LCI_queue_free(&cq);
  LCI_plist_free(&plist);
}

TEST_CASE("lists are independent") {
  LCI_plist_t a, b;
  LCI_plist_create(&a);
  LCI_plist_create(&b);
  LCI_plist_set_match_type(a, LCI_MATCH_TAG);
  char ta[256], tb[256];
  LCI_plist_decode(a, ta);
  LCI_plist_decode(b, tb);
  CHECK(std::string(ta) != std::string(tb));
  LCI_plist_free(&a);
  LCI_plist_decode(b, tb);
  CHECK(std::string(tb).find("match=ranktag") != std::string::npos);
  LCI_plist_free(&b);
}
