// Peers that failed (LCI_PEER_FAILURE=continue): which ranks are known
// dead, what that does to the operations that involved them, and the
// program's callback (LCIX_peer_failed, LCIX_on_peer_failure).
//
// A failure is reported once per rank, from any thread (the native
// transport's liveness check, LCIT_fail_peer): mark_peer_failed sets the
// rank's flag and bumps a process-wide epoch. Every device notices the new
// epoch in its next progress pass (device::progress_pass: at least every
// 1024th idle LCI_progress, nothing added to the idle path) and sweeps
// once per failed rank (progress.cpp, sweep_failed_peers): the receives posted for that rank complete with
// LCI_ERR_FATAL and the rank, the messages from it that wait in the
// matching table and the control messages queued to it are freed. Then the
// program's callback runs once per failed rank, inside LCI_progress.
//
// New operations naming a failed rank return LCI_ERR_FATAL at once
// (peer_refused, checked by the API entry points): never LCI_ERR_RETRY.
#pragma once

#include <atomic>
#include <cstdint>

namespace lci {

// Any rank failed in this process's view (read first, so the entry points
// pay one relaxed load while none has).
extern std::atomic<bool> g_any_peer_failed;
// Bumped by every newly failed rank.
extern std::atomic<uint32_t> g_peer_failure_epoch;

// Whether LCI_PEER_FAILURE=continue (set at LCI_initialize).
bool peer_failure_continues();
void peer_failure_initialize(int nranks, bool continue_on_failure);
void peer_failure_finalize();

// Records that `rank` failed (idempotent; any thread). `why` is logged.
void mark_peer_failed(int rank, const char* why);
bool peer_failed(int rank);

// The check of the API entry points: true if `rank` is known dead.
[[gnu::always_inline]] inline bool peer_refused(int rank) {
  return __builtin_expect(g_any_peer_failed.load(std::memory_order_relaxed), 0) &&
         peer_failed(rank);
}

// Runs the program's callback once for each failed rank not reported yet
// (called by the device's sweep, progress.cpp: sweep_failed_peers).
void run_peer_failure_callbacks();
// The number of ranks (LCI_NUM_PROCESSES at LCI_initialize).
int peer_failure_ranks();

// LCIX_on_peer_failure.
void set_peer_failure_callback(void (*fn)(int rank, void* ctx), void* ctx);

}  // namespace lci
