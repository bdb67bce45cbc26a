// Which backend a device opens: LCI_BACKEND=ofi|ibv, or, unset, ibv when an
// active verbs port exists and the verbs backend was built, else ofi. A pure
// function of its inputs (tests/unit/test_ibv.cpp); the caller does the
// probing (ibv::probe_port) only when the answer depends on it.
#pragma once

#include <cstdint>
#include <string>

namespace lci::net {

enum class backend_kind : uint8_t { ofi, ibv };

struct backend_choice {
  backend_kind kind = backend_kind::ofi;
  std::string reason;  // why, for lci_info and the info log
  std::string error;   // non-empty: the request cannot be met (fatal, one line)
};

// request: the value of LCI_BACKEND ("" when unset; validated earlier).
// ibv_built: the verbs backend is compiled in. ibv_unavailable: "" when an
// active verbs port exists, else why not (ignored when !ibv_built or when
// request is "ofi").
inline backend_choice choose_backend(const std::string& request, bool ibv_built,
                                     const std::string& ibv_unavailable) {
  backend_choice c;
  if (request == "ofi") {
    c.kind = backend_kind::ofi;
    c.reason = "LCI_BACKEND=ofi";
  } else if (request == "ibv") {
    c.kind = backend_kind::ibv;
    c.reason = "LCI_BACKEND=ibv";
    if (!ibv_built)
      c.error = "LCI_BACKEND=ibv: this LCI was built without the verbs backend "
                "(libibverbs was not found when it was configured)";
    else if (!ibv_unavailable.empty())
      c.error = "LCI_BACKEND=ibv: " + ibv_unavailable;
  } else if (!request.empty()) {
    c.error = "environment variable LCI_BACKEND=\"" + request + "\" is malformed (expected ofi or ibv)";
  } else if (!ibv_built) {
    c.kind = backend_kind::ofi;
    c.reason = "built without the verbs backend";
  } else if (!ibv_unavailable.empty()) {
    c.kind = backend_kind::ofi;
    c.reason = ibv_unavailable;
  } else {
    c.kind = backend_kind::ibv;
    c.reason = "an active verbs device was found";
  }
  return c;
}

}  // namespace lci::net
