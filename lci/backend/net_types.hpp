// Types shared by the protocol layer and every backend (see backend.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lci::net {

enum class status : int { ok = 0, retry = 1 };

enum class completion_kind : uint8_t {
  send_done,     // a posted send finished; its buffer is free
  recv,          // a message arrived in a posted receive buffer
  rma_done,      // a posted RDMA write or read finished locally
  remote_write,  // a peer's RDMA write with immediate data landed here
  failed,        // a posted operation failed (ctx and error set)
};

struct completion {
  completion_kind kind;
  int src_rank;   // recv: the sender
  uint32_t imm;   // recv: the sender's immediate data
  size_t length;  // recv: bytes received
  void* ctx;      // the ctx given when the operation was posted
  int error;      // failed: the provider's error number
};

// A memory registration as the protocol layer sees it.
struct mr {
  void* handle = nullptr;  // backend object (fid_mr*, ibv_mr*)
  void* desc = nullptr;    // local descriptor to pass with operations
  uint64_t rkey = 0;       // key a peer uses for RDMA
};

}  // namespace lci::net

