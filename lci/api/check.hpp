// Argument validation for the C entry points.
//
// In every build, the checks that cost a compare or two (LCI_ALWAYS_*).
// With -DLCI_DEBUG=ON every call also validates its arguments and, on bad input,
// prints one line naming the call and the argument and returns
// LCI_ERR_FATAL. Handles are checked against a registry of live objects
// (not by reading the object, which may have been freed). In release builds
// those checks (LCI_CHECK) compile to nothing.
#pragma once

#include "lci.h"
#include "lci/core/config.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/handles.hpp"
#include "lci/core/runtime.hpp"

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
// `comp`, unless the port's type is LCI_COMPLETION_NONE (then anything
// goes), is a live completion object of any kind (it is signalled as its
// own kind). nullptr is allowed unless `required`.
LCI_error_t check_port_comp(const char* call, const char* arg, LCI_endpoint_t ep,
                            LCI_port_t port, LCI_comp_t comp, bool required);
// A plist's default completion object is live (any kind, as above).
LCI_error_t check_plist_default_comp(const char* call, int msg_type, LCI_comp_t comp);
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

namespace lci::refuse {

// The checks of every build (LCI_ALWAYS_* below): the inline tests are a
// compare or two on values the call loads anyway; these cold functions
// print the line that names the call, the argument and the fix, and return
// LCI_ERR_FATAL.
[[gnu::cold, gnu::noinline]] LCI_error_t peer(const char* call, LCI_endpoint_t ep, int rank,
                                              LCI_tag_t tag);
[[gnu::cold, gnu::noinline]] LCI_error_t medium(const char* call, const char* arg, size_t length);
[[gnu::cold, gnu::noinline]] LCI_error_t null_handle(const char* call, const char* arg);
[[gnu::cold, gnu::noinline]] LCI_error_t rank(const char* call, const char* arg, int value);

}  // namespace lci::refuse

// Checks of every build, release included: what would otherwise corrupt
// memory, crash or hang (a NULL handle, a rank or tag out of range, a
// medium buffer longer than a packet, a call before LCI_initialize) returns
// LCI_ERR_FATAL with one line. Debug builds run the exhaustive checks
// (LCI_CHECK) besides; both refuse these cases alike.
//
// The common test of a send's or receive's endpoint, rank and tag: the
// rank against the endpoint's send_rank_max or recv_rank_max.
#define LCI_PEER_ARGS_UNUSUAL(ep, rank, tag, limit)                                       \
  __builtin_expect((ep) == nullptr ||                                                     \
                       static_cast<unsigned>(rank) >                                      \
                           reinterpret_cast<const ::lci::endpoint*>(ep)->limit ||         \
                       (tag) > 65535u,                                                    \
                   0)
//
// The checks that read the object a handle names run, in debug builds,
// after the debug check of that handle (LCI_CHECK, below), which finds a
// freed or foreign handle in the registry without reading it.
#define LCI_ALWAYS_SEND(call, ep, rank, tag)                                              \
  do {                                                                                    \
    LCI_CHECK(::lci::debug::check_send(call, ep, rank, tag));                       \
    if (LCI_PEER_ARGS_UNUSUAL(ep, rank, tag, send_rank_max))                              \
      return ::lci::refuse::peer(call, ep, rank, tag);                                    \
  } while (0)
#define LCI_ALWAYS_RECV(call, ep, rank, tag)                                              \
  do {                                                                                    \
    LCI_CHECK(::lci::debug::check_recv(call, ep, rank, tag));                       \
    if (LCI_PEER_ARGS_UNUSUAL(ep, rank, tag, recv_rank_max))                              \
      return ::lci::refuse::peer(call, ep, rank, tag);                                    \
  } while (0)
// (After LCI_ALWAYS_SEND: `ep` is a live endpoint.)
#define LCI_ALWAYS_MEDIUM_EP(call, ep, arg, buffer)                                           \
  do {                                                                                        \
    if (__builtin_expect((buffer).length >                                                    \
                             reinterpret_cast<const ::lci::endpoint*>(ep)->medium_max,        \
                         0))                                                                  \
      return ::lci::refuse::medium(call, arg, (buffer).length);                               \
  } while (0)
#define LCI_ALWAYS_MEDIUM(call, arg, buffer)                                                  \
  do {                                                                                        \
    if (__builtin_expect((buffer).length > static_cast<size_t>(::lci::g_config.medium_size), 0)) \
      return ::lci::refuse::medium(call, arg, (buffer).length);                               \
  } while (0)
#define LCI_ALWAYS_HANDLE(call, arg, handle)                                                  \
  do {                                                                                        \
    if (__builtin_expect((handle) == nullptr, 0)) return ::lci::refuse::null_handle(call, arg); \
  } while (0)
#define LCI_ALWAYS_RANK(call, arg, value)                                                     \
  do {                                                                                        \
    if (__builtin_expect(static_cast<unsigned>(value) >= ::lci::g_nranks, 0))                 \
      return ::lci::refuse::rank(call, arg, value);                                           \
  } while (0)
#define LCI_ALWAYS_CHECK(expr)                                                                \
  do {                                                                                        \
    const LCI_error_t lci_always_rc_ = (expr);                                                \
    if (lci_always_rc_ != LCI_OK) return lci_always_rc_;                                      \
  } while (0)

// Evaluates a check in debug builds and returns its failure from the caller.
#if LCI_ENABLE_DEBUG
#define LCI_CHECK(expr) LCI_ALWAYS_CHECK(expr)
#define LCI_DEBUG_ONLY(stmt) stmt
#else
#define LCI_CHECK(expr) \
  do {                  \
  } while (0)
#define LCI_DEBUG_ONLY(stmt)
#endif
