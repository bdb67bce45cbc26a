// Argument validation for the C entry points (debug builds only).
//
// With -DLCI_DEBUG=ON every call validates its arguments and, on bad input,
// prints one line naming the call and the argument and returns
// LCI_ERR_FATAL. Handles are checked against a registry of live objects
// (not by reading the object, which may have been freed). In release builds
// every check compiles to nothing.
#pragma once

#include "lci.h"
#include "lci/core/endpoint.hpp"  // port_comp_type_t
#include "lci/core/handles.hpp"

namespace lci::debug {

// Prints "call: message" and returns LCI_ERR_FATAL.
LCI_error_t fail(const char* call, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Each returns LCI_OK or the result of fail().
LCI_error_t check_handle(const char* call, const char* arg, const void* handle, handle_kind kind);
LCI_error_t check_comp_any(const char* call, const char* arg, LCI_comp_t comp);
LCI_error_t check_endpoint(const char* call, LCI_endpoint_t ep);
// Every send and one-sided call: endpoint, destination rank, tag.
LCI_error_t check_send(const char* call, LCI_endpoint_t ep, int rank, LCI_tag_t tag);
// Every receive: endpoint, source rank (a tag-matching endpoint ignores
// it), tag.
LCI_error_t check_recv(const char* call, LCI_endpoint_t ep, int rank, LCI_tag_t tag);
LCI_error_t check_device(const char* call, LCI_device_t device);
LCI_error_t check_rank(const char* call, int rank, bool allow_any);
LCI_error_t check_tag(const char* call, LCI_tag_t tag);
// `comp` must suit the endpoint's port: the kind of that port's type, or
// anything when the port's type is LCI_COMPLETION_NONE. nullptr is allowed
// unless `required`.
LCI_error_t check_port_comp(const char* call, const char* arg, LCI_endpoint_t ep,
                            LCI_port_t port, LCI_comp_t comp, bool required);
// A plist's default completion object against its message-port type.
LCI_error_t check_plist_default_comp(const char* call, port_comp_type_t msg_type, LCI_comp_t comp);
LCI_error_t check_medium_length(const char* call, const char* arg, LCI_mbuffer_t buffer);
// A local long buffer: its segment (if not LCI_SEGMENT_ALL) is live, local,
// registered on the device of `ep` (when given), and covers the buffer;
// address non-NULL unless length is 0.
LCI_error_t check_local_lbuffer(const char* call, const char* arg, const LCI_lbuffer_t& buffer,
                                LCI_endpoint_t ep = nullptr);
// A remote long buffer: a deserialized segment of the device group of `ep`
// (when given) that covers [address, address+length).
LCI_error_t check_remote_lbuffer(const char* call, const char* arg, const LCI_lbuffer_t& buffer,
                                 LCI_endpoint_t ep = nullptr);
// `check_piggy`: piggy_back.length is what travels and must fit the protocol
// (false where it is a receive capacity). `ep`: as for the buffers above.
LCI_error_t check_iovec(const char* call, const char* arg, const LCI_iovec_t& iov, bool local,
                        bool allow_null_array, bool check_piggy = true,
                        LCI_endpoint_t ep = nullptr);

}  // namespace lci::debug

// Evaluates a check in debug builds and returns its failure from the caller.
#if LCI_ENABLE_DEBUG
#define LCI_CHECK(expr)                                   \
  do {                                                    \
    LCI_error_t lci_check_rc_ = (expr);                   \
    if (lci_check_rc_ != LCI_OK) return lci_check_rc_;    \
  } while (0)
#define LCI_DEBUG_ONLY(stmt) stmt
#else
#define LCI_CHECK(expr) \
  do {                  \
  } while (0)
#define LCI_DEBUG_ONLY(stmt)
#endif
