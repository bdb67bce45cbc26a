// LCI_COMPLETION_NONE: a port of that type never signals, whatever
// completion object the call names, and the operation still happens.
#include <chrono>
#include <cstdio>
#include <cstring>

#include "harness.hpp"
#include "lci.h"

int main() {
  LCI_initialize();
  const int peer = (LCI_RANK + 1) % LCI_NUM_PROCESSES;
  const int from = (LCI_RANK - 1 + LCI_NUM_PROCESSES) % LCI_NUM_PROCESSES;
  LCI_comp_t cq;
  LCI_queue_create(LCI_UR_DEVICE, &cq);

  // Both ports NONE: sendmc and recvm name a queue that must stay empty.
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_NONE);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_NONE);
  LCI_endpoint_t ep;
  LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist);
  LCI_plist_free(&plist);

  char in[6000], out[6000];
  memset(in, 0, sizeof(in));
  for (size_t i = 0; i < sizeof(out); ++i) out[i] = static_cast<char>(i * 3 + LCI_RANK);
  LCI_mbuffer_t rb{in, sizeof(in)}, sb{out, sizeof(out)};
  EXPECT(LCI_recvm(ep, rb, from, 3, cq, nullptr) == LCI_OK, "recvm");
  LCI_barrier();
  while (LCI_sendmc(ep, sb, peer, 3, cq, nullptr) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);

  // The data arrives although nothing is signalled: watch the buffer.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto arrived = [&] {
    for (size_t i = 0; i < sizeof(in); ++i)
      if (in[i] != static_cast<char>(i * 3 + from)) return false;
    return true;
  };
  while (!arrived() && std::chrono::steady_clock::now() < deadline) LCI_progress(LCI_UR_DEVICE);
  EXPECT(arrived(), "the message never arrived");
  LCI_barrier();
  size_t len = 99;
  LCI_queue_len(cq, &len);
  EXPECT(len == 0, "a NONE port signalled %zu times", len);
  LCI_request_t r;
  EXPECT(LCI_queue_pop(cq, &r) == LCI_ERR_RETRY, "queue not empty");
  LCI_endpoint_free(&ep);
  LCI_queue_free(&cq);
  EXPECT(cq == nullptr, "queue_free did not clear the handle");
  LCI_finalize();
  return lci_test::report("comp_none");
}
