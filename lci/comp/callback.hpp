// comp_callback: a completion object that calls a function with a context
// and the request: the form the LCI 2 interface's own kinds (handler,
// counter, graph, a program's comp_impl_t) take in the core, which signals
// it like any other object. The function runs on the signalling thread, as
// a handler's does (comp/handler.hpp), and may call LCI.
#pragma once

#include "lci.h"
#include "lci/comp/comp.hpp"

namespace lci {

// Its type tag (comp_base::type): no value of the C API's LCI_comp_type_t.
inline constexpr int comp_type_callback = 0x40;

class comp_callback : public comp_base {
 public:
  using function = void (*)(void* context, const LCI_request_t& request);
  comp_callback(function fn, void* context) noexcept
      : comp_base(comp_type_callback), fn_(fn), context_(context) {}
  ~comp_callback() = default;  // comp_base clears the magic
  comp_callback(const comp_callback&) = delete;
  comp_callback& operator=(const comp_callback&) = delete;

  void signal(const LCI_request_t& r) const { fn_(context_, r); }
  void* context() const noexcept { return context_; }

 private:
  const function fn_;
  void* const context_;
};

}  // namespace lci
