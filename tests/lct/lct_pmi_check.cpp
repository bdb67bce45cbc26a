// LCT_pmi_* across ranks: every rank publishes values (plain, with spaces,
// of the maximal length, under a key too long for the bootstrap), then
// after LCT_pmi_barrier reads every rank's values and checks them.
// Usage: lct_pmi_check EXPECTED_SIZE [with_lci_first|with_lci_last]
//   with_lci_first: LCI_initialize before LCT_pmi_initialize (and
//   LCI_finalize after LCT_pmi_finalize); with_lci_last: the other way
//   round. Either way both share the one launcher connection.
// Exits 0 when every check passes, prints what failed otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci.h"
#include "lct.h"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "lct_pmi_check rank %d: FAILED: %s\n", LCT_rank, what.c_str());
    ++failures;
  }
}

std::string long_key(int rank) {
  std::string k = "a_key_well_past_the_sixty_three_characters_of_the_bootstrap_" + std::to_string(rank);
  while (k.size() < LCT_PMI_STRING_LIMIT) k.push_back('k');
  return k;
}

std::string long_value(int rank) {
  std::string v = "rank " + std::to_string(rank) + " says:";
  while (v.size() < LCT_PMI_STRING_LIMIT) v += " =%x";
  return v.substr(0, LCT_PMI_STRING_LIMIT);
}

void publish(const std::string& key, const std::string& value) {
  LCT_pmi_publish(const_cast<char*>(key.c_str()), const_cast<char*>(value.c_str()));
}

std::string getname(int rank, const std::string& key) {
  char value[LCT_PMI_STRING_LIMIT + 1];
  std::memset(value, '#', sizeof value);
  LCT_pmi_getname(rank, const_cast<char*>(key.c_str()), value);
  return value;
}

void exchange(int expected_size) {
  const int rank = LCT_pmi_get_rank();
  const int size = LCT_pmi_get_size();
  expect(size == expected_size, "size " + std::to_string(size) + " != " + std::to_string(expected_size));
  expect(rank >= 0 && rank < size, "rank out of range");
  expect(LCT_get_rank() == rank, "LCT_rank not set by LCT_pmi_initialize");
  publish("plain", "value_of_" + std::to_string(rank));
  publish("spaces", "hello from rank " + std::to_string(rank) + " !");
  publish("empty", "");
  publish(long_key(rank), long_value(rank));
  LCT_pmi_barrier();
  for (int r = 0; r < size; ++r) {
    const std::string who = " of rank " + std::to_string(r);
    expect(getname(r, "plain") == "value_of_" + std::to_string(r), "plain" + who);
    expect(getname(r, "spaces") == "hello from rank " + std::to_string(r) + " !", "spaces" + who);
    expect(getname(r, "empty").empty(), "empty" + who);
    expect(getname(r, long_key(r)) == long_value(r), "long key/value" + who);
  }
  // A second round after another barrier: values can be replaced.
  publish("round", "second " + std::to_string(rank * 10));
  LCT_pmi_barrier();
  const int peer = (rank + 1) % size;
  expect(getname(peer, "round") == "second " + std::to_string(peer * 10), "second round");
  LCT_pmi_barrier();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: lct_pmi_check EXPECTED_SIZE [with_lci_first|with_lci_last]\n");
    return 2;
  }
  const int expected = std::atoi(argv[1]);
  const std::string mode = argc > 2 ? argv[2] : "";
  LCT_init();
  if (mode == "with_lci_first") LCI_initialize();
  expect(!LCT_pmi_initialized(), "initialized before LCT_pmi_initialize");
  LCT_pmi_initialize();
  expect(LCT_pmi_initialized() == 1, "not initialized after LCT_pmi_initialize");
  if (mode == "with_lci_last") LCI_initialize();
  if (!mode.empty()) {
    expect(LCI_RANK == LCT_pmi_get_rank(), "LCI_RANK differs from LCT_pmi_get_rank");
    expect(LCI_NUM_PROCESSES == LCT_pmi_get_size(), "LCI_NUM_PROCESSES differs");
  }
  exchange(expected);
  if (!mode.empty()) LCI_barrier();
  if (mode == "with_lci_last") LCI_finalize();
  LCT_pmi_finalize();
  expect(!LCT_pmi_initialized(), "still initialized after LCT_pmi_finalize");
  if (mode == "with_lci_first") {
    LCI_barrier();  // LCI still works after LCT let go of the connection
    LCI_finalize();
  }
  // Initialize again: the connection opens anew.
  if (mode.empty() && expected == 1) {
    LCT_pmi_initialize();
    expect(LCT_pmi_get_size() == 1, "reopened size");
    LCT_pmi_finalize();
  }
  LCT_fina();
  if (failures == 0) std::printf("lct_pmi_check rank %d: ok\n", LCT_rank);
  return failures == 0 ? 0 : 1;
}
