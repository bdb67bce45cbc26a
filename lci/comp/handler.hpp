// comp_handler: a completion object that calls a user function with the
// request. The function runs on the signalling thread (inside LCI_progress or
// a posting call), possibly on several threads at once; it must be
// thread-safe, short, and must not call LCI. Immutable after construction.
#pragma once

#include "lci.h"
#include "lci/comp/comp.hpp"

namespace lci {

class comp_handler : public comp_base {
 public:
  explicit comp_handler(LCI_handler_t fn) noexcept
      : comp_base(LCI_COMPLETION_HANDLER), fn_(fn) {}
  ~comp_handler() = default;  // comp_base clears the magic
  comp_handler(const comp_handler&) = delete;
  comp_handler& operator=(const comp_handler&) = delete;

  void signal(const LCI_request_t& r) const { fn_(r); }
  LCI_handler_t function() const noexcept { return fn_; }

 private:
  const LCI_handler_t fn_;
};

}  // namespace lci
