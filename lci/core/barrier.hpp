// LCI's own barrier (LCI_barrier, and the one inside LCI_initialize and
// LCI_finalize), defined in barrier.cpp.
#pragma once

#include <cstdint>

namespace lci {

struct device;

// LCI_barrier: a dissemination barrier over LCI's private endpoint.
// Tag of round `round` of barrier number `seq` (16 bits, the wire's tag
// width): | seq:11 | round:5 |. A dissemination barrier over n processes
// has ceil(log2 n) rounds, at most 31 for any int n, so rounds never reach
// the sequence bits; barriers 2048 apart reuse a tag, and by then every
// message of the older one has long been matched.
inline constexpr uint32_t barrier_round_bits = 5;
inline constexpr uint32_t barrier_seq_mask = (1u << (16 - barrier_round_bits)) - 1;
inline constexpr uint32_t barrier_tag(uint32_t seq, uint32_t round) {
  return (seq & barrier_seq_mask) << barrier_round_bits | round;
}
static_assert(sizeof(int) * 8 - 1 < (1u << barrier_round_bits),
              "every round of a barrier over INT_MAX processes fits the round bits");
static_assert(barrier_tag(barrier_seq_mask, (1u << barrier_round_bits) - 1) == 0xffffu,
              "barrier tags fit 16 bits");
static_assert(barrier_tag(1, 0) != barrier_tag(0, 31) && barrier_tag(0, 16) != barrier_tag(1, 0),
              "rounds do not spill into the sequence bits");
// False (at once, or as soon as it is known) when a peer has failed
// (LCI_PEER_FAILURE=continue): the barrier cannot complete without it.
bool runtime_barrier();
// The same, progressing `also` too while it waits (a device whose backlog
// may hold messages peers are waiting for).
bool runtime_barrier_with(device& also);

}  // namespace lci
