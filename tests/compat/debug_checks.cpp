// debug_checks.cpp - argument validation of a debug build (-DLCI_DEBUG=ON).
//
// Every implemented call is given bad input (NULL handles, freed handles,
// handles of the wrong kind, ranks/tags/lengths out of range, bad enum
// values, a dead completion object) and must return LCI_ERR_FATAL without
// crashing (a live completion object of another kind than the endpoint's
// port is accepted, as in release builds); the library prints one line per
// failure (e.g. "LCI[0] error: LCI_sendm: argument rank = -2 is out of range
// [0, 2)"). Afterwards correct calls must still work. Each rank counts its
// checks; rank 0 gathers the failure counts of all ranks (with LCI_sends) and
// prints "debug_checks: PASS ..." only if every rank passed. Built only when
// LCI_DEBUG is ON: release builds do not validate.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lci.h"

namespace {

int g_checks = 0;
int g_failures = 0;

void expect(LCI_error_t got, LCI_error_t want, const char* text, int line) {
  ++g_checks;
  if (got == want) return;
  ++g_failures;
  std::fprintf(stderr, "debug_checks: rank %d: line %d: %s returned %d, expected %d\n",
               LCI_RANK, line, text, static_cast<int>(got), static_cast<int>(want));
}

#define EXPECT_FATAL(call) expect((call), LCI_ERR_FATAL, #call, __LINE__)
#define EXPECT_OK(call) expect((call), LCI_OK, #call, __LINE__)
#define EXPECT_TRUE(cond) \
  expect((cond) ? LCI_OK : LCI_ERR_FATAL, LCI_OK, #cond, __LINE__)

void on_completion(LCI_request_t) {}

LCI_request_t pop(LCI_comp_t cq) {
  LCI_request_t r;
  while (LCI_queue_pop(cq, &r) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  return r;
}

LCI_mbuffer_t mbuf(void* address, size_t length) {
  LCI_mbuffer_t b;
  b.address = address;
  b.length = length;
  return b;
}

LCI_short_t short_of(uint64_t v) {
  LCI_short_t s;
  std::memset(&s, 0, sizeof(s));
  std::memcpy(s.val, &v, sizeof(v));
  return s;
}

// Calls that must fail before LCI_initialize.
void before_initialize() {
  int flag = -1;
  LCI_device_t dev = nullptr;
  EXPECT_FATAL(LCI_initialized(nullptr));
  EXPECT_OK(LCI_initialized(&flag));
  EXPECT_TRUE(flag == 0);
  EXPECT_FATAL(LCI_finalize());
  EXPECT_FATAL(LCI_barrier());
  EXPECT_FATAL(LCI_device_init(&dev));
  EXPECT_TRUE(dev == nullptr);
}

void devices_and_progress(LCI_comp_t cq) {
  LCI_device_t dev = nullptr, none = nullptr;
  LCI_mbuffer_t mb;
  EXPECT_FATAL(LCI_device_init(nullptr));
  EXPECT_FATAL(LCI_device_free(nullptr));
  EXPECT_FATAL(LCI_device_free(&none));
  EXPECT_FATAL(LCI_progress(nullptr));
  EXPECT_FATAL(LCI_mbuffer_alloc(nullptr, &mb));
  EXPECT_FATAL(LCI_mbuffer_alloc(LCI_UR_DEVICE, nullptr));
  // A handle of another kind where a device is expected.
  LCI_device_t not_a_device = reinterpret_cast<LCI_device_t>(cq);
  EXPECT_FATAL(LCI_progress(not_a_device));
  EXPECT_FATAL(LCI_device_free(&not_a_device));
  EXPECT_FATAL(LCI_mbuffer_alloc(not_a_device, &mb));

  // A freed device (init/free are collective: every rank does the same).
  EXPECT_OK(LCI_device_init(&dev));
  LCI_device_t stale = dev;
  EXPECT_OK(LCI_device_free(&dev));
  EXPECT_TRUE(dev == nullptr);
  EXPECT_FATAL(LCI_device_free(&stale));
  EXPECT_FATAL(LCI_progress(stale));
  EXPECT_FATAL(LCI_mbuffer_alloc(stale, &mb));
  LCI_plist_t plist;
  LCI_endpoint_t ep = nullptr;
  EXPECT_OK(LCI_plist_create(&plist));
  EXPECT_FATAL(LCI_endpoint_init(&ep, stale, plist));
  EXPECT_FATAL(LCI_endpoint_init(&ep, not_a_device, plist));
  EXPECT_TRUE(ep == nullptr);
  EXPECT_OK(LCI_plist_free(&plist));
}

void plists(LCI_comp_t cq) {
  LCI_plist_t plist = nullptr, none = nullptr;
  char text[256];
  EXPECT_FATAL(LCI_plist_create(nullptr));
  EXPECT_FATAL(LCI_plist_free(nullptr));
  EXPECT_FATAL(LCI_plist_free(&none));
  EXPECT_FATAL(LCI_plist_get(nullptr, &plist));
  EXPECT_FATAL(LCI_plist_get(LCI_UR_ENDPOINT, nullptr));
  EXPECT_FATAL(LCI_plist_decode(nullptr, text));
  EXPECT_FATAL(LCI_plist_set_match_type(nullptr, LCI_MATCH_TAG));
  EXPECT_FATAL(LCI_plist_set_match(nullptr, LCI_MATCH_TAG));
  EXPECT_FATAL(LCI_plist_set_comp_type(nullptr, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC));
  EXPECT_FATAL(LCI_plist_set_default_comp(nullptr, cq));

  EXPECT_OK(LCI_plist_create(&plist));
  EXPECT_FATAL(LCI_plist_decode(plist, nullptr));
  EXPECT_FATAL(LCI_plist_set_match_type(plist, static_cast<LCI_match_t>(2)));
  EXPECT_FATAL(LCI_plist_set_match_type(plist, static_cast<LCI_match_t>(-1)));
  EXPECT_FATAL(LCI_plist_set_match(plist, static_cast<LCI_match_t>(7)));
  EXPECT_FATAL(LCI_plist_set_comp_type(plist, static_cast<LCI_port_t>(2), LCI_COMPLETION_QUEUE));
  EXPECT_FATAL(LCI_plist_set_comp_type(plist, static_cast<LCI_port_t>(-1), LCI_COMPLETION_QUEUE));
  EXPECT_FATAL(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, static_cast<LCI_comp_type_t>(4)));
  EXPECT_FATAL(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, static_cast<LCI_comp_type_t>(-1)));
  // Not a completion object: a property list, and an unrelated address.
  int local = 0;
  EXPECT_FATAL(LCI_plist_set_default_comp(plist, reinterpret_cast<LCI_comp_t>(plist)));
  EXPECT_FATAL(LCI_plist_set_default_comp(plist, &local));
  // A property list is not an endpoint.
  EXPECT_FATAL(LCI_plist_get(reinterpret_cast<LCI_endpoint_t>(plist), &none));
  // The rejected calls changed nothing: the list still decodes to the defaults.
  EXPECT_OK(LCI_plist_decode(plist, text));
  EXPECT_TRUE(std::strlen(text) > 0 && std::strlen(text) < 256);

  // A freed property list.
  LCI_plist_t stale = plist;
  EXPECT_OK(LCI_plist_free(&plist));
  EXPECT_TRUE(plist == nullptr);
  EXPECT_FATAL(LCI_plist_free(&stale));
  EXPECT_FATAL(LCI_plist_decode(stale, text));
  EXPECT_FATAL(LCI_plist_set_match_type(stale, LCI_MATCH_TAG));
  EXPECT_FATAL(LCI_plist_set_comp_type(stale, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC));
  EXPECT_FATAL(LCI_plist_set_default_comp(stale, cq));
  LCI_endpoint_t ep = nullptr;
  EXPECT_FATAL(LCI_endpoint_init(&ep, LCI_UR_DEVICE, stale));
  EXPECT_FATAL(LCI_endpoint_init(&ep, LCI_UR_DEVICE, nullptr));
  EXPECT_TRUE(ep == nullptr);
}

void endpoints() {
  LCI_plist_t plist;
  LCI_endpoint_t ep = nullptr, none = nullptr;
  EXPECT_OK(LCI_plist_create(&plist));
  EXPECT_FATAL(LCI_endpoint_init(nullptr, LCI_UR_DEVICE, plist));
  EXPECT_FATAL(LCI_endpoint_init(&ep, nullptr, plist));
  EXPECT_FATAL(LCI_endpoint_free(nullptr));
  EXPECT_FATAL(LCI_endpoint_free(&none));

  // A freed endpoint: every call taking an endpoint must refuse it.
  EXPECT_OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  EXPECT_OK(LCI_plist_free(&plist));
  LCI_endpoint_t stale = ep;
  EXPECT_OK(LCI_endpoint_free(&ep));
  EXPECT_TRUE(ep == nullptr);
  char buf[8] = {0};
  LCI_comp_t cq = LCI_UR_CQ;
  EXPECT_FATAL(LCI_endpoint_free(&stale));
  EXPECT_FATAL(LCI_plist_get(stale, &plist));
  EXPECT_FATAL(LCI_sends(stale, short_of(1), 0, 0));
  EXPECT_FATAL(LCI_recvs(stale, 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_sendm(stale, mbuf(buf, 8), 0, 0));
  EXPECT_FATAL(LCI_sendmn(stale, mbuf(buf, 8), 0, 0));
  EXPECT_FATAL(LCI_sendmc(stale, mbuf(buf, 8), 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvm(stale, mbuf(buf, 8), 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvmn(stale, 0, 0, cq, nullptr));
}

void queues(LCI_comp_t sync) {
  LCI_comp_t cq = nullptr, none = nullptr;
  LCI_request_t req[2];
  size_t n = 0;
  EXPECT_FATAL(LCI_queue_create(LCI_UR_DEVICE, nullptr));
  EXPECT_FATAL(LCI_queue_createx(LCI_UR_DEVICE, 16, nullptr));
  EXPECT_FATAL(LCI_queue_createx(LCI_UR_DEVICE, 0, &cq));
  EXPECT_TRUE(cq == nullptr);
  EXPECT_FATAL(LCI_queue_free(nullptr));
  EXPECT_FATAL(LCI_queue_free(&none));
  EXPECT_FATAL(LCI_queue_pop(nullptr, req));
  EXPECT_FATAL(LCI_queue_wait(nullptr, req));
  EXPECT_FATAL(LCI_queue_pop_multiple(nullptr, 2, req, &n));
  EXPECT_FATAL(LCI_queue_wait_multiple(nullptr, 2, req));
  EXPECT_FATAL(LCI_queue_len(nullptr, &n));
  // A synchronizer is not a queue.
  LCI_comp_t wrong = sync;
  EXPECT_FATAL(LCI_queue_free(&wrong));
  EXPECT_FATAL(LCI_queue_pop(sync, req));
  EXPECT_FATAL(LCI_queue_wait(sync, req));
  EXPECT_FATAL(LCI_queue_pop_multiple(sync, 2, req, &n));
  EXPECT_FATAL(LCI_queue_wait_multiple(sync, 2, req));
  EXPECT_FATAL(LCI_queue_len(sync, &n));

  EXPECT_OK(LCI_queue_createx(LCI_UR_DEVICE, 16, &cq));
  EXPECT_FATAL(LCI_queue_pop(cq, nullptr));
  EXPECT_FATAL(LCI_queue_wait(cq, nullptr));
  EXPECT_FATAL(LCI_queue_pop_multiple(cq, 2, nullptr, &n));
  EXPECT_FATAL(LCI_queue_pop_multiple(cq, 2, req, nullptr));
  EXPECT_FATAL(LCI_queue_wait_multiple(cq, 2, nullptr));
  EXPECT_FATAL(LCI_queue_len(cq, nullptr));
  EXPECT_OK(LCI_queue_len(cq, &n));
  EXPECT_TRUE(n == 0);
  EXPECT_TRUE(LCI_queue_pop(cq, req) == LCI_ERR_RETRY);

  // A freed queue.
  LCI_comp_t stale = cq;
  EXPECT_OK(LCI_queue_free(&cq));
  EXPECT_TRUE(cq == nullptr);
  EXPECT_FATAL(LCI_queue_free(&stale));
  EXPECT_FATAL(LCI_queue_pop(stale, req));
  EXPECT_FATAL(LCI_queue_wait(stale, req));
  EXPECT_FATAL(LCI_queue_pop_multiple(stale, 2, req, &n));
  EXPECT_FATAL(LCI_queue_wait_multiple(stale, 2, req));
  EXPECT_FATAL(LCI_queue_len(stale, &n));
  // ... also as the completion of a receive on a queue port.
  char buf[8];
  EXPECT_FATAL(LCI_recvs(LCI_UR_ENDPOINT, 0, 0, stale, nullptr));
  EXPECT_FATAL(LCI_recvm(LCI_UR_ENDPOINT, mbuf(buf, 8), 0, 0, stale, nullptr));
  EXPECT_FATAL(LCI_recvmn(LCI_UR_ENDPOINT, 0, 0, stale, nullptr));
}

void syncs_and_handlers(LCI_comp_t cq) {
  LCI_comp_t sync = nullptr, none = nullptr, handler = nullptr;
  LCI_request_t req[2];
  std::memset(req, 0, sizeof(req));
  EXPECT_FATAL(LCI_sync_create(LCI_UR_DEVICE, 0, &sync));
  EXPECT_FATAL(LCI_sync_create(LCI_UR_DEVICE, -1, &sync));
  EXPECT_TRUE(sync == nullptr);
  EXPECT_FATAL(LCI_sync_create(LCI_UR_DEVICE, 1, nullptr));
  EXPECT_FATAL(LCI_sync_free(nullptr));
  EXPECT_FATAL(LCI_sync_free(&none));
  EXPECT_FATAL(LCI_sync_signal(nullptr, req[0]));
  EXPECT_FATAL(LCI_sync_wait(nullptr, req));
  EXPECT_FATAL(LCI_sync_test(nullptr, req));
  EXPECT_FATAL(LCI_sync_test(nullptr, nullptr));
  // A queue is not a synchronizer.
  LCI_comp_t wrong = cq;
  EXPECT_FATAL(LCI_sync_free(&wrong));
  EXPECT_FATAL(LCI_sync_signal(cq, req[0]));
  EXPECT_FATAL(LCI_sync_wait(cq, req));
  EXPECT_FATAL(LCI_sync_test(cq, nullptr));

  EXPECT_FATAL(LCI_handler_create(LCI_UR_DEVICE, nullptr, &handler));
  EXPECT_TRUE(handler == nullptr);
  EXPECT_FATAL(LCI_handler_create(LCI_UR_DEVICE, on_completion, nullptr));
  EXPECT_OK(LCI_handler_create(LCI_UR_DEVICE, on_completion, &handler));
  // A handler is neither a synchronizer nor a queue.
  EXPECT_FATAL(LCI_sync_test(handler, nullptr));
  EXPECT_FATAL(LCI_sync_signal(handler, req[0]));
  EXPECT_FATAL(LCI_queue_pop(handler, req));

  // A freed synchronizer.
  EXPECT_OK(LCI_sync_create(LCI_UR_DEVICE, 1, &sync));
  EXPECT_TRUE(LCI_sync_test(sync, nullptr) == LCI_ERR_RETRY);
  LCI_comp_t stale = sync;
  EXPECT_OK(LCI_sync_free(&sync));
  EXPECT_TRUE(sync == nullptr);
  EXPECT_FATAL(LCI_sync_free(&stale));
  EXPECT_FATAL(LCI_sync_signal(stale, req[0]));
  EXPECT_FATAL(LCI_sync_wait(stale, req));
  EXPECT_FATAL(LCI_sync_test(stale, req));
  EXPECT_FATAL(LCI_sync_test(stale, nullptr));
}

// Two-sided calls with bad ranks, tags, lengths and completion objects.
// ep_sync: message and command ports of type SYNC; ep_tag: tag matching.
void two_sided(LCI_comp_t cq, LCI_endpoint_t ep_sync, LCI_endpoint_t ep_tag) {
  const LCI_endpoint_t ep = LCI_UR_ENDPOINT;  // rank+tag matching, queue ports
  const int n = LCI_NUM_PROCESSES;
  const LCI_tag_t bad_tag = static_cast<LCI_tag_t>(LCI_MAX_TAG) + 1;
  const size_t too_long = static_cast<size_t>(LCI_MEDIUM_SIZE) + 1;
  char* buf = static_cast<char*>(std::malloc(too_long));
  const LCI_short_t s = short_of(42);

  // LCI_sends
  EXPECT_FATAL(LCI_sends(nullptr, s, 0, 0));
  EXPECT_FATAL(LCI_sends(ep, s, -2, 0));
  EXPECT_FATAL(LCI_sends(ep, s, n, 0));
  EXPECT_FATAL(LCI_sends(ep, s, LCI_RANK_ANY, 0));  // a send needs a real rank
  EXPECT_FATAL(LCI_sends(ep_tag, s, LCI_RANK_ANY, 0));
  EXPECT_FATAL(LCI_sends(ep, s, 0, bad_tag));
  EXPECT_FATAL(LCI_sends(ep, s, 0, UINT32_MAX));

  // LCI_recvs
  EXPECT_FATAL(LCI_recvs(nullptr, 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvs(ep, -2, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvs(ep, n, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvs(ep, LCI_RANK_ANY, 0, cq, nullptr));  // rank+tag endpoint
  EXPECT_FATAL(LCI_recvs(ep, 0, bad_tag, cq, nullptr));
  // (A live completion object of another kind than the port's is accepted
  // and signalled as its own kind, in every build: integration.misuse.
  // sync_on_queue_port. Only a dead or foreign one is refused.)
  EXPECT_FATAL(LCI_recvs(ep, 0, 0, reinterpret_cast<LCI_comp_t>(buf), nullptr));

  // LCI_sendm, LCI_sendmn
  EXPECT_FATAL(LCI_sendm(nullptr, mbuf(buf, 8), 0, 0));
  EXPECT_FATAL(LCI_sendm(ep, mbuf(buf, 8), -2, 0));
  EXPECT_FATAL(LCI_sendm(ep, mbuf(buf, 8), n, 0));
  EXPECT_FATAL(LCI_sendm(ep, mbuf(buf, 8), 0, bad_tag));
  EXPECT_FATAL(LCI_sendm(ep, mbuf(buf, too_long), 0, 0));
  EXPECT_FATAL(LCI_sendm(ep, mbuf(nullptr, 8), 0, 0));
  EXPECT_FATAL(LCI_sendmn(nullptr, mbuf(buf, 8), 0, 0));
  EXPECT_FATAL(LCI_sendmn(ep, mbuf(buf, 8), -2, 0));
  EXPECT_FATAL(LCI_sendmn(ep, mbuf(buf, 8), n, 0));
  EXPECT_FATAL(LCI_sendmn(ep, mbuf(buf, 8), 0, bad_tag));
  EXPECT_FATAL(LCI_sendmn(ep, mbuf(buf, too_long), 0, 0));

  // LCI_sendmc: the completion goes to the command port.
  EXPECT_FATAL(LCI_sendmc(nullptr, mbuf(buf, 8), 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_sendmc(ep, mbuf(buf, 8), -2, 0, cq, nullptr));
  EXPECT_FATAL(LCI_sendmc(ep, mbuf(buf, 8), n, 0, cq, nullptr));
  EXPECT_FATAL(LCI_sendmc(ep, mbuf(buf, 8), 0, bad_tag, cq, nullptr));
  EXPECT_FATAL(LCI_sendmc(ep, mbuf(buf, too_long), 0, 0, cq, nullptr));

  // LCI_recvm
  EXPECT_FATAL(LCI_recvm(nullptr, mbuf(buf, 8), 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvm(ep, mbuf(buf, 8), -2, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvm(ep, mbuf(buf, 8), n, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvm(ep, mbuf(buf, 8), LCI_RANK_ANY, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvm(ep, mbuf(buf, 8), 0, bad_tag, cq, nullptr));
  EXPECT_FATAL(LCI_recvm(ep, mbuf(nullptr, 8), 0, 0, cq, nullptr));

  // LCI_recvmn: the completion is the only way to learn the buffer.
  EXPECT_FATAL(LCI_recvmn(nullptr, 0, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvmn(ep, 0, 0, nullptr, nullptr));
  EXPECT_FATAL(LCI_recvmn(ep_sync, 0, 0, nullptr, nullptr));
  EXPECT_FATAL(LCI_recvmn(ep, -2, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvmn(ep, n, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvmn(ep, LCI_RANK_ANY, 0, cq, nullptr));
  EXPECT_FATAL(LCI_recvmn(ep, 0, bad_tag, cq, nullptr));

  // LCI_mbuffer_free: only LCI medium buffers.
  char on_stack[16];
  EXPECT_FATAL(LCI_mbuffer_free(mbuf(on_stack, sizeof(on_stack))));
  EXPECT_FATAL(LCI_mbuffer_free(mbuf(buf, 8)));
  EXPECT_FATAL(LCI_mbuffer_free(mbuf(nullptr, 0)));

  std::free(buf);
}

// Correct calls after all the rejected ones: a medium exchange with the peer
// on LCI_UR_ENDPOINT, a tag-matched LCI_RANK_ANY receive, an LCI buffer round
// trip, and a synchronizer.
void still_works(LCI_comp_t cq, LCI_endpoint_t ep_tag) {
  const int peer = (LCI_RANK ^ 1) < LCI_NUM_PROCESSES ? (LCI_RANK ^ 1) : LCI_RANK;
  char out[64], in[64];
  for (int i = 0; i < 64; ++i) out[i] = static_cast<char>(LCI_RANK + i);

  // rank+tag, queue
  EXPECT_OK(LCI_recvm(LCI_UR_ENDPOINT, mbuf(in, 64), peer, 7, cq, in));
  LCI_error_t rc;
  while ((rc = LCI_sendm(LCI_UR_ENDPOINT, mbuf(out, 64), peer, 7)) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
  EXPECT_OK(rc);
  LCI_request_t r = pop(cq);
  EXPECT_TRUE(r.flag == LCI_OK && r.rank == peer && r.tag == 7 && r.type == LCI_MEDIUM &&
              r.data.mbuffer.address == in && r.data.mbuffer.length == 64 &&
              r.user_context == in);
  EXPECT_TRUE(in[0] == static_cast<char>(peer) && in[63] == static_cast<char>(peer + 63));

  // tag matching with LCI_RANK_ANY, into an LCI buffer (recvmn), sent from an
  // LCI buffer (sendmn).
  EXPECT_OK(LCI_recvmn(ep_tag, LCI_RANK_ANY, LCI_MAX_TAG, cq, nullptr));
  LCI_mbuffer_t mb;
  while (LCI_mbuffer_alloc(LCI_UR_DEVICE, &mb) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  std::memcpy(mb.address, out, 64);
  mb.length = 64;
  while ((rc = LCI_sendmn(ep_tag, mb, peer, LCI_MAX_TAG)) == LCI_ERR_RETRY)
    LCI_progress(LCI_UR_DEVICE);
  EXPECT_OK(rc);
  r = pop(cq);
  EXPECT_TRUE(r.flag == LCI_OK && r.rank == peer && r.tag == static_cast<LCI_tag_t>(LCI_MAX_TAG) &&
              r.type == LCI_MEDIUM && r.data.mbuffer.length == 64 &&
              std::memcmp(r.data.mbuffer.address, in, 64) == 0);
  if (r.data.mbuffer.address) EXPECT_OK(LCI_mbuffer_free(r.data.mbuffer));

  // synchronizer
  LCI_comp_t sync;
  EXPECT_OK(LCI_sync_create(LCI_UR_DEVICE, 1, &sync));
  LCI_request_t sig;
  std::memset(&sig, 0, sizeof(sig));
  sig.rank = 3;
  EXPECT_OK(LCI_sync_signal(sync, sig));
  LCI_request_t got;
  EXPECT_OK(LCI_sync_test(sync, &got));
  EXPECT_TRUE(got.rank == 3);
  EXPECT_OK(LCI_sync_free(&sync));
  EXPECT_OK(LCI_barrier());
}

// Rank 0 learns every rank's failure count; returns the total.
int gather_failures(LCI_comp_t cq) {
  const LCI_tag_t tag = 1000;
  if (LCI_RANK != 0) {
    while (LCI_sends(LCI_UR_ENDPOINT, short_of(static_cast<uint64_t>(g_failures)), 0, tag) ==
           LCI_ERR_RETRY)
      LCI_progress(LCI_UR_DEVICE);
    return g_failures;
  }
  int total = g_failures;
  for (int rank = 1; rank < LCI_NUM_PROCESSES; ++rank) {
    LCI_recvs(LCI_UR_ENDPOINT, rank, tag, cq, nullptr);
    LCI_request_t r = pop(cq);
    uint64_t v;
    std::memcpy(&v, r.data.immediate.val, sizeof(v));
    total += static_cast<int>(v);
  }
  return total;
}

}  // namespace

int main() {
  before_initialize();
  EXPECT_OK(LCI_initialize());

  LCI_comp_t cq, sync, handler;
  EXPECT_OK(LCI_queue_create(LCI_UR_DEVICE, &cq));
  EXPECT_OK(LCI_sync_create(LCI_UR_DEVICE, 1, &sync));
  EXPECT_OK(LCI_handler_create(LCI_UR_DEVICE, on_completion, &handler));

  // Endpoints are created in the same order on every rank.
  LCI_plist_t plist;
  LCI_endpoint_t ep_sync, ep_tag;
  EXPECT_OK(LCI_plist_create(&plist));
  EXPECT_OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC));
  EXPECT_OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_SYNC));
  EXPECT_OK(LCI_plist_set_default_comp(plist, sync));
  EXPECT_OK(LCI_endpoint_init(&ep_sync, LCI_UR_DEVICE, plist));
  EXPECT_OK(LCI_plist_free(&plist));
  EXPECT_OK(LCI_plist_create(&plist));
  EXPECT_OK(LCI_plist_set_match_type(plist, LCI_MATCH_TAG));
  EXPECT_OK(LCI_endpoint_init(&ep_tag, LCI_UR_DEVICE, plist));
  EXPECT_OK(LCI_plist_free(&plist));

  devices_and_progress(cq);
  plists(cq);
  endpoints();
  queues(sync);
  syncs_and_handlers(cq);
  two_sided(cq, ep_sync, ep_tag);
  still_works(cq, ep_tag);

  const int own_at_gather = g_failures;
  const int all_at_gather = gather_failures(cq);  // meaningful on rank 0
  EXPECT_OK(LCI_endpoint_free(&ep_sync));
  EXPECT_OK(LCI_endpoint_free(&ep_tag));
  EXPECT_OK(LCI_sync_free(&sync));
  EXPECT_OK(LCI_queue_free(&cq));
  const int rank = LCI_RANK;
  EXPECT_OK(LCI_finalize());

  // After LCI_finalize the runtime is gone again.
  int flag = -1;
  EXPECT_OK(LCI_initialized(&flag));
  EXPECT_TRUE(flag == 0);
  EXPECT_FATAL(LCI_finalize());
  EXPECT_FATAL(LCI_barrier());

  std::printf("debug_checks: rank %d: %d checks, %d failed\n", rank, g_checks, g_failures);
  std::fflush(stdout);
  // The verdict goes to stderr, after the library's messages on that stream.
  if (g_failures) std::fprintf(stderr, "debug_checks: rank %d FAIL\n", rank);
  if (rank == 0 && all_at_gather + (g_failures - own_at_gather) == 0)
    std::fprintf(stderr, "debug_checks: PASS (%d checks per rank, all ranks passed)\n", g_checks);
  return g_failures ? 1 : 0;
}
