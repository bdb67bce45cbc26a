// The LCI_request_t a completion object receives: built here for every
// kind of operation (eager, rendezvous, RDMA), so that the modules that
// signal completions need nothing of each other.
#pragma once

#include <cstddef>

#include "lci.h"
#include "lci/comp/signal.hpp"

namespace lci {

inline LCI_request_t make_request(int rank, LCI_tag_t tag, LCI_data_type_t type,
                                  void* user_context) {
  LCI_request_t r;
  r.flag = LCI_OK;
  r.rank = rank;
  r.tag = tag;
  r.type = type;
  r.user_context = user_context;
  return r;
}

inline void signal_medium(LCI_comp_t comp, int rank, LCI_tag_t tag, void* address,
                          size_t length, void* user_context) {
  LCI_request_t r = make_request(rank, tag, LCI_MEDIUM, user_context);
  r.data.mbuffer.address = address;
  r.data.mbuffer.length = length;
  comp_signal(comp, r);
}

}  // namespace lci
