// The switches of the test hooks (test_hooks.hpp) that the data path reads:
// set by the LCIT_* calls, 0 unless a test process set them. Kept apart from
// the hooks themselves (which reach into every module) so that the modules
// that read a switch depend on nothing but this header.
#pragma once

#include <atomic>
#include <cstddef>

#include "lci/util/test_count.hpp"

namespace lci {

// Set by LCIT_fail_next_rdma; start_rdma takes it (one relaxed load per RDMA
// operation, none on the short and medium paths).
inline std::atomic<bool> g_test_fail_next_rdma{false};
// Counts set by LCIT_refuse_next_recv_posts and LCIT_fail_next_registrations
// (one relaxed load per receive post or registration while they are 0).
inline std::atomic<int> g_test_refuse_recv_posts{0};
inline std::atomic<int> g_test_fail_registrations{0};
// Set by LCIT_limit_message_size (0: no limit).
inline std::atomic<size_t> g_test_max_message{0};
// Set by LCIT_fail_next_sends: the libfabric backend reads it only where
// the hooks are on (net::settings::test_fail_sends).
inline std::atomic<int> g_test_fail_sends{0};
// Set by LCIT_lose_next_sends (net::settings::test_lose_sends).
inline std::atomic<int> g_test_lose_sends{0};
// Set by LCIT_native_refuse_cma (-1: none).
inline std::atomic<int> g_test_no_cma_rank{-1};

}  // namespace lci
