// The one owner of each peer's state (LCI_PEER_FAILURE=continue): alive,
// suspected or dead; what the transports learn about a peer's liveness
// (report_evidence), what that means, which ranks are known dead, what that
// does to the operations that involved them, and the program's callback
// (LCIX_peer_failed, LCIX_on_peer_failure).
//
// The rules (docs/failure.md, "Peer states"), all in peer_failure.cpp:
//   - a failed send or RDMA piece (the connection broke: reset, or replaced
//     by another process claiming the peer's address) makes the peer
//     suspected, never dead by itself;
//   - an authentic message from a suspected peer makes it alive again;
//   - its process gone (pid), its listening port refusing connections, or
//     a declaration (LCIT_fail_peer, a peer's notice) makes it dead;
//   - so does no authentic message for suspicion_grace_ns after it became
//     suspected, despite the transport's probes (still_silent).
// Every transport reports there and consults peer_refused / peer_suspected.
//
// A death is declared once per rank, from any thread: the rank's state
// becomes dead and a process-wide epoch is bumped. Every device notices the
// new epoch in its next progress pass (device::progress_pass: at least
// every 64th idle LCI_progress, nothing added to the idle path) and
// sweeps once per failed rank (progress.cpp, sweep_failed_peers): the
// receives posted for that rank complete with LCI_ERR_FATAL and the rank,
// the messages from it that wait in the matching table and the control
// messages queued to it are freed. Then the program's callback runs once
// per failed rank, inside LCI_progress. The end of a suspicion bumps the
// epoch too: the sends held while the peer was suspected go out again.
//
// New operations naming a failed rank return LCI_ERR_FATAL at once
// (peer_refused, checked by the API entry points): never LCI_ERR_RETRY.
// Sends to a suspected rank wait (LCI_ERR_RETRY) until it is alive or dead.
#pragma once

#include <atomic>
#include <cstdint>

#include "lci/backend/net_types.hpp"

namespace lci {

enum class peer_state : uint8_t { alive = 0, suspected = 1, dead = 2 };

// Any rank dead in this process's view (read first, so the entry points
// pay one relaxed load while none is).
extern std::atomic<bool> g_any_peer_failed;
// Any rank suspected or dead (the send path's one relaxed load).
extern std::atomic<bool> g_any_peer_troubled;
// Bumped by every newly dead rank and every suspicion that ends.
extern std::atomic<uint32_t> g_peer_failure_epoch;

// How long a suspected peer may stay without an authentic message before
// the transport's probes confirm its death (still_silent).
inline constexpr int64_t suspicion_grace_ns = int64_t{10} * 1000000000;

// Whether LCI_PEER_FAILURE=continue (set at LCI_initialize).
bool peer_failure_continues();
void peer_failure_initialize(int nranks, bool continue_on_failure);
void peer_failure_finalize();

// What a transport (or the core, or a test) learned about `rank`; applies
// the rules above (any thread). `why` is logged.
void report_evidence(int rank, net::evidence e, const char* why);
peer_state peer_state_of(int rank);
bool peer_failed(int rank);
bool peer_suspected_slow(int rank);
// Declares `rank` dead (report_evidence with evidence::declared).
void mark_peer_failed(int rank, const char* why);

// The check of the API entry points: true if `rank` is known dead.
[[gnu::always_inline]] inline bool peer_refused(int rank) {
  return __builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0) &&
         peer_failed(rank);
}
// The check of the send path: true while `rank` is suspected.
[[gnu::always_inline]] inline bool peer_suspected(int rank) {
  return __builtin_expect(g_any_peer_troubled.load(std::memory_order_relaxed), 0) &&
         peer_suspected_slow(rank);
}

// Runs the program's callback once for each failed rank not reported yet
// (called by the device's sweep, progress.cpp: sweep_failed_peers).
void run_peer_failure_callbacks();
// The number of ranks (LCI_NUM_PROCESSES at LCI_initialize).
int peer_failure_ranks();

// LCIX_on_peer_failure.
void set_peer_failure_callback(void (*fn)(int rank, void* ctx), void* ctx);

}  // namespace lci
