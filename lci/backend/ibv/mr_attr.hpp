// What the verbs backend asks of a memory registration and of one work
// request, as pure functions (tests/unit/test_ibv.cpp).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "lci/backend/net_types.hpp"

namespace lci::ibv {

// ibv_reg_mr access flags. A source gets none (local read is implied): a
// flag that lets the HCA write (IBV_ACCESS_LOCAL_WRITE, and the remote ones,
// which require it) makes the kernel pin the pages for writing, so
// ibv_reg_mr fails with EFAULT on read-only memory.
inline int mr_access_flags(net::mr_access access, bool odp) {
  int flags = 0;
  if (access != net::mr_access::source) flags |= IBV_ACCESS_LOCAL_WRITE;
  if (access == net::mr_access::remote) flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (odp) flags |= IBV_ACCESS_ON_DEMAND;
  return flags;
}

// The most one work request moves: the port's max_msg_sz, and never more
// than InfiniBand's 2^31 bytes (which also keeps every length within the
// 32-bit ibv_sge::length).
inline size_t message_limit_of_port(uint32_t port_max_msg_sz) {
  constexpr size_t ib_max = size_t{1} << 31;
  return port_max_msg_sz && port_max_msg_sz < ib_max ? port_max_msg_sz : ib_max;
}

}  // namespace lci::ibv
