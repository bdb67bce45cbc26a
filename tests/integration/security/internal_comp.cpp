// A peer names LCI's internal completion object (exactly 2 ranks,
// LCI_TEST_HOOKS=1). Rank 0 has an endpoint whose message port signals
// handlers; it tells rank 1 the address of the collectives' internal handler
// (LCIT_coll_internal_comp: what an attacker would have to guess) and of a
// handler the program created. Rank 1 sends a puts and a putma naming the
// internal handler as their remote completion, then one of each naming the
// program's handler. The internal handler must never run for them (it would
// write through the message's NULL context): rank 0 drops both messages
// (LCIT_dropped_messages) and its own handler receives the other two.
#include "harness.hpp"
#include "test_hooks.h"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_tag = 21;
std::atomic<int> g_app_calls{0};
std::atomic<int> g_bad_calls{0};
// The putma's buffer, freed by main (a handler must not call LCI).
LCI_mbuffer_t g_medium{nullptr, 0};

void app_handler(LCI_request_t r) {
  if (r.tag != k_tag) g_bad_calls.fetch_add(1);
  if (r.type == LCI_MEDIUM) g_medium = r.data.mbuffer;
  g_app_calls.fetch_add(1);
}

LCI_endpoint_t make_endpoint(LCI_comp_t handler) {
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, LCI_MATCH_RANKTAG));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_HANDLER));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_NONE));
  OK(LCI_plist_set_default_comp(plist, handler));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  OK(LCI_plist_free(&plist));
  return ep;
}

void send_both(LCI_endpoint_t ep, uint64_t remote, const char* what) {
  phase("rank 1: puts and putma naming %s", what);
  LCI_short_t s;
  memset(&s, 0x5a, sizeof(s));
  deadline d;
  while (LCI_puts(ep, s, 0, k_tag, static_cast<uintptr_t>(remote)) == LCI_ERR_RETRY)
    progress(d, "puts");
  char bytes[100];
  memset(bytes, 0x3c, sizeof(bytes));
  while (LCI_putma(ep, LCI_mbuffer_t{bytes, sizeof(bytes)}, 0, k_tag,
                   static_cast<uintptr_t>(remote)) == LCI_ERR_RETRY)
    progress(d, "putma");
}

}  // namespace

int main() {
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  LCI_comp_t handler;
  OK(LCI_handler_create(LCI_UR_DEVICE, app_handler, &handler));
  LCI_endpoint_t ep = make_endpoint(handler);
  uint64_t internal = 0;
  OK(LCIT_coll_internal_comp(&internal));
  EXPECT(internal != 0, "no internal completion object");
  const auto internals = allgather_u64(internal);
  const auto handlers = allgather_u64(reinterpret_cast<uint64_t>(handler));
  const uint64_t dropped_before = LCIT_dropped_messages();
  allgather_u64(0);
  if (LCI_RANK == 1) {
    send_both(ep, internals[0], "rank 0's internal collectives handler");
    send_both(ep, handlers[0], "rank 0's own handler");
  } else {
    phase("rank 0: waiting for the two messages to its handler");
    deadline d;
    while (g_app_calls.load() < 2) progress(d, "messages to the program's handler");
    // The forged ones were sent first; after the others arrived, drive a
    // while longer in case a transport reorders them.
    deadline settle(0.2);
    while (LCIT_dropped_messages() - dropped_before < 2 && !settle.passed()) LCI_progress(LCI_UR_DEVICE);
    EXPECT(LCIT_dropped_messages() - dropped_before == 2,
           "%llu messages dropped, want 2 (those naming the internal handler)",
           static_cast<unsigned long long>(LCIT_dropped_messages() - dropped_before));
    EXPECT(g_app_calls.load() == 2, "the program's handler ran %d times, want 2",
           g_app_calls.load());
    EXPECT(g_bad_calls.load() == 0, "the program's handler got a foreign tag");
    EXPECT(g_medium.address != nullptr, "no putma arrived at the program's handler");
    if (g_medium.address) OK(LCI_mbuffer_free(g_medium));
  }
  allgather_u64(0);
  OK(LCI_endpoint_free(&ep));
  return harness_finish("internal_comp");
}
