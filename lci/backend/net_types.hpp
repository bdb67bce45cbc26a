// Types shared by the protocol layer and every backend (see backend.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lci::net {

enum class status : int { ok = 0, retry = 1 };

enum class completion_kind : uint8_t { send_done, recv };

struct completion {
  completion_kind kind;
  int src_rank;   // recv: the sender
  uint32_t imm;   // recv: the sender's immediate data
  size_t length;  // recv: bytes received
  void* ctx;      // the ctx given when the operation was posted
};

// A memory registration as the protocol layer sees it.
struct mr {
  void* handle = nullptr;  // backend object (fid_mr*, ibv_mr*)
  void* desc = nullptr;    // local descriptor to pass with operations
  uint64_t rkey = 0;       // key a peer uses for RDMA
};

}  // namespace lci::net

