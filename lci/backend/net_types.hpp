// Types shared by the protocol layer and every backend (see backend.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#if defined(__SANITIZE_THREAD__)
#define LCI_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LCI_TSAN 1
#endif
#endif

#ifdef LCI_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace lci::net {

// ThreadSanitizer does not see through the network library (it is not
// instrumented, and the causality of a message is carried by another
// process): a thread that writes an object, posts an operation naming it,
// and a thread that polls the completion and frees the object look
// unordered to it. Backends therefore mark every post as a release and every
// poll (before it runs the library's progress, which may itself write user
// buffers) as an acquire of one token per device.
// This orders all earlier posts before all later polls (a superset of the
// real ordering), so it can hide a race between accesses on both sides of a
// post/poll pair, but never invents one. Compiled away outside TSan builds.
inline void annotate_post([[maybe_unused]] const void* token) {
#ifdef LCI_TSAN
  __tsan_release(const_cast<void*>(token));
#endif
}
inline void annotate_poll([[maybe_unused]] const void* token) {
#ifdef LCI_TSAN
  __tsan_acquire(const_cast<void*>(token));
#endif
}

enum class status : int { ok = 0, retry = 1 };

// Evidence about a peer's liveness (settings::report_evidence). What each
// kind does is decided in one place (lci/core/peer_failure.cpp):
// connection_broke only raises suspicion; an authentic message clears it;
// pid_gone, listener_refuses and declared confirm death; still_silent
// confirms it once the peer has been suspected for the grace period.
enum class evidence : uint8_t {
  connection_broke,   // a send or RDMA piece to it failed (its connection reset or replaced)
  authentic_message,  // a message that proves its sender arrived from it
  still_silent,       // suspected, probed, and still no authentic message
  pid_gone,           // its process exited (pidfd, kill(pid, 0)): this host only
  listener_refuses,   // the kernel refuses a connection to its listening port
  declared,           // the program or a test declared it failed (LCIT_fail_peer, a notice)
};

// What the backends are told by their creator (the core fills every field
// from the configuration table once, at device creation: backend_settings()
// in lci/core/config.cpp). The backends read nothing else: no environment,
// no global of a higher layer. The initializers are neutral values, not the
// settings' defaults, which are declared once, in lci/core/settings.def.
struct settings {
  std::string backend_request;  // LCI_BACKEND: "" (automatic), "ofi" or "ibv"
  std::string ibv_device;       // LCI_IBV_DEVICE: "" (first with an active port)
  int ibv_port = 0;             // LCI_IBV_PORT: 0 (first active)
  int ibv_gid_index = -1;       // LCI_IBV_GID_IDX: -1 (automatic)
  bool ibv_use_odp = false;     // LCI_IBV_USE_ODP
  bool ibv_on_demand = false;   // LCI_IBV_ON_DEMAND
  int ofi_cq_data_size = 0;     // LCI_OFI_CQ_DATA_SIZE: 0 (the provider's), 4 or 8
  bool ofi_rma_messages = false;  // LCI_OFI_RMA_MESSAGES: with authentication, soft_rma.hpp
  int ofi_heartbeat_grace_s = 5;  // LCI_OFI_HEARTBEAT_GRACE: with authentication (ofi.hpp)
  size_t max_payload = 0;       // the largest message: the core's receive size
  // The native intra-node transport (backend/native).
  bool native_on = false;       // LCI_SHM
  bool native_cma = false;      // LCI_SHM_CMA
  uint64_t native_ring_cells = 0;  // LCI_SHM_RING_SIZE
  int native_map_all = 0;          // LCI_SHM_MAP_ALL
  int native_test_no_cma_rank = -1;  // LCI's tests: cross-memory attach to this rank counts as refused
  // LCI_PEER_FAILURE=continue: what a backend learns about a peer's
  // liveness is reported here (any thread), to the core's one owner of
  // peer states (lci/core/peer_failure.hpp), which decides what it means;
  // nullptr: a peer's loss ends the job.
  void (*report_evidence)(int rank, evidence e, const char* why) = nullptr;
  // ... whether a rank is declared dead (refused: nothing of it is acted
  // on, nothing more is sent to it on the backend's own account, such as
  // heartbeats); nullptr: none is.
  bool (*is_failed)(int rank) = nullptr;
  // ... and whether a rank is suspected (sends to it wait until it is
  // alive again or dead); nullptr: none is.
  bool (*is_suspected)(int rank) = nullptr;
  // LCI's tests (LCIT_fail_next_sends, only with LCI_TEST_HOOKS=1): a count
  // of message sends to fail as if their connection broke; nullptr: none.
  std::atomic<int>* test_fail_sends = nullptr;
  // LCIT_lose_next_sends: a count of authenticated messages to count as
  // sent and complete without sending them, as a connection that took them
  // and then broke would (tcp reports a send complete once it is in the
  // local socket); nullptr: none.
  std::atomic<int>* test_lose_sends = nullptr;
};

