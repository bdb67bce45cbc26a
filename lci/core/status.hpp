// The outcome of posting an operation inside the core, with the reason for
// a refusal. Only the API layer folds it into the C API's LCI_error_t
// (every retry reason is LCI_ERR_RETRY there); inside, a refusal says why,
// and profile builds count each reason apart.
#pragma once

#include <cstdint>

#include "lci.h"

namespace lci {

enum class post_status : uint8_t {
  ok = 0,
  retry_queue_full,       // the network's send queue is full
  retry_no_packet,        // the packet pool is empty
  retry_backlog,          // earlier refused operations wait in the backlog
  retry_no_registration,  // a buffer could not be registered
};
inline constexpr int post_status_count = 5;

inline constexpr LCI_error_t to_error(post_status s) {
  return s == post_status::ok ? LCI_OK : LCI_ERR_RETRY;
}

inline const char* retry_reason(post_status s) {
  switch (s) {
    case post_status::ok: return "ok";
    case post_status::retry_queue_full: return "send queue full";
    case post_status::retry_no_packet: return "no free packet";
    case post_status::retry_backlog: return "backlog not empty";
    case post_status::retry_no_registration: return "registration failed";
  }
  return "?";
}

}  // namespace lci
