// The out-of-line eager send and receives of the C entry points (eager.hpp:
// send_eager_plain, post_recv_plain, post_recv_packet, send_eager_entry,
// recvm_entry), every argument in a register. A file of their own: in eager.cpp their bodies would take the
// inlining budget of the arrival handlers.
#include "lci/core/eager.hpp"
#include "lci/util/log.hpp"

namespace lci {

post_status send_eager_plain(device& d, uint32_t imm, void* address, size_t length, int rank,
                             const trailer* tr) {
  return send_eager_body(d, nullptr, imm, address, length, rank, 0, nullptr, nullptr, tr);
}

void post_recv_plain(endpoint* ep, uint64_t key, void* buffer, size_t capacity, LCI_comp_t comp,
                     void* user_context) {
  post_recv_keyed(ep, key, buffer, capacity, false, comp, user_context);
}

void post_recv_packet(endpoint* ep, uint64_t key, LCI_comp_t comp, void* user_context) {
  post_recv_keyed(ep, key, nullptr, 0, true, comp, user_context);
}

LCI_error_t send_eager_entry(endpoint* ep, uint32_t imm, void* address, size_t length, int rank,
                             const char* call) noexcept try {
  if (send_eager_body(*ep->dev, nullptr, imm, address, length, rank, 0, nullptr, nullptr,
                      nullptr) != post_status::ok)
    return LCI_ERR_RETRY;
  ep->issued.add(rank);
  return LCI_OK;
} catch (...) {
  log_exception(call);
  return LCI_ERR_FATAL;
}

LCI_error_t recvm_entry(endpoint* ep, uint64_t key, void* buffer, size_t capacity, LCI_comp_t comp,
                        void* user_context) noexcept try {
  post_recv_keyed(ep, key, buffer, capacity, false, comp, user_context);
  return LCI_OK;
} catch (...) {
  log_exception("LCI_recvm");
  return LCI_ERR_FATAL;
}

}  // namespace lci