// What a registration allows: `source` memory is only read by this
// process's operations (sent from, written to a peer), so read-only memory
// (string literals, PROT_READ mappings) can be registered; `local` memory is
// also received into and read into (the packet slab); `remote` memory is
// also read and written by peers' RDMA with the registration's key.
enum class mr_access : uint8_t { source, local, remote };

// The longest piece an RDMA transfer is split into: the configured
// LCI_MAX_SINGLE_MESSAGE_SIZE, within the most the backend moves in one
// operation (backend_max), and at least one byte.
constexpr size_t rdma_piece_size(size_t configured, size_t backend_max) {
  const size_t n = configured < backend_max ? configured : backend_max;
  return n ? n : 1;
}

// completion::src_rank values that name no rank: the transport could not
// tell which job member sent the message (an address outside the job), or
// the message did not carry this job's token (see the ofi backend).
inline constexpr int unknown_source = -1;
inline constexpr int bad_token = -2;
// remote_write only: a member of the job (its token checked), which one the
// provider does not say (FI_SOURCE covers received messages, not RDMA
// writes); the rendezvous id names the operation, and so its peer.
inline constexpr int any_member = -3;

enum class completion_kind : uint8_t {
  send_done,     // a posted send finished; its buffer is free
  recv,          // a message arrived in a posted receive buffer
  rma_done,      // a posted RDMA write or read finished locally
  remote_write,  // a peer's RDMA write with immediate data landed here
  failed,        // a posted operation failed (ctx and error set)
  recv_failed,   // a message too long for the posted receive buffer ctx (now free)
  dropped,       // a malformed or hostile message the transport refused before any
                 // use: ctx is the static name of the field that failed, src_rank
                 // the claimed sender (or unknown_source), error 0 for a cell of
                 // the native transport, 1 for a network message
};

struct completion {
  completion_kind kind;
  int src_rank;   // recv, remote_write: the sender, or unknown_source / bad_token
  uint32_t imm;   // recv: the sender's immediate data
  size_t length;  // recv: bytes received
  void* ctx;      // the ctx given when the operation was posted
  int error;      // failed: the provider's error number
  bool sealed;    // recv: carries an authentication trailer (ofi_device::open_sealed)
  uint8_t admission;  // recv with sealed: what admit_sealed noted (the transport's values)
};

// A memory registration as the protocol layer sees it; handle == nullptr
// when the registration failed (the backend logged why).
struct mr {
  void* handle = nullptr;  // backend object (fid_mr*, ibv_mr*)
  void* desc = nullptr;    // local descriptor to pass with operations
  uint64_t rkey = 0;       // key a peer uses for RDMA
};

// Where a transport describes its state for the state dump
// (lci/core/state_dump.hpp): one call per line of text, without the
// "rank R dev D: " prefix the core adds. Diagnostics only, never on the
// data path; a transport reads its state there without waiting for a lock
// (try_lock_bounded) and says "busy" for what it could not read.
using describe_fn = std::function<void(const std::string& line)>;

}  // namespace lci::net

