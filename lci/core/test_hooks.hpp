// Fault injection for LCI's own tests, off unless the process was started
// with LCI_TEST_HOOKS=1. Declared for the tests in
// tests/integration/test_hooks.h; nothing here is part of the LCI API.
//
//   LCIT_send_raw(ep, rank, imm, data, length): sends `length` bytes with
//       the 32-bit header `imm` as chosen (any kind, endpoint and tag) as
//       one ordinary message of ep's device: what a faulty or hostile peer
//       could put on the wire.
//   LCIT_fail_next_rdma(): the next putl/putv/getl/getv of this process, or
//       the RDMA writes of the next sendl/sendv/putla/putva whose RTR
//       arrives here, are completed as if the network had reported a
//       failure for them.
// Both return LCI_ERR_FEATURE_NA when the hooks are off.
//   LCIT_dropped_messages(): arriving messages this process dropped as
//       malformed (validate.hpp), hooks on or off.
#pragma once

#include <atomic>

namespace lci {

// Set by LCIT_fail_next_rdma; start_rdma and the RTR handler take it (one
// relaxed load per RDMA operation, none on the short and medium paths).
extern std::atomic<bool> g_test_fail_next_rdma;

}  // namespace lci
