// lci.hpp - the LCI 2 C++ interface, on the same library as the LCI 1.7 C
// interface (lci.h).
//
// Names, signatures and semantics follow LCI 2's public interface
// (namespace lci): resources are handles (runtime_t, device_t, endpoint_t,
// comp_t, mr_t, packet_pool_t, matching_engine_t, net_context_t), and each
// operation `foo` comes in two forms: the function `foo(positional...)`
// and the object `foo_x(positional...)`, whose setters name the optional
// arguments and whose call operator runs it:
//
//   lci::status_t s = lci::post_send_x(rank, buf, size, tag, comp)
//                         .device(dev).user_context(ctx)();
//
// What is implemented, and how each operation maps onto the library, is in
// docs/lci2.md. Both interfaces may be used in one process (docs/lci2.md,
// "One process, both interfaces").
#ifndef LCI_API_LCI_HPP
#define LCI_API_LCI_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "lci_config.hpp"

#if defined(__GNUC__)
#define LCI_CXX_API __attribute__((visibility("default")))
#else
#define LCI_CXX_API
#endif

// The LCI 2 interface (lci.hpp); lci::detail is the library's side, not
// part of the interface.
namespace lci {

// ---- basic types ----------------------------------------------------------

// The network backend of a net context (net_context_attr_t::backend):
// reported; the backend is chosen by LCI_BACKEND (docs/configuration.md).
enum class attr_backend_t { none, ibv, ofi, ucx };

// The bits of a device's ofi_lock_mode attribute (device_attr_t): reported,
// not applied.
enum attr_net_lock_mode_t {
  LCI_NET_TRYLOCK_SEND = 1,
  LCI_NET_TRYLOCK_RECV = 1 << 1,
  LCI_NET_TRYLOCK_POLL = 1 << 2,
  LCI_NET_LOCK_MR = 1 << 3,
  LCI_NET_LOCK_ALL = LCI_NET_TRYLOCK_SEND | LCI_NET_TRYLOCK_RECV | LCI_NET_TRYLOCK_POLL |
                     LCI_NET_LOCK_MR,
  LCI_NET_TRYLOCK_MAX = 1 << 4,
};

// The kind of a matching engine (matching_engine_attr_t): reported, not
// used (an engine is one table).
enum class attr_matching_engine_type_t { queue, map };
// The kind of a completion object (comp_attr_t::comp_type); `custom` is a
// program's own comp_impl_t.
enum class attr_comp_type_t { sync, counter, cq, handler, graph, custom };
// The kind of a completion queue (alloc_cq_x::cq_type): accepted, not used.
enum class attr_cq_type_t { array_atomic, lcrq };
// The ibverbs on-demand-paging strategy of a net context: reported.
enum class attr_ibv_odp_strategy_t { none, explicit_odp, implicit_odp };
// The ibverbs prefetch strategy of a net context: reported.
enum class attr_ibv_prefetch_strategy_t { none, prefetch, prefetch_write, prefetch_no_fault };
// The ibverbs thread-domain strategy of a device: reported, not applied.
enum class attr_ibv_td_strategy_t { none, all_qp, per_qp };

// A value that may be unset (std::optional's role, for C++11 programs).
// A plain value type: not synchronized.
template <typename T>
struct option_t {
  // An unset value.
  option_t() : m_value(), m_is_set(false) {}
  // A set value. @param value the value.
  option_t(T value) : m_value(value), m_is_set(true) {}
  // A value, set or not. @param value the value. @param is_set whether it
  // counts as set.
  option_t(T value, bool is_set) : m_value(value), m_is_set(is_set) {}
  // The value if set. @param fallback what to return if it is not.
  // @return the value, or `fallback` when unset.
  T get_value_or(T fallback) const { return m_is_set ? m_value : fallback; }
  // Copies the value out if set. @param out where it goes (not written
  // when unset). @return whether it is set.
  bool get_set_value(T* out) const {
    if (m_is_set) *out = m_value;
    return m_is_set;
  }
  // The value, set or not. @return the stored value.
  T get_value() const { return m_value; }
  // Whether a value was set. @return true if it was.
  bool is_set() const { return m_is_set; }
  // The value, set or not. @return the stored value.
  operator T() const { return m_value; }
  T m_value;      // the value (meaningful when m_is_set)
  bool m_is_set;  // whether the value was set
};

// What a posting call did: done (complete now; its completion object is
// not signalled), posted (its completion object will be signalled once),
// retry (nothing happened: call again, after progress). Within each
// category the code says why. The *_min and *_max values bound the
// categories (error_t::is_done() and so on) and are never returned.
// Concepts: Completion kinds, Back-pressure and LCI_ERR_RETRY.
enum class errorcode_t {
  done_min,
  done,            // complete in the call
  done_backlog,    // taken into the device's backlog, buffer copied (allow_retry(false))
  done_max,
  posted_min,
  posted,          // the completion object will be signalled once
  posted_backlog,  // taken into the device's backlog, to be posted (allow_retry(false))
  posted_max,
  retry_min,
  retry,           // nothing happened (also: a progress call found no work)
  retry_init,      // the value of a default-constructed error_t
  retry_lock,      // a lock was busy
  retry_nopacket,  // no packet was free
  retry_nomem,     // no send slot or queue entry was free
  retry_backlog,   // the device's backlog is not empty: later operations wait behind it
  retry_max,
  fatal,           // refused for good (a net_* call with an invalid argument)
};

// The name of an error code. Thread-safe.
// @param errorcode the code.
// @return a static string, e.g. "done" or "retry_nopacket".
LCI_CXX_API const char* get_errorcode_str(errorcode_t errorcode);

// An errorcode_t with its category tests: what progress, test_drained
// and the net_* calls return. A plain value type.
struct error_t {
  errorcode_t errorcode;  // the code
  // errorcode_t::retry_init.
  error_t() : errorcode(errorcode_t::retry_init) {}
  // @param e the code.
  error_t(errorcode_t e) : errorcode(e) {}
  // Sets the code to errorcode_t::retry.
  void reset_retry() { errorcode = errorcode_t::retry; }
  // @return true for done and done_backlog.
  bool is_done() const {
    return errorcode > errorcode_t::done_min && errorcode < errorcode_t::done_max;
  }
  // @return true for posted and posted_backlog.
  bool is_posted() const {
    return errorcode > errorcode_t::posted_min && errorcode < errorcode_t::posted_max;
  }
  // @return true for retry and the retry_* codes.
  bool is_retry() const {
    return errorcode > errorcode_t::retry_min && errorcode < errorcode_t::retry_max;
  }
  // @return the code's name (get_errorcode_str).
  const char* get_str() const { return get_errorcode_str(errorcode); }
};

// Thrown by an operation that involves a rank declared failed by the
// peer-failure machinery (LCI_PEER_FAILURE=continue, docs/failure.md): the
// operation was refused. Concepts: Errors and failures.
class peer_failure_error : public std::runtime_error {
 public:
  // @param failed_rank the failed rank. @param message what() returns.
  peer_failure_error(int failed_rank, const std::string& message)
      : std::runtime_error(message), m_failed_rank(failed_rank) {}
  // @return the rank that was declared failed.
  int failed_rank() const noexcept { return m_failed_rank; }

 private:
  int m_failed_rank;
};

// What a completion of the network layer reports (net_status_t::opcode).
enum class net_opcode_t { SEND = 0, RECV = 1, WRITE = 2, REMOTE_WRITE = 3, READ = 4, ERROR = 5,
                          FETCH_ADD = 6 };
// The name of a network opcode. Thread-safe.
// @param opcode the opcode.
// @return a static string, e.g. "SEND".
LCI_CXX_API const char* get_net_opcode_str(net_opcode_t opcode);

// A broadcast algorithm (broadcast_x::algorithm): accepted, not used.
enum class broadcast_algorithm_t { none, direct, tree, ring };
// A reduce-scatter algorithm (reduce_scatter_x::algorithm): accepted, not used.
enum class reduce_scatter_algorithm_t { none, direct, tree, ring };
// An allreduce algorithm (allreduce_x::algorithm): accepted, not used.
enum class allreduce_algorithm_t { none, direct, tree, ring };
// The name of a broadcast algorithm. Thread-safe.
// @param algorithm the algorithm. @return a static string, e.g. "tree".
LCI_CXX_API const char* get_broadcast_algorithm_str(broadcast_algorithm_t algorithm);
// The name of an algorithm (LCI 2 declares this overload too). Thread-safe.
// @param algorithm the algorithm. @return a static string, e.g. "tree".
LCI_CXX_API const char* get_reduce_scatter_algorithm_str(broadcast_algorithm_t algorithm);
// The name of an algorithm (LCI 2 declares this overload too). Thread-safe.
// @param algorithm the algorithm. @return a static string, e.g. "tree".
LCI_CXX_API const char* get_allreduce_algorithm_str(broadcast_algorithm_t algorithm);
// The name of a reduce-scatter algorithm. Thread-safe.
// @param algorithm the algorithm. @return a static string, e.g. "ring".
LCI_CXX_API const char* get_reduce_scatter_algorithm_str(reduce_scatter_algorithm_t algorithm);
// The name of an allreduce algorithm. Thread-safe.
// @param algorithm the algorithm. @return a static string, e.g. "ring".
LCI_CXX_API const char* get_allreduce_algorithm_str(allreduce_algorithm_t algorithm);

// The immediate data of a network-layer send or put (32 bits).
using net_imm_data_t = uint32_t;
// One completion of the network layer, as net_poll_cq reports it.
struct net_status_t {
  net_opcode_t opcode;      // what completed
  int rank;                 // the peer (source of a RECV or REMOTE_WRITE, target otherwise)
  void* user_context;       // the operation's user_context (nullptr for REMOTE_WRITE)
  size_t length;            // the bytes received, sent or moved
  net_imm_data_t imm_data;  // the immediate data of a RECV or REMOTE_WRITE
};
// What a network fetch-add or add is atomic with respect to: NONE, not
// available; HCA, other network atomics only; GLOBAL, also the target
// process's own atomic instructions on the same word.
enum class net_atomic_scope_t { NONE = 0, HCA = 1, GLOBAL = 2 };

// A message tag: at most runtime_t::get_attr_max_tag() (2^32-1).
using tag_t = uint64_t;
// A remote completion handle: names a completion object to the peers
// (register_rcomp).
using rcomp_t = uint32_t;
// The direction of post_comm: OUT, a send; IN, a receive.
enum class direction_t { OUT, IN };
// A receive's rank that matches a send from any rank.
const int ANY_SOURCE = -1;
// A receive's tag that matches a send with any tag.
const tag_t ANY_TAG = static_cast<tag_t>(-1);

// The kind of an entry of matching_engine_insert.
enum class matching_entry_type_t : unsigned { send = 0, recv = 1 };
// What a send and a receive must agree on to match: nothing, the rank, the
// tag or both (the default). A send and a receive match only when posted
// with the same policy; a receive with ANY_SOURCE or ANY_TAG leaves that
// part out. `max` is a bound, not a policy.
enum class matching_policy_t : unsigned { none = 0, rank_only = 1, tag_only = 2, rank_tag = 3,
                                          max = 4 };
// The key of a matching_engine_insert entry.
using matching_entry_key_t = uint64_t;
// The value of a matching_engine_insert entry.
using matching_entry_val_t = void*;

// When an outgoing operation counts as complete: `memory`, once its buffer
// may be reused (an eager copy is complete at once); `network`, once the
// network operation itself completed.
enum class comp_semantic_t { memory, network, buffer = memory };

// Where the buffers of arriving active messages come from (set_allocator):
// a program derives from it. Its calls come from the threads that
// progress, concurrently: an implementation must be thread-safe.
// Concepts: Buffer ownership.
struct allocator_base_t {
  // A buffer for an arriving message, owned by the program once handed
  // over in a status. @param size its size in bytes (may be 0).
  // @return the buffer.
  virtual void* allocate(size_t size) = 0;
  // Frees a buffer of allocate(). @param ptr the buffer.
  virtual void deallocate(void* ptr) = 0;
  virtual ~allocator_base_t() = default;
};
// The default allocator: malloc and free. Exported whole (type information
// and virtual table), like comp_impl_t: a program may derive from it.
struct LCI_CXX_API allocator_default_t : allocator_base_t {
  // std::malloc (of at least one byte). @param size the size in bytes.
  // @return the buffer.
  LCI_CXX_API void* allocate(size_t size) override;
  // std::free. @param ptr the buffer.
  LCI_CXX_API void deallocate(void* ptr) override;
};
// The allocator every runtime starts with.
LCI_CXX_API extern allocator_default_t g_allocator_default;

// The name of an object allocated without .name() ("lci-default").
LCI_CXX_API extern const char* DEFAULT_NAME;

// The remote side of a registration, self-contained: copy it byte for byte
// to the peers that put into or get from the memory.
// @ingroup cxx_memory
struct rmr_t {
  uintptr_t base;         // the registered memory's address at its owner
  uintptr_t mr_base;      // the owner's handle of the registration
  uint64_t opaque_rkey;   // what the network needs to reach it
  uint64_t length;        // the registered bytes (a put or get beyond is refused)
  uint32_t group;         // the owner's device
  uint32_t flags;         // 1: the network addresses it by virtual address
  // An empty rmr (RMR_NULL).
  rmr_t() : base(0), mr_base(0), opaque_rkey(0), length(0), group(0), flags(0) {}
  // @return true for RMR_NULL (names no registration).
  bool is_empty() const { return base == 0 && mr_base == 0 && opaque_rkey == 0; }
};
// The empty rmr. @ingroup cxx_memory
const rmr_t RMR_NULL = rmr_t();

// ---- resources -------------------------------------------------------------

class runtime_impl_t;
class packet_pool_impl_t;
class matching_engine_impl_t;
class comp_impl_t;
class net_context_impl_t;
class device_impl_t;
class mr_impl_t;
class endpoint_impl_t;

// The attributes of a runtime (runtime_t::get_attr), fixed at allocation.
// @ingroup cxx_runtime
struct runtime_attr_t {
  size_t packet_return_threshold;       // reported, not used
  int imm_nbits_tag;                    // reported, not used
  int imm_nbits_rcomp;                  // reported, not used
  uint64_t max_imm_tag;                 // the largest tag the message header carries (65535)
  uint64_t max_imm_rcomp;               // the largest rcomp_t value (as max_rcomp)
  uint64_t max_tag;                     // the largest tag (2^32-1)
  uint64_t max_rcomp;                   // the largest rcomp_t value
  bool alloc_default_device;            // whether the runtime made a default device
  bool alloc_default_packet_pool;       // whether the runtime made a default packet pool
  bool alloc_default_matching_engine;   // whether the runtime made a default matching engine
  const char* name;                     // the name given at allocation (DEFAULT_NAME if none)
  void* user_context;                   // the program's value given at allocation
};
// The attributes of a packet pool (packet_pool_t::get_attr).
struct packet_pool_attr_t {
  size_t packet_size;   // bytes per packet: LCI_PACKET_SIZE, the same for every pool
  size_t npackets;      // packets of each device allocated with the pool
  const char* name;     // the name given at allocation
  void* user_context;   // the program's value given at allocation
};
// The attributes of a matching engine (matching_engine_t::get_attr).
struct matching_engine_attr_t {
  attr_matching_engine_type_t matching_engine_type;  // reported, not used
  const char* name;                                  // the name given at allocation
  void* user_context;                                // the program's value given at allocation
};
// The attributes of a completion object (comp_t::get_attr).
// @ingroup cxx_completion
struct comp_attr_t {
  attr_comp_type_t comp_type;  // the kind of object
  int sync_threshold;          // a synchronizer's threshold (signals until ready)
  bool zero_copy_am;           // an eager active message is handed over in its packet
  attr_cq_type_t cq_type;      // a queue's kind (reported, not used)
  int cq_default_length;       // a queue's capacity
  const char* name;            // the name given at allocation
  void* user_context;          // the program's value given at allocation
};
// The attributes of a net context (net_context_t::get_attr): a record of
// the defaults; the backend is chosen by LCI_BACKEND.
struct net_context_attr_t {
  attr_backend_t backend;                               // reported
  std::string ofi_provider_name;                        // reported
  size_t max_msg_size;                                  // reported
  size_t max_inject_size;                               // reported
  int ibv_gid_idx;                                      // reported
  bool ibv_force_gid_auto_select;                       // reported
  attr_ibv_odp_strategy_t ibv_odp_strategy;             // reported
  attr_ibv_prefetch_strategy_t ibv_prefetch_strategy;   // reported
  bool support_putimm;                                  // true: net_post_putImm is available
  net_atomic_scope_t atomic_scope;                      // GLOBAL (software atomics)
  const char* name;                                     // the name given at allocation
  void* user_context;                                   // the program's value given at allocation
};
// The attributes of a device (device_t::get_attr).
struct device_attr_t {
  size_t net_max_sends;                    // reported, not applied
  size_t net_max_recvs;                    // receives posted to the network (applied if changed)
  size_t net_max_cqes;                     // reported, not applied
  uint64_t ofi_lock_mode;                  // reported, not applied (attr_net_lock_mode_t bits)
  bool alloc_default_endpoint;             // whether the device made a default endpoint
  attr_ibv_td_strategy_t ibv_td_strategy;  // reported, not applied
  int uid;                                 // the device's index in its runtime
  const char* name;                        // the name given at allocation
  void* user_context;                      // the program's value given at allocation
};
// The attributes of a memory registration (mr_t::get_attr).
// @ingroup cxx_memory
struct mr_attr_t {
  const char* name;    // DEFAULT_NAME
  void* user_context;  // nullptr
};
// The attributes of an endpoint (endpoint_t::get_attr).
struct endpoint_attr_t {
  int uid;             // the endpoint's number on its device
  const char* name;    // the name given at allocation
  void* user_context;  // the program's value given at allocation
};

// The defaults every allocation starts from (get_g_default_attr), made by
// global_initialize from the LCI_* settings (docs/configuration.md). Each
// field is the default of the attribute of the same name of a runtime,
// packet pool, matching engine, completion object, net context or device.
// @ingroup cxx_runtime
struct global_attr_t {
  size_t packet_return_threshold;                      // runtime_attr_t::packet_return_threshold
  int imm_nbits_tag;                                   // runtime_attr_t::imm_nbits_tag
  int imm_nbits_rcomp;                                 // runtime_attr_t::imm_nbits_rcomp
  bool alloc_default_device;                           // runtime_attr_t::alloc_default_device
  bool alloc_default_packet_pool;                      // runtime_attr_t::alloc_default_packet_pool
  bool alloc_default_matching_engine;                  // runtime_attr_t::alloc_default_matching_engine
  size_t packet_size;                                  // packet_pool_attr_t::packet_size
  size_t npackets;                                     // packet_pool_attr_t::npackets (LCI_ATTR_NPACKETS)
  attr_matching_engine_type_t matching_engine_type;    // matching_engine_attr_t::matching_engine_type
  int sync_threshold;                                  // comp_attr_t::sync_threshold (alloc_sync)
  bool zero_copy_am;                                   // comp_attr_t::zero_copy_am
  attr_cq_type_t cq_type;                              // comp_attr_t::cq_type
  int cq_default_length;                               // comp_attr_t::cq_default_length (alloc_cq)
  attr_backend_t backend;                              // net_context_attr_t::backend
  std::string ofi_provider_name;                       // net_context_attr_t::ofi_provider_name
  size_t max_msg_size;                                 // net_context_attr_t::max_msg_size
  size_t max_inject_size;                              // net_context_attr_t::max_inject_size
  int ibv_gid_idx;                                     // net_context_attr_t::ibv_gid_idx
  bool ibv_force_gid_auto_select;                      // net_context_attr_t::ibv_force_gid_auto_select
  attr_ibv_odp_strategy_t ibv_odp_strategy;            // net_context_attr_t::ibv_odp_strategy
  attr_ibv_prefetch_strategy_t ibv_prefetch_strategy;  // net_context_attr_t::ibv_prefetch_strategy
  size_t net_max_sends;                                // device_attr_t::net_max_sends
  size_t net_max_recvs;                                // device_attr_t::net_max_recvs
  size_t net_max_cqes;                                 // device_attr_t::net_max_cqes
  uint64_t ofi_lock_mode;                              // device_attr_t::ofi_lock_mode
  bool alloc_default_endpoint;                         // device_attr_t::alloc_default_endpoint
  attr_ibv_td_strategy_t ibv_td_strategy;              // device_attr_t::ibv_td_strategy
};

namespace detail {
[[noreturn]] LCI_CXX_API void throw_empty(const char* what);
LCI_CXX_API runtime_attr_t attr_of(const runtime_impl_t* p);
LCI_CXX_API packet_pool_attr_t attr_of(const packet_pool_impl_t* p);
LCI_CXX_API matching_engine_attr_t attr_of(const matching_engine_impl_t* p);
LCI_CXX_API net_context_attr_t attr_of(const net_context_impl_t* p);
LCI_CXX_API device_attr_t attr_of(const device_impl_t* p);
LCI_CXX_API mr_attr_t attr_of(const mr_impl_t* p);
LCI_CXX_API endpoint_attr_t attr_of(const endpoint_impl_t* p);
}  // namespace detail

// A resource handle: one pointer, convertible from and to a raw pointer.
#define LCI_CXX_RESOURCE_COMMON(res)                                                      \
  res##_impl_t* p_impl = nullptr;                                                        \
  res##_t() = default;                                                                    \
  res##_t(void* p) : p_impl(static_cast<res##_impl_t*>(p)) {}                             \
  res##_impl_t* get_impl() const {                                                        \
    if (!p_impl) detail::throw_empty(#res);                                               \
    return p_impl;                                                                        \
  }                                                                                       \
  void set_impl(res##_impl_t* p) { p_impl = p; }                                          \
  bool operator==(const res##_t& other) const { return p_impl == other.p_impl; }          \
  bool operator!=(const res##_t& other) const { return p_impl != other.p_impl; }          \
  using attr_t = res##_attr_t;                                                            \
  attr_t get_attr() const { return detail::attr_of(get_impl()); }

#define LCI_CXX_ATTR_GETTER(type, name) \
  type get_attr_##name() const { return get_attr().name; }

// A runtime: the matching of sends and receives, the default device,
// packet pool and matching engine, the allocator. Allocated by
// alloc_runtime or g_runtime_init; a plain handle, copied freely.
// @ingroup cxx_runtime
class runtime_t {
 public:
  LCI_CXX_RESOURCE_COMMON(runtime)
  // @return true if the handle names no runtime.
  bool is_empty() const { return p_impl == nullptr; }
  LCI_CXX_ATTR_GETTER(size_t, packet_return_threshold)
  LCI_CXX_ATTR_GETTER(int, imm_nbits_tag)
  LCI_CXX_ATTR_GETTER(int, imm_nbits_rcomp)
  LCI_CXX_ATTR_GETTER(uint64_t, max_imm_tag)
  LCI_CXX_ATTR_GETTER(uint64_t, max_imm_rcomp)
  LCI_CXX_ATTR_GETTER(uint64_t, max_tag)
  LCI_CXX_ATTR_GETTER(uint64_t, max_rcomp)
  LCI_CXX_ATTR_GETTER(bool, alloc_default_device)
  LCI_CXX_ATTR_GETTER(bool, alloc_default_packet_pool)
  LCI_CXX_ATTR_GETTER(bool, alloc_default_matching_engine)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};

// A packet pool: the packets eager messages are copied through
// (alloc_packet_pool; get_upacket). A plain handle, copied freely.
class packet_pool_t {
 public:
  LCI_CXX_RESOURCE_COMMON(packet_pool)
  // @return true if the handle names no packet pool.
  bool is_empty() const { return p_impl == nullptr; }
  LCI_CXX_ATTR_GETTER(size_t, packet_size)
  LCI_CXX_ATTR_GETTER(size_t, npackets)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};

// A matching engine: where sends and receives posted with it meet
// (alloc_matching_engine). A plain handle, copied freely.
class matching_engine_t {
 public:
  LCI_CXX_RESOURCE_COMMON(matching_engine)
  // @return true if the handle names no matching engine.
  bool is_empty() const { return p_impl == nullptr; }
  LCI_CXX_ATTR_GETTER(attr_matching_engine_type_t, matching_engine_type)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};

// A net context: a record of the network's attributes
// (alloc_net_context). A plain handle, copied freely.
class net_context_t {
 public:
  LCI_CXX_RESOURCE_COMMON(net_context)
  // @return true if the handle names no net context.
  bool is_empty() const { return p_impl == nullptr; }
  LCI_CXX_ATTR_GETTER(attr_backend_t, backend)
  LCI_CXX_ATTR_GETTER(std::string, ofi_provider_name)
  LCI_CXX_ATTR_GETTER(size_t, max_msg_size)
  LCI_CXX_ATTR_GETTER(size_t, max_inject_size)
  LCI_CXX_ATTR_GETTER(int, ibv_gid_idx)
  LCI_CXX_ATTR_GETTER(bool, ibv_force_gid_auto_select)
  LCI_CXX_ATTR_GETTER(attr_ibv_odp_strategy_t, ibv_odp_strategy)
  LCI_CXX_ATTR_GETTER(attr_ibv_prefetch_strategy_t, ibv_prefetch_strategy)
  LCI_CXX_ATTR_GETTER(bool, support_putimm)
  LCI_CXX_ATTR_GETTER(net_atomic_scope_t, atomic_scope)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};

// A device: a backlog, a collective endpoint and the progress of the
// runtime's core device (alloc_device). A plain handle, copied freely.
// Concepts: Devices.
class device_t {
 public:
  LCI_CXX_RESOURCE_COMMON(device)
  // @return true if the handle names no device.
  bool is_empty() const { return p_impl == nullptr; }
  LCI_CXX_ATTR_GETTER(size_t, net_max_sends)
  LCI_CXX_ATTR_GETTER(size_t, net_max_recvs)
  LCI_CXX_ATTR_GETTER(size_t, net_max_cqes)
  LCI_CXX_ATTR_GETTER(uint64_t, ofi_lock_mode)
  LCI_CXX_ATTR_GETTER(bool, alloc_default_endpoint)
  LCI_CXX_ATTR_GETTER(attr_ibv_td_strategy_t, ibv_td_strategy)
  LCI_CXX_ATTR_GETTER(int, uid)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};

// A registration of local memory (register_memory). MR_HOST, MR_DEVICE and
// MR_UNKNOWN are not registrations: they say what memory an unregistered
// buffer is, and count as empty. A plain handle, copied freely.
// @ingroup cxx_memory
class mr_t {
 public:
  LCI_CXX_RESOURCE_COMMON(mr)
  // @return true for no registration (MR_HOST, MR_DEVICE, MR_UNKNOWN).
  bool is_empty() const { return reinterpret_cast<uintptr_t>(p_impl) < 3; }
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};
// Host memory, not registered (the default mr of an operation): registered
// as needed. @ingroup cxx_memory
const mr_t MR_HOST = mr_t();
// Device (GPU) memory, not registered. @ingroup cxx_memory
const mr_t MR_DEVICE = mr_t(reinterpret_cast<void*>(0x1));
// Memory of unknown kind, not registered. @ingroup cxx_memory
const mr_t MR_UNKNOWN = mr_t(reinterpret_cast<void*>(0x2));

// An endpoint of a device (alloc_endpoint). The endpoints of a runtime
// share its matching: a message sent from any endpoint matches a receive
// posted on any other. A plain handle, copied freely.
// Concepts: Endpoints and property lists.
class endpoint_t {
 public:
  LCI_CXX_RESOURCE_COMMON(endpoint)
  // @return true if the handle names no endpoint.
  bool is_empty() const { return p_impl == nullptr; }
  LCI_CXX_ATTR_GETTER(int, uid)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};

// ---- status ------------------------------------------------------------------

// What completed: the peer (source of a receive or active message, target
// of a send or put), the buffer and its size (for a receive, the bytes that
// arrived; for an active message at its target, a buffer the receiver owns),
// the tag and the operation's user context (nullptr for an arrival at a
// target). Returned by every post_* call (done: the fields describe the
// operation; posted or retry: only `error` counts) and handed to
// completion objects. A plain value type. Concepts: Completion kinds,
// Buffer ownership.
struct status_t {
  error_t error;                 // done, posted or retry, with the reason
  int rank = -1;                 // the peer
  void* buffer = nullptr;        // the buffer (an active message's at its target: the receiver's to free)
  size_t size = 0;               // the size in bytes
  tag_t tag = 0;                 // the tag
  void* user_context = nullptr;  // the operation's user_context

  // A status with error retry_init and empty fields.
  status_t() = default;
  // A status with empty fields. @param e its error code.
  status_t(errorcode_t e) : error(e) {}
  // A done status. @param user_context_ its user_context.
  explicit status_t(void* user_context_) : error(errorcode_t::done), user_context(user_context_) {}
  // Sets the error to done.
  void set_done() { error = errorcode_t::done; }
  // Sets the error to posted.
  void set_posted() { error = errorcode_t::posted; }
  // Sets the error to retry.
  void set_retry() { error = errorcode_t::retry; }
  // @return true if the operation completed (done, done_backlog).
  bool is_done() const { return error.is_done(); }
  // @return true if the operation was posted (posted, posted_backlog).
  bool is_posted() const { return error.is_posted(); }
  // @return true if nothing happened (retry and its reasons).
  bool is_retry() const { return error.is_retry(); }
  // @return the error.
  error_t get_error() const { return error; }
  // @return the peer's rank.
  int get_rank() const { return rank; }
  // @return the buffer.
  void* get_buffer() const { return buffer; }
  // @return the size in bytes.
  size_t get_size() const { return size; }
  // @return the tag.
  tag_t get_tag() const { return tag; }
  // @return the operation's user_context.
  void* get_user_context() const { return user_context; }
};

// ---- completion objects ------------------------------------------------------

// A completion object. The library's own (sync, counter, cq, handler, graph)
// are made by alloc_*; a program may derive its own from comp_impl_t,
// override signal(), and pass `comp_t(new mine(...))`: LCI then calls its
// signal() once per completion and never deletes it. Exported whole: a
// program's subclass (and -fsanitize=vptr) needs its type information and
// virtual table, which live in the library (the destructor is the key function).
// Its signal() may be called from any thread that progresses, concurrently.
class LCI_CXX_API comp_impl_t {
 public:
  // The attributes (comp_attr_t).
  using attr_t = comp_attr_t;
  // A program's object, attributes of kind `custom`.
  LCI_CXX_API comp_impl_t();
  // A program's object. @param attr its attributes.
  LCI_CXX_API explicit comp_impl_t(const attr_t& attr);
  // Frees the library's side of the object.
  LCI_CXX_API virtual ~comp_impl_t();
  comp_impl_t(const comp_impl_t&) = delete;
  comp_impl_t& operator=(const comp_impl_t&) = delete;
  // Called once per completion, from the thread that completes it (usually
  // in progress). @param status what completed.
  virtual void signal(status_t status) = 0;

  attr_t attr;  // the attributes
  // The library's side of the object (what the core signals); set by the
  // constructor, never by a program.
  void* core_ = nullptr;

 protected:
  // Marks the library's own constructor.
  struct library_made {};
  // For the library's own kinds, which bring their own core object.
  // @param attr the attributes.
  LCI_CXX_API comp_impl_t(const attr_t& attr, library_made);
};

namespace detail {
inline comp_attr_t attr_of(const comp_impl_t* p) { return p->attr; }
}  // namespace detail

// A completion object handle (alloc_sync, alloc_counter, alloc_cq,
// alloc_handler, alloc_graph, or comp_t(new a_comp_impl_t_subclass)); freed
// by free_comp. A plain handle, copied freely. Concepts: Completion kinds.
class comp_t {
 public:
  LCI_CXX_RESOURCE_COMMON(comp)
  // COMP_NULL (0) and COMP_NULL_RETRY (1) name no object.
  // @return true if the handle names no completion object.
  bool is_empty() const { return reinterpret_cast<uintptr_t>(p_impl) <= 1; }
  LCI_CXX_ATTR_GETTER(attr_comp_type_t, comp_type)
  LCI_CXX_ATTR_GETTER(int, sync_threshold)
  LCI_CXX_ATTR_GETTER(bool, zero_copy_am)
  LCI_CXX_ATTR_GETTER(attr_cq_type_t, cq_type)
  LCI_CXX_ATTR_GETTER(int, cq_default_length)
  LCI_CXX_ATTR_GETTER(const char*, name)
  LCI_CXX_ATTR_GETTER(void*, user_context)
};
// No completion object: the operation completes in the call (done) or is
// taken into the backlog; it is never posted, and never refused.
const comp_t COMP_NULL = comp_t(static_cast<void*>(nullptr));
// No completion object, but a refusal (retry) may be returned.
const comp_t COMP_NULL_RETRY = comp_t(reinterpret_cast<void*>(0x1));
// LCI 2's older name of COMP_NULL.
const comp_t COMP_NULL_EXPECT_DONE = COMP_NULL;
// LCI 2's older name of COMP_NULL_RETRY.
const comp_t COMP_NULL_EXPECT_DONE_OR_RETRY = COMP_NULL_RETRY;

// A handler's function (alloc_handler): called once per completion with
// its status, in the thread that completes it.
using comp_handler_t = void (*)(status_t status);
// A reduction operator of the collectives: dst[i] = left[i] op right[i]
// for n items; taken to be associative and commutative, called as
// op(received, accumulated, accumulated, n) (right may alias dst).
// @ingroup cxx_collectives
using reduce_op_t = void (*)(const void* left, const void* right, void* dst, size_t n);

// A node of a completion graph (graph_add_node).
using graph_node_t = void*;
// The start of a graph: an edge from it makes a node run at graph_start.
const graph_node_t GRAPH_START = reinterpret_cast<graph_node_t>(0x1);
// The end of a graph: the graph completes once every node completed.
const graph_node_t GRAPH_END = reinterpret_cast<graph_node_t>(0x2);
// A node's function: returns done (the node completed), posted (it
// completes when the graph is signalled with the node as the status's
// user_context, or by graph_node_mark_complete) or retry (it runs again
// from graph_test or from progress).
using graph_node_run_cb_t = status_t (*)(void* value);
// A node without a function: it completes as soon as it runs.
const graph_node_run_cb_t GRAPH_NODE_DUMMY_CB = nullptr;
// Frees a node's value when the graph is freed.
using graph_node_free_cb_t = void (*)(void* value);
// An edge's function: runs when its source node completed, before the
// destination may run, with the source's status and both nodes' values.
using graph_edge_run_cb_t = void (*)(status_t status, void* src_value, void* dst_value);

#undef LCI_CXX_ATTR_GETTER
#undef LCI_CXX_RESOURCE_COMMON

// ---- the process, the runtime ------------------------------------------------

// Process-wide set-up, counted: g_runtime_init and alloc_runtime call it
// too. The first call starts the bootstrap (lcrun, PMI-1, PMIx or a lone
// process, as LCI_initialize does) and reads the default attributes from
// the LCI_* settings; later calls only count. A program may call it first
// to read the rank or change the default attributes before any runtime
// exists. Thread-safe. Concepts: Threading.
LCI_CXX_API void global_initialize();
// Ends one global_initialize: the last one releases the bootstrap and the
// default attributes. Throws std::runtime_error when called more often than
// global_initialize. Thread-safe.
LCI_CXX_API void global_finalize();
// This process's rank. Thread-safe.
// @return the rank, in [0, get_rank_n()); throws std::runtime_error before
// global_initialize (or g_runtime_init).
LCI_CXX_API int get_rank_me();
// The number of processes of the job. Thread-safe.
// @return the number of ranks; throws std::runtime_error before
// global_initialize (or g_runtime_init).
LCI_CXX_API int get_rank_n();
// The defaults every later allocation starts from. Thread-safe.
// @return a copy of them; throws std::runtime_error before global_initialize.
LCI_CXX_API global_attr_t get_g_default_attr();
// Replaces the defaults of later allocations (those already made keep their
// attributes). Thread-safe.
// @param attr the new defaults, copied (usually get_g_default_attr() with
// some fields changed). Throws std::runtime_error before global_initialize.
LCI_CXX_API void set_g_default_attr(const global_attr_t& attr);

// The operations' implementations (the library's side of the objects below).
namespace detail {

struct runtime_args {
  size_t packet_return_threshold;
  int imm_nbits_tag;
  int imm_nbits_rcomp;
  bool alloc_default_device;
  bool alloc_default_packet_pool;
  bool alloc_default_matching_engine;
  unsigned set_mask;  // bit i: field i set by the caller
  const char* name;
  void* user_context;
};
LCI_CXX_API runtime_t alloc_runtime(const runtime_args& a, bool global);
LCI_CXX_API void free_runtime(runtime_t* runtime, bool global);

struct device_args {
  size_t net_max_sends, net_max_recvs, net_max_cqes;
  uint64_t ofi_lock_mode;
  bool alloc_default_endpoint;
  attr_ibv_td_strategy_t ibv_td_strategy;
  unsigned set_mask;
  const char* name;
  void* user_context;
  runtime_t runtime;
  net_context_t net_context;
  packet_pool_t packet_pool;
};
LCI_CXX_API device_t alloc_device(const device_args& a);

// Every communication posting: the arguments of post_comm.
enum class comm_kind : uint8_t { send, recv, am, put, get };
struct comm_args {
  comm_kind kind;
  direction_t direction;
  int rank;
  void* local_buffer;
  size_t size;
  comp_t local_comp;
  runtime_t runtime;
  packet_pool_t packet_pool;
  device_t device;
  endpoint_t endpoint;
  matching_engine_t matching_engine;
  comp_semantic_t comp_semantic;
  mr_t mr;
  uintptr_t remote_disp;
  rmr_t rmr;
  tag_t tag;
  rcomp_t remote_comp;
  void* user_context;
  matching_policy_t matching_policy;
  bool allow_done, allow_posted, allow_retry;
  comm_args(comm_kind k, direction_t dir, int rank_, void* buf, size_t size_, comp_t comp)
      : kind(k), direction(dir), rank(rank_), local_buffer(buf), size(size_), local_comp(comp),
        comp_semantic(comp_semantic_t::memory), remote_disp(0), tag(0), remote_comp(0),
        user_context(nullptr), matching_policy(matching_policy_t::rank_tag), allow_done(true),
        allow_posted(true), allow_retry(true) {}
};
LCI_CXX_API status_t post_comm(const comm_args& a);

// The narrow entries of the common send and receive (comm.cpp): the global
// runtime, `device` (nullptr: its default device), that device's default
// endpoint, rank_tag matching, memory semantics, no mr, a posted
// completion allowed (allow_posted). Every argument in a register (the
// receive: all but two) and no comm_args built: post_send_x and post_recv_x
// call them when only these arguments were set (comm_args::plain), and
// hand the operation to post_comm when an entry returns `not_taken` (an
// argument post_comm would reject, a failed peer, a backlog to wait
// behind, a size beyond the eager limit), so that errors, states and the
// backlog are post_comm's.
constexpr errorcode_t not_taken = errorcode_t::posted_min;
// The send, for allow_done: done (sent; the caller fills in the status
// from its arguments), a retry code (nothing sent: the caller returns it
// when its allow_retry and completion object let it, post_comm otherwise)
// or not_taken. Neither the completion object nor user_context is needed
// for these.
LCI_CXX_API errorcode_t post_send_plain(device_impl_t* device, int rank, void* local_buffer,
                                        size_t size, tag_t tag);
// The receive: posted, done (only with `done` not null, whose status it
// constructed: allow_done) or not_taken.
LCI_CXX_API errorcode_t post_recv_plain(device_impl_t* device, int rank, void* local_buffer,
                                        size_t size, tag_t tag, comp_impl_t* local_comp,
                                        void* user_context, status_t* done);
// post_comm for what a plain entry did not take, from the same arguments
// (out of line: the caller's comm_args need not be built for it).
LCI_CXX_API status_t post_plain_slow(comm_kind kind, device_impl_t* device, int rank,
                                     void* local_buffer, size_t size, tag_t tag,
                                     comp_impl_t* local_comp, void* user_context, bool allow_done,
                                     bool allow_retry);
// Storage for post_recv_plain's done status that the caller does not
// initialize (the entry constructs it only when it returns done).
union status_slot {
  status_t s;
  status_slot() {}
};

// Whether `a` may take a plain entry: nothing beyond the device, the
// positional arguments, user_context and allow_* set, allow_posted true.
// Inlined into the call operators, where the fields are known constants in
// the usual call, so the test folds away.
inline bool plain(const comm_args& a) {
  return a.runtime.p_impl == nullptr && a.packet_pool.p_impl == nullptr &&
         a.endpoint.p_impl == nullptr && a.matching_engine.p_impl == nullptr &&
         a.mr.p_impl == nullptr && a.comp_semantic == comp_semantic_t::memory &&
         a.matching_policy == matching_policy_t::rank_tag && a.allow_posted;
}

}  // namespace detail

// Setters of an operation object: each names one argument and returns the
// object, so that they chain.
#define LCI_CXX_SETTER(cls, type, name)   \
  cls&& name(type v) {                    \
    m_##name = v;                         \
    return std::move(*this);              \
  }
#define LCI_CXX_ARG_SETTER(cls, type, name) \
  cls&& name(type v) {                      \
    a_.name = v;                            \
    return std::move(*this);                \
  }

// alloc_runtime / g_runtime_init: the runtime attributes as optional
// arguments. g_runtime_init makes the global runtime, the default of every
// operation's `runtime` argument.
#define LCI_CXX_RUNTIME_SETTERS(cls)                                                   \
  cls&& packet_return_threshold(size_t v) {                                            \
    a_.packet_return_threshold = v;                                                    \
    a_.set_mask |= 1u;                                                                 \
    return std::move(*this);                                                           \
  }                                                                                    \
  cls&& imm_nbits_tag(int v) {                                                         \
    a_.imm_nbits_tag = v;                                                              \
    a_.set_mask |= 2u;                                                                 \
    return std::move(*this);                                                           \
  }                                                                                    \
  cls&& imm_nbits_rcomp(int v) {                                                       \
    a_.imm_nbits_rcomp = v;                                                            \
    a_.set_mask |= 4u;                                                                 \
    return std::move(*this);                                                           \
  }                                                                                    \
  cls&& alloc_default_device(bool v) {                                                 \
    a_.alloc_default_device = v;                                                       \
    a_.set_mask |= 8u;                                                                 \
    return std::move(*this);                                                           \
  }                                                                                    \
  cls&& alloc_default_packet_pool(bool v) {                                            \
    a_.alloc_default_packet_pool = v;                                                  \
    a_.set_mask |= 16u;                                                                \
    return std::move(*this);                                                           \
  }                                                                                    \
  cls&& alloc_default_matching_engine(bool v) {                                        \
    a_.alloc_default_matching_engine = v;                                              \
    a_.set_mask |= 32u;                                                                \
    return std::move(*this);                                                           \
  }                                                                                    \
  LCI_CXX_ARG_SETTER(cls, const char*, name)                                           \
  LCI_CXX_ARG_SETTER(cls, void*, user_context)

class alloc_runtime_x {
 public:
  alloc_runtime_x() : a_() {}
  LCI_CXX_RUNTIME_SETTERS(alloc_runtime_x)
  runtime_t call() const { return detail::alloc_runtime(a_, false); }
  runtime_t operator()() const { return call(); }

 private:
  detail::runtime_args a_;
};
// Allocates a runtime (with the attributes of alloc_runtime_x's setters, or
// the defaults): calls global_initialize; the process's first runtime (of
// either API) starts the core, with a barrier of all ranks; then the
// runtime's net context, default packet pool, matching engine and device
// (as its attributes ask). Collective: every rank allocates its runtimes in
// the same order. Not thread-safe: no other call on LCI's resources may run
// meanwhile. Concepts: Devices.
// @return the runtime; free it with free_runtime.
inline runtime_t alloc_runtime() { return alloc_runtime_x()(); }

class g_runtime_init_x {
 public:
  g_runtime_init_x() : a_() {}
  LCI_CXX_RUNTIME_SETTERS(g_runtime_init_x)
  runtime_t call() const { return detail::alloc_runtime(a_, true); }
  runtime_t operator()() const { return call(); }

 private:
  detail::runtime_args a_;
};
// Allocates the global runtime, as alloc_runtime does: the default
// `runtime` of every operation. Throws std::runtime_error when the global
// runtime exists already. Collective; not thread-safe.
// @return the global runtime (get_g_runtime()); end it with g_runtime_fina.
inline runtime_t g_runtime_init() { return g_runtime_init_x()(); }
#undef LCI_CXX_RUNTIME_SETTERS

class free_runtime_x {
 public:
  explicit free_runtime_x(runtime_t* runtime) : m_runtime(runtime) {}
  LCI_CXX_SETTER(free_runtime_x, runtime_t*, runtime)
  void call() const { detail::free_runtime(m_runtime, false); }
  void operator()() const { call(); }

 private:
  runtime_t* m_runtime;
};
// Frees a runtime: the devices the program did not free (with their
// endpoints), its default packet pool, matching engines and net context.
// The process's last runtime (of either API) ends the core with a barrier
// of all ranks (skipped once a peer failed). Then ends its
// global_initialize.
// Collective; not thread-safe: no operation may use the runtime or its
// objects meanwhile or afterwards.
// @param runtime in/out: the runtime; made empty. An empty handle throws
// std::runtime_error.
inline void free_runtime(runtime_t* runtime) { free_runtime_x(runtime).call(); }

class g_runtime_fina_x {
 public:
  g_runtime_fina_x() {}
  void call() const { detail::free_runtime(nullptr, true); }
  void operator()() const { call(); }
};
// Frees the global runtime, as free_runtime does (so the process's last
// runtime ends with a barrier of all ranks). Throws std::runtime_error when
// there is no global runtime. Collective; not thread-safe.
inline void g_runtime_fina() { g_runtime_fina_x().call(); }

// The global runtime. Thread-safe (while no thread makes or frees it).
// @return the runtime of g_runtime_init, or an empty handle if there is none.
LCI_CXX_API runtime_t get_g_runtime();

// Operations whose only optional argument is the runtime, and a few more:
// the object form keeps the same shape as LCI 2's.
#define LCI_CXX_RUNTIME_ARG(cls)  \
  LCI_CXX_SETTER(cls, runtime_t, runtime)

// ---- packet pools, devices, endpoints, matching engines ------------------------

namespace detail {
LCI_CXX_API packet_pool_t alloc_packet_pool(size_t packet_size, size_t npackets, unsigned set_mask,
                                            const char* name, void* user_context,
                                            runtime_t runtime);
LCI_CXX_API void free_packet_pool(packet_pool_t* pool, runtime_t runtime);
LCI_CXX_API void register_packet_pool(packet_pool_t pool, device_t device, runtime_t runtime);
LCI_CXX_API void deregister_packet_pool(packet_pool_t pool, device_t device, runtime_t runtime);
LCI_CXX_API void* get_upacket(packet_pool_t pool, runtime_t runtime);
LCI_CXX_API void put_upacket(void* packet, runtime_t runtime);
LCI_CXX_API size_t get_max_bcopy_size(packet_pool_t pool, runtime_t runtime);
LCI_CXX_API void free_device(device_t* device, runtime_t runtime);
LCI_CXX_API endpoint_t alloc_endpoint(device_t device, const char* name, void* user_context,
                                      runtime_t runtime);
LCI_CXX_API void free_endpoint(endpoint_t* endpoint, runtime_t runtime);
LCI_CXX_API matching_engine_t alloc_matching_engine(attr_matching_engine_type_t type, bool set,
                                                    const char* name, void* user_context,
                                                    runtime_t runtime);
LCI_CXX_API void free_matching_engine(matching_engine_t* engine, runtime_t runtime);
LCI_CXX_API matching_entry_val_t matching_engine_insert(matching_engine_t engine,
                                                        matching_entry_key_t key,
                                                        matching_entry_val_t value,
                                                        matching_entry_type_t type,
                                                        runtime_t runtime);
LCI_CXX_API net_context_t alloc_net_context(const char* name, void* user_context,
                                            runtime_t runtime);
LCI_CXX_API void free_net_context(net_context_t* ctx, runtime_t runtime);
LCI_CXX_API net_context_t get_default_net_context(runtime_t runtime);
LCI_CXX_API device_t get_default_device(runtime_t runtime);
LCI_CXX_API endpoint_t get_default_endpoint(device_t device, runtime_t runtime);
LCI_CXX_API packet_pool_t get_default_packet_pool(runtime_t runtime);
LCI_CXX_API matching_engine_t get_default_matching_engine(runtime_t runtime);
LCI_CXX_API void set_allocator(allocator_base_t* allocator, runtime_t runtime);
LCI_CXX_API allocator_base_t* get_allocator(runtime_t runtime);
}  // namespace detail

class alloc_packet_pool_x {
 public:
  alloc_packet_pool_x() {}
  alloc_packet_pool_x&& packet_size(size_t v) {
    m_packet_size = v;
    m_set |= 1u;
    return std::move(*this);
  }
  alloc_packet_pool_x&& npackets(size_t v) {
    m_npackets = v;
    m_set |= 2u;
    return std::move(*this);
  }
  LCI_CXX_SETTER(alloc_packet_pool_x, const char*, name)
  LCI_CXX_SETTER(alloc_packet_pool_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_packet_pool_x)
  packet_pool_t call() const {
    return detail::alloc_packet_pool(m_packet_size, m_npackets, m_set, m_name, m_user_context,
                                     m_runtime);
  }
  packet_pool_t operator()() const { return call(); }

 private:
  size_t m_packet_size = 0, m_npackets = 0;
  unsigned m_set = 0;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a packet pool. Its `npackets` sizes the devices allocated with
// it (alloc_device_x::packet_pool); `packet_size` is LCI_PACKET_SIZE for
// every pool (another value warns and is ignored). Not thread-safe.
// @return the pool; free it with free_packet_pool.
inline packet_pool_t alloc_packet_pool() { return alloc_packet_pool_x()(); }

// An operation object with positional arguments P and the runtime as its
// only optional one, calling detail::FN(P..., runtime).
#define LCI_CXX_SIMPLE_OP1(ret, op, t1, n1)                                  \
  class op##_x {                                                            \
   public:                                                                  \
    explicit op##_x(t1 n1) : m_##n1(n1) {}                                  \
    LCI_CXX_SETTER(op##_x, t1, n1)                                          \
    LCI_CXX_RUNTIME_ARG(op##_x)                                             \
    ret call() const { return detail::op(m_##n1, m_runtime); }              \
    ret operator()() const { return call(); }                               \
                                                                            \
   private:                                                                 \
    t1 m_##n1;                                                              \
    runtime_t m_runtime;                                                    \
  };                                                                        \
  inline ret op(t1 n1) { return op##_x(n1)(); }

#define LCI_CXX_SIMPLE_OP2(ret, op, t1, n1, t2, n2)                          \
  class op##_x {                                                            \
   public:                                                                  \
    op##_x(t1 n1, t2 n2) : m_##n1(n1), m_##n2(n2) {}                        \
    LCI_CXX_SETTER(op##_x, t1, n1)                                          \
    LCI_CXX_SETTER(op##_x, t2, n2)                                          \
    LCI_CXX_RUNTIME_ARG(op##_x)                                             \
    ret call() const { return detail::op(m_##n1, m_##n2, m_runtime); }      \
    ret operator()() const { return call(); }                               \
                                                                            \
   private:                                                                 \
    t1 m_##n1;                                                              \
    t2 m_##n2;                                                              \
    runtime_t m_runtime;                                                    \
  };                                                                        \
  inline ret op(t1 n1, t2 n2) { return op##_x(n1, n2)(); }

#define LCI_CXX_SIMPLE_OP0(ret, op)                                          \
  class op##_x {                                                            \
   public:                                                                  \
    op##_x() {}                                                             \
    LCI_CXX_RUNTIME_ARG(op##_x)                                             \
    ret call() const { return detail::op(m_runtime); }                      \
    ret operator()() const { return call(); }                               \
                                                                            \
   private:                                                                 \
    runtime_t m_runtime;                                                    \
  };                                                                        \
  inline ret op() { return op##_x()(); }

// Frees a packet pool (if it is its runtime's default, the runtime then
// has none). Not thread-safe.
// @param packet_pool in/out: the pool; made empty. An empty handle throws
// std::runtime_error.
LCI_CXX_SIMPLE_OP1(void, free_packet_pool, packet_pool_t*, packet_pool)
// Binds a pool to a device, if it is bound to none yet: a pool belongs to
// the first device it is used with, whose packets get_upacket hands out.
// Not thread-safe.
// @param packet_pool the pool (an empty handle throws std::runtime_error).
// @param device the device (an empty handle: the runtime's default device).
LCI_CXX_SIMPLE_OP2(void, register_packet_pool, packet_pool_t, packet_pool, device_t, device)
// Unbinds a pool from a device, if it is bound to it. Not thread-safe.
// @param packet_pool the pool (an empty handle throws std::runtime_error).
// @param device the device (an empty handle: the runtime's default device).
LCI_CXX_SIMPLE_OP2(void, deregister_packet_pool, packet_pool_t, packet_pool, device_t, device)
// Gives back a packet of get_upacket that was never sent. Thread-safe.
// Concepts: Buffer ownership.
// @param packet the packet's buffer, as get_upacket returned it (anything
// else throws std::runtime_error); the program no longer owns it.
LCI_CXX_SIMPLE_OP1(void, put_upacket, void*, packet)
// Frees a device: first progresses it until its backlog is empty, then
// frees its endpoints and its collective endpoint; the runtime's last
// device takes the core device with it. Collective: every
// rank frees its devices in the same order. Not thread-safe: nothing may
// use or progress the device meanwhile.
// @param device in/out: the device; made empty. An empty handle throws
// std::runtime_error.
LCI_CXX_SIMPLE_OP1(void, free_device, device_t*, device)
// Frees an endpoint (if it is its device's default, the device then has
// none). Not thread-safe: nothing may post on it meanwhile.
// @param endpoint in/out: the endpoint; made empty. An empty handle throws
// std::runtime_error.
LCI_CXX_SIMPLE_OP1(void, free_endpoint, endpoint_t*, endpoint)
// Frees a matching engine (if it is the runtime's default, the runtime then
// has none). Collective; not thread-safe: nothing may post with it
// meanwhile.
// @param matching_engine in/out: the engine; made empty. An empty handle
// throws std::runtime_error.
LCI_CXX_SIMPLE_OP1(void, free_matching_engine, matching_engine_t*, matching_engine)
// Frees a net context (the runtime's default one stays until the runtime
// is freed). Not thread-safe.
// @param net_context in/out: the net context; made empty. An empty handle
// throws std::runtime_error.
LCI_CXX_SIMPLE_OP1(void, free_net_context, net_context_t*, net_context)
// Sets where the buffers of active messages handed to the program come
// from (their statuses' buffer, which the program frees through it).
// Thread-safe; set it before the messages that should use it arrive.
// Concepts: Buffer ownership.
// @param allocator the allocator, kept (not copied: it must outlive the
// runtime); nullptr: g_allocator_default.
LCI_CXX_SIMPLE_OP1(void, set_allocator, allocator_base_t*, allocator)
// The allocator of set_allocator. Thread-safe.
// @return the runtime's allocator (&g_allocator_default unless set).
LCI_CXX_SIMPLE_OP0(allocator_base_t*, get_allocator)
// The runtime's default net context. Thread-safe.
// @return its handle.
LCI_CXX_SIMPLE_OP0(net_context_t, get_default_net_context)
// The runtime's default device, which operations use without .device().
// Thread-safe.
// @return its handle; empty if the runtime has none (alloc_default_device
// false, or freed).
LCI_CXX_SIMPLE_OP0(device_t, get_default_device)
// The runtime's default packet pool. Thread-safe.
// @return its handle; empty if the runtime has none.
LCI_CXX_SIMPLE_OP0(packet_pool_t, get_default_packet_pool)
// The runtime's default matching engine. Thread-safe.
// @return its handle; empty if the runtime has none.
LCI_CXX_SIMPLE_OP0(matching_engine_t, get_default_matching_engine)

class get_upacket_x {
 public:
  get_upacket_x() {}
  LCI_CXX_SETTER(get_upacket_x, packet_pool_t, packet_pool)
  LCI_CXX_RUNTIME_ARG(get_upacket_x)
  void* call() const { return detail::get_upacket(m_packet_pool, m_runtime); }
  void* operator()() const { return call(); }

 private:
  packet_pool_t m_packet_pool;
  runtime_t m_runtime;
};
// A pool's packet for the program to write a message into, of
// get_max_bcopy_size() bytes. Sent as the local buffer of post_send or
// post_am, it goes back to LCI with the message; put_upacket returns one
// never sent. Thread-safe. Concepts: Buffer ownership.
// @return the packet's buffer, now the program's; nullptr while the pool
// has no free packet (progress frees them). Throws std::runtime_error when
// the runtime has no device yet.
inline void* get_upacket() { return get_upacket_x()(); }

class get_max_bcopy_size_x {
 public:
  get_max_bcopy_size_x() {}
  LCI_CXX_SETTER(get_max_bcopy_size_x, packet_pool_t, packet_pool)
  LCI_CXX_RUNTIME_ARG(get_max_bcopy_size_x)
  size_t call() const { return detail::get_max_bcopy_size(m_packet_pool, m_runtime); }
  size_t operator()() const { return call(); }

 private:
  packet_pool_t m_packet_pool;
  runtime_t m_runtime;
};
// The largest message sent by copying it through one packet (eager); larger
// ones go by rendezvous. Also the size of a get_upacket() buffer.
// Thread-safe.
// @return LCI_PACKET_SIZE - 64 bytes (12224 by default), the same for every
// pool.
inline size_t get_max_bcopy_size() { return get_max_bcopy_size_x()(); }

class alloc_device_x {
 public:
  alloc_device_x() : a_() {}
#define LCI_CXX_DEVICE_ATTR(type, name, bit) \
  alloc_device_x&& name(type v) {            \
    a_.name = v;                             \
    a_.set_mask |= bit;                      \
    return std::move(*this);                 \
  }
  LCI_CXX_DEVICE_ATTR(size_t, net_max_sends, 1u)
  LCI_CXX_DEVICE_ATTR(size_t, net_max_recvs, 2u)
  LCI_CXX_DEVICE_ATTR(size_t, net_max_cqes, 4u)
  LCI_CXX_DEVICE_ATTR(uint64_t, ofi_lock_mode, 8u)
  LCI_CXX_DEVICE_ATTR(bool, alloc_default_endpoint, 16u)
  LCI_CXX_DEVICE_ATTR(attr_ibv_td_strategy_t, ibv_td_strategy, 32u)
#undef LCI_CXX_DEVICE_ATTR
  LCI_CXX_ARG_SETTER(alloc_device_x, const char*, name)
  LCI_CXX_ARG_SETTER(alloc_device_x, void*, user_context)
  LCI_CXX_ARG_SETTER(alloc_device_x, runtime_t, runtime)
  LCI_CXX_ARG_SETTER(alloc_device_x, net_context_t, net_context)
  LCI_CXX_ARG_SETTER(alloc_device_x, packet_pool_t, packet_pool)
  device_t call() const { return detail::alloc_device(a_); }
  device_t operator()() const { return call(); }

 private:
  detail::device_args a_;
};
// Allocates a device. The devices of a runtime share one device of the
// core (its packets, receives, matching and progress; the first device
// makes it): each adds its own backlog, its collective endpoint and, as
// alloc_default_endpoint asks, a default endpoint. Of its attributes,
// net_max_recvs and the packet pool's npackets are applied when changed
// from the defaults. .packet_pool(p): the pool whose npackets sizes the
// device (default: the runtime's default pool); .net_context() is accepted,
// not used. Collective: every rank allocates its devices in the same order
// (the uid is the allocation index). Not thread-safe. Concepts: Devices.
// @return the device; free it with free_device (or free_runtime does).
inline device_t alloc_device() { return alloc_device_x()(); }

class alloc_endpoint_x {
 public:
  alloc_endpoint_x() {}
  LCI_CXX_SETTER(alloc_endpoint_x, device_t, device)
  LCI_CXX_SETTER(alloc_endpoint_x, const char*, name)
  LCI_CXX_SETTER(alloc_endpoint_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_endpoint_x)
  endpoint_t call() const {
    return detail::alloc_endpoint(m_device, m_name, m_user_context, m_runtime);
  }
  endpoint_t operator()() const { return call(); }

 private:
  device_t m_device;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates an endpoint of a device (.device(); default: the runtime's
// default device); it becomes the device's default endpoint if the device
// has none. Not thread-safe.
// Concepts: Endpoints and property lists.
// @return the endpoint; free it with free_endpoint.
inline endpoint_t alloc_endpoint() { return alloc_endpoint_x()(); }

class get_default_endpoint_x {
 public:
  get_default_endpoint_x() {}
  LCI_CXX_SETTER(get_default_endpoint_x, device_t, device)
  LCI_CXX_RUNTIME_ARG(get_default_endpoint_x)
  endpoint_t call() const { return detail::get_default_endpoint(m_device, m_runtime); }
  endpoint_t operator()() const { return call(); }

 private:
  device_t m_device;
  runtime_t m_runtime;
};
// A device's default endpoint, which operations use without .endpoint().
// Thread-safe.
// @return its handle; empty if the device has none.
inline endpoint_t get_default_endpoint() { return get_default_endpoint_x()(); }

class alloc_matching_engine_x {
 public:
  alloc_matching_engine_x() {}
  alloc_matching_engine_x&& matching_engine_type(attr_matching_engine_type_t v) {
    m_type = v;
    m_set = true;
    return std::move(*this);
  }
  LCI_CXX_SETTER(alloc_matching_engine_x, const char*, name)
  LCI_CXX_SETTER(alloc_matching_engine_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_matching_engine_x)
  matching_engine_t call() const {
    return detail::alloc_matching_engine(m_type, m_set, m_name, m_user_context, m_runtime);
  }
  matching_engine_t operator()() const { return call(); }

 private:
  attr_matching_engine_type_t m_type = attr_matching_engine_type_t::map;
  bool m_set = false;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a matching engine: post_send and post_recv given
// .matching_engine(e) match only each other, eager or rendezvous. Its
// matching_engine_type is reported, not used. Collective: every rank
// allocates its engines in the same order. Not thread-safe.
// @return the engine; free it with free_matching_engine.
inline matching_engine_t alloc_matching_engine() { return alloc_matching_engine_x()(); }

class matching_engine_insert_x {
 public:
  matching_engine_insert_x(matching_engine_t engine, matching_entry_key_t key,
                           matching_entry_val_t value, matching_entry_type_t entry_type)
      : m_matching_engine(engine), m_key(key), m_value(value), m_entry_type(entry_type) {}
  LCI_CXX_SETTER(matching_engine_insert_x, matching_engine_t, matching_engine)
  LCI_CXX_SETTER(matching_engine_insert_x, matching_entry_key_t, key)
  LCI_CXX_SETTER(matching_engine_insert_x, matching_entry_val_t, value)
  LCI_CXX_SETTER(matching_engine_insert_x, matching_entry_type_t, entry_type)
  LCI_CXX_RUNTIME_ARG(matching_engine_insert_x)
  matching_entry_val_t call() const {
    return detail::matching_engine_insert(m_matching_engine, m_key, m_value, m_entry_type,
                                          m_runtime);
  }
  matching_entry_val_t operator()() const { return call(); }

 private:
  matching_engine_t m_matching_engine;
  matching_entry_key_t m_key;
  matching_entry_val_t m_value;
  matching_entry_type_t m_entry_type;
  runtime_t m_runtime;
};
// Inserts a send or receive entry into an engine's own table (not the one
// post_send and post_recv match in). Thread-safe (the table has a lock).
// @param engine the engine (an empty handle: the runtime's default engine;
// none throws std::runtime_error).
// @param key the key: entries of the same key and of the two kinds match.
// @param value the entry's value, returned to the inserter of the matching
// entry.
// @param entry_type whether the entry is a send or a receive.
// @return the value of the oldest entry of the other kind with the same
// key, removed from the table; nullptr when there was none and the entry
// was queued.
inline matching_entry_val_t matching_engine_insert(matching_engine_t engine,
                                                   matching_entry_key_t key,
                                                   matching_entry_val_t value,
                                                   matching_entry_type_t entry_type) {
  return matching_engine_insert_x(engine, key, value, entry_type)();
}

class alloc_net_context_x {
 public:
  alloc_net_context_x() {}
  LCI_CXX_SETTER(alloc_net_context_x, const char*, name)
  LCI_CXX_SETTER(alloc_net_context_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_net_context_x)
  net_context_t call() const { return detail::alloc_net_context(m_name, m_user_context, m_runtime); }
  net_context_t operator()() const { return call(); }

 private:
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a net context: a record of the runtime's default net context's
// attributes (the backend is chosen by LCI_BACKEND, not by it). Not
// thread-safe.
// @return the net context; free it with free_net_context.
inline net_context_t alloc_net_context() { return alloc_net_context_x()(); }

// ---- memory registration -----------------------------------------------------

namespace detail {
LCI_CXX_API mr_t register_memory(void* address, size_t size, device_t device, runtime_t runtime);
LCI_CXX_API void deregister_memory(mr_t* mr, runtime_t runtime);
LCI_CXX_API rmr_t get_rmr(mr_t mr, runtime_t runtime);
}  // namespace detail

class register_memory_x {
 public:
  register_memory_x(void* address, size_t size) : m_address(address), m_size(size) {}
  LCI_CXX_SETTER(register_memory_x, void*, address)
  LCI_CXX_SETTER(register_memory_x, size_t, size)
  LCI_CXX_SETTER(register_memory_x, device_t, device)
  LCI_CXX_RUNTIME_ARG(register_memory_x)
  mr_t call() const { return detail::register_memory(m_address, m_size, m_device, m_runtime); }
  mr_t operator()() const { return call(); }

 private:
  void* m_address;
  size_t m_size;
  device_t m_device;
  runtime_t m_runtime;
};
// Registers local memory with the network of a device (.device(); default:
// the runtime's default device), for the mr argument of operations and for
// peers' puts and gets (get_rmr). Thread-safe. Concepts: Buffer ownership.
// @param address the first byte; the memory stays the program's and must
// stay allocated until deregister_memory.
// @param size the length in bytes.
// @return the registration; throws std::runtime_error when the network
// refuses it.
inline mr_t register_memory(void* address, size_t size) { return register_memory_x(address, size)(); }
// Deregisters memory: the peers' rmr_t of it are no longer valid.
// Thread-safe, but no operation may use the registration meanwhile.
// @param mr in/out: the registration; made empty. An empty handle
// (MR_HOST, ...) throws std::runtime_error.
LCI_CXX_SIMPLE_OP1(void, deregister_memory, mr_t*, mr)
// The remote side of a registration, to send to the peers that put into
// or get from it. Thread-safe.
// @param mr the registration (an empty one throws std::runtime_error).
// @return its rmr_t: self-contained, copied byte for byte to the peers.
LCI_CXX_SIMPLE_OP1(rmr_t, get_rmr, mr_t, mr)

// ---- completion objects --------------------------------------------------------

namespace detail {
LCI_CXX_API comp_t alloc_sync(int threshold, bool threshold_set, bool zero_copy_am,
                              bool zero_copy_set, const char* name, void* user_context);
LCI_CXX_API bool sync_test(comp_t comp, status_t* p_out);
LCI_CXX_API void sync_wait(comp_t comp, status_t* p_out, bool do_progress, device_t device,
                           runtime_t runtime);
LCI_CXX_API comp_t alloc_counter(const char* name, void* user_context);
LCI_CXX_API int64_t counter_get(comp_t comp);
LCI_CXX_API void counter_set(comp_t comp, int64_t value);
LCI_CXX_API comp_t alloc_cq(int default_length, bool length_set, bool zero_copy_am,
                            bool zero_copy_set, const char* name, void* user_context);
LCI_CXX_API status_t cq_pop(comp_t comp);
LCI_CXX_API comp_t alloc_handler(comp_handler_t handler, bool zero_copy_am, bool zero_copy_set,
                                 const char* name, void* user_context);
LCI_CXX_API void free_comp(comp_t* comp);
LCI_CXX_API void comp_signal(comp_t comp, status_t status);
LCI_CXX_API rcomp_t reserve_rcomps(rcomp_t n, runtime_t runtime);
LCI_CXX_API rcomp_t register_rcomp(comp_t comp, rcomp_t rcomp, runtime_t runtime);
LCI_CXX_API void deregister_rcomp(rcomp_t rcomp, runtime_t runtime);
LCI_CXX_API comp_t alloc_graph(comp_t comp, const char* name, void* user_context);
LCI_CXX_API graph_node_t graph_add_node(comp_t comp, graph_node_run_cb_t fn, void* value,
                                        graph_node_free_cb_t free_cb);
LCI_CXX_API void graph_add_edge(comp_t comp, graph_node_t src, graph_node_t dst,
                                graph_edge_run_cb_t fn);
LCI_CXX_API void graph_node_mark_complete(graph_node_t node, status_t status);
LCI_CXX_API void graph_start(comp_t comp);
LCI_CXX_API status_t graph_test(comp_t comp);
}  // namespace detail

class alloc_sync_x {
 public:
  alloc_sync_x() {}
  alloc_sync_x&& threshold(int v) {
    m_threshold = v;
    m_threshold_set = true;
    return std::move(*this);
  }
  alloc_sync_x&& zero_copy_am(bool v) {
    m_zero_copy_am = v;
    m_zero_copy_set = true;
    return std::move(*this);
  }
  LCI_CXX_SETTER(alloc_sync_x, const char*, name)
  LCI_CXX_SETTER(alloc_sync_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_sync_x)
  comp_t call() const {
    return detail::alloc_sync(m_threshold, m_threshold_set, m_zero_copy_am, m_zero_copy_set,
                              m_name, m_user_context);
  }
  comp_t operator()() const { return call(); }

 private:
  int m_threshold = 1;
  bool m_threshold_set = false;
  bool m_zero_copy_am = false;
  bool m_zero_copy_set = false;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a synchronizer: ready once `threshold` completions arrived
// (.threshold(); default: the default attribute sync_threshold, 1; below 1
// throws std::runtime_error), tested by sync_test or waited for by
// sync_wait. .zero_copy_am(true): an eager active message is handed over
// in its packet (give it back with put_upacket). Thread-safe.
// Concepts: Completion kinds.
// @return the synchronizer; free it with free_comp.
inline comp_t alloc_sync() { return alloc_sync_x()(); }

class sync_test_x {
 public:
  sync_test_x(comp_t comp, status_t* p_out) : m_comp(comp), m_p_out(p_out) {}
  LCI_CXX_SETTER(sync_test_x, comp_t, comp)
  LCI_CXX_SETTER(sync_test_x, status_t*, p_out)
  LCI_CXX_RUNTIME_ARG(sync_test_x)
  bool call() const { return detail::sync_test(m_comp, m_p_out); }
  bool operator()() const { return call(); }

 private:
  comp_t m_comp;
  status_t* m_p_out;
  runtime_t m_runtime;
};
// Tests a synchronizer without blocking or progressing. Thread-safe: of
// threads testing one synchronizer, one sees it ready.
// @param comp the synchronizer (another kind of object throws
// std::runtime_error).
// @param p_out out: room for `threshold` statuses, or nullptr (not copied).
// @return true once ready: the statuses are copied to p_out[0..threshold)
// and the synchronizer is reset for reuse; false: p_out is left as it was.
inline bool sync_test(comp_t comp, status_t* p_out) { return sync_test_x(comp, p_out)(); }

class sync_wait_x {
 public:
  sync_wait_x(comp_t comp, status_t* p_out) : m_comp(comp), m_p_out(p_out) {}
  LCI_CXX_SETTER(sync_wait_x, comp_t, comp)
  LCI_CXX_SETTER(sync_wait_x, status_t*, p_out)
  LCI_CXX_SETTER(sync_wait_x, bool, do_progress)
  LCI_CXX_SETTER(sync_wait_x, device_t, device)
  LCI_CXX_RUNTIME_ARG(sync_wait_x)
  void call() const { detail::sync_wait(m_comp, m_p_out, m_do_progress, m_device, m_runtime); }
  void operator()() const { call(); }

 private:
  comp_t m_comp;
  status_t* m_p_out;
  bool m_do_progress = true;
  device_t m_device;
  runtime_t m_runtime;
};
// Waits until a synchronizer is ready, as sync_test, progressing the
// device (.device(); default: the runtime's default device) in the
// meantime, or only spinning with .do_progress(false). Thread-safe.
// Concepts: Progress.
// @param comp the synchronizer (another kind throws std::runtime_error).
// @param p_out out: room for `threshold` statuses, or nullptr.
inline void sync_wait(comp_t comp, status_t* p_out) { sync_wait_x(comp, p_out).call(); }

class alloc_counter_x {
 public:
  alloc_counter_x() {}
  LCI_CXX_SETTER(alloc_counter_x, const char*, name)
  LCI_CXX_SETTER(alloc_counter_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_counter_x)
  comp_t call() const { return detail::alloc_counter(m_name, m_user_context); }
  comp_t operator()() const { return call(); }

 private:
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a counter: each completion adds one (an active message's buffer
// counted by it is freed). Thread-safe.
// @return the counter, at 0; free it with free_comp.
inline comp_t alloc_counter() { return alloc_counter_x()(); }

class counter_get_x {
 public:
  explicit counter_get_x(comp_t comp) : m_comp(comp) {}
  LCI_CXX_SETTER(counter_get_x, comp_t, comp)
  LCI_CXX_RUNTIME_ARG(counter_get_x)
  int64_t call() const { return detail::counter_get(m_comp); }
  int64_t operator()() const { return call(); }

 private:
  comp_t m_comp;
  runtime_t m_runtime;
};
// Reads a counter. Thread-safe.
// @param comp the counter (another kind throws std::runtime_error).
// @return the completions counted since allocation or counter_set.
inline int64_t counter_get(comp_t comp) { return counter_get_x(comp)(); }

class counter_set_x {
 public:
  counter_set_x(comp_t comp, int64_t value) : m_comp(comp), m_value(value) {}
  LCI_CXX_SETTER(counter_set_x, comp_t, comp)
  LCI_CXX_SETTER(counter_set_x, int64_t, value)
  LCI_CXX_RUNTIME_ARG(counter_set_x)
  void call() const { detail::counter_set(m_comp, m_value); }
  void operator()() const { call(); }

 private:
  comp_t m_comp;
  int64_t m_value;
  runtime_t m_runtime;
};
// Sets a counter. Thread-safe (completions counted meanwhile may be lost).
// @param comp the counter (another kind throws std::runtime_error).
// @param value the new value.
inline void counter_set(comp_t comp, int64_t value) { counter_set_x(comp, value).call(); }

class alloc_cq_x {
 public:
  alloc_cq_x() {}
  alloc_cq_x&& default_length(int v) {
    m_default_length = v;
    m_length_set = true;
    return std::move(*this);
  }
  alloc_cq_x&& zero_copy_am(bool v) {
    m_zero_copy_am = v;
    m_zero_copy_set = true;
    return std::move(*this);
  }
  LCI_CXX_SETTER(alloc_cq_x, attr_cq_type_t, cq_type)
  LCI_CXX_SETTER(alloc_cq_x, const char*, name)
  LCI_CXX_SETTER(alloc_cq_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_cq_x)
  comp_t call() const {
    return detail::alloc_cq(m_default_length, m_length_set, m_zero_copy_am, m_zero_copy_set,
                            m_name, m_user_context);
  }
  comp_t operator()() const { return call(); }

 private:
  int m_default_length = 0;
  bool m_length_set = false;
  bool m_zero_copy_am = false;
  bool m_zero_copy_set = false;
  attr_cq_type_t m_cq_type = attr_cq_type_t::lcrq;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a completion queue: each completion pushes its status, popped
// with cq_pop. .default_length(n) is its capacity (default: the default
// attribute cq_default_length; below 1 throws std::runtime_error).
// .cq_type is accepted, not used; .zero_copy_am as for alloc_sync.
// Thread-safe.
// Concepts: Completion kinds.
// @return the queue; free it with free_comp.
inline comp_t alloc_cq() { return alloc_cq_x()(); }

class cq_pop_x {
 public:
  explicit cq_pop_x(comp_t comp) : m_comp(comp) {}
  LCI_CXX_SETTER(cq_pop_x, comp_t, comp)
  LCI_CXX_RUNTIME_ARG(cq_pop_x)
  status_t call() const { return detail::cq_pop(m_comp); }
  status_t operator()() const { return call(); }

 private:
  comp_t m_comp;
  runtime_t m_runtime;
};
// Pops the oldest status of a completion queue, without blocking or
// progressing. Thread-safe (any number of threads may pop).
// @param comp the queue (another kind throws std::runtime_error).
// @return the status of a completed operation (done), or a status with
// error retry when the queue is empty.
inline status_t cq_pop(comp_t comp) { return cq_pop_x(comp)(); }

class alloc_handler_x {
 public:
  explicit alloc_handler_x(comp_handler_t handler) : m_handler(handler) {}
  LCI_CXX_SETTER(alloc_handler_x, comp_handler_t, handler)
  alloc_handler_x&& zero_copy_am(bool v) {
    m_zero_copy_am = v;
    m_zero_copy_set = true;
    return std::move(*this);
  }
  LCI_CXX_SETTER(alloc_handler_x, const char*, name)
  LCI_CXX_SETTER(alloc_handler_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_handler_x)
  comp_t call() const {
    return detail::alloc_handler(m_handler, m_zero_copy_am, m_zero_copy_set, m_name,
                                 m_user_context);
  }
  comp_t operator()() const { return call(); }

 private:
  comp_handler_t m_handler;
  bool m_zero_copy_am = false;
  bool m_zero_copy_set = false;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a handler: each completion calls `handler(status)` in the
// thread that completes it (usually inside progress); the handler owns an
// active message's buffer. Thread-safe. Concepts: Completion kinds,
// Progress.
// @param handler the function (nullptr throws std::runtime_error).
// @return the handler object; free it with free_comp.
inline comp_t alloc_handler(comp_handler_t handler) { return alloc_handler_x(handler)(); }

class free_comp_x {
 public:
  explicit free_comp_x(comp_t* comp) : m_comp(comp) {}
  LCI_CXX_SETTER(free_comp_x, comp_t*, comp)
  LCI_CXX_RUNTIME_ARG(free_comp_x)
  void call() const { detail::free_comp(m_comp); }
  void operator()() const { call(); }

 private:
  comp_t* m_comp;
  runtime_t m_runtime;
};
// Frees a completion object, of any kind (a program's comp_impl_t is
// deleted). Not thread-safe: no operation that signals it may be
// outstanding, and no thread may use it meanwhile.
// @param comp in/out: the object; made empty. An empty handle throws
// std::runtime_error.
inline void free_comp(comp_t* comp) { free_comp_x(comp).call(); }

class comp_signal_x {
 public:
  comp_signal_x(comp_t comp, status_t status) : m_comp(comp), m_status(status) {}
  LCI_CXX_SETTER(comp_signal_x, comp_t, comp)
  LCI_CXX_SETTER(comp_signal_x, status_t, status)
  LCI_CXX_RUNTIME_ARG(comp_signal_x)
  void call() const { detail::comp_signal(m_comp, m_status); }
  void operator()() const { call(); }

 private:
  comp_t m_comp;
  status_t m_status;
  runtime_t m_runtime;
};
// Signals a completion object as a completion would. Thread-safe.
// @param comp the object (an empty handle throws std::runtime_error).
// @param status the status it receives.
inline void comp_signal(comp_t comp, status_t status) { comp_signal_x(comp, status).call(); }

// Reserves consecutive remote completion handles, to register objects
// under chosen handles (register_rcomp_x::rcomp). Thread-safe.
// @param n how many (0, or more than are left of 65535, throws
// std::runtime_error).
// @return the first of the handles.
LCI_CXX_SIMPLE_OP1(rcomp_t, reserve_rcomps, rcomp_t, n)

class register_rcomp_x {
 public:
  explicit register_rcomp_x(comp_t comp) : m_comp(comp) {}
  LCI_CXX_SETTER(register_rcomp_x, comp_t, comp)
  LCI_CXX_SETTER(register_rcomp_x, rcomp_t, rcomp)
  LCI_CXX_RUNTIME_ARG(register_rcomp_x)
  rcomp_t call() const { return detail::register_rcomp(m_comp, m_rcomp, m_runtime); }
  rcomp_t operator()() const { return call(); }

 private:
  comp_t m_comp;
  rcomp_t m_rcomp = 0;
  runtime_t m_runtime;
};
// Gives a completion object the handle peers name it by (post_am's and
// post_put's remote_comp). Handles are given in registration order, so
// ranks that register in the same order agree on them; one registry per
// process, at most 65535 handles. Thread-safe.
// @param comp the object (an empty handle throws std::runtime_error); it
// must stay allocated while registered.
// @return its handle (the next free one, or .rcomp(h) of reserve_rcomps).
inline rcomp_t register_rcomp(comp_t comp) { return register_rcomp_x(comp)(); }
// Removes a handle: messages that arrive for it afterwards find no object.
// Thread-safe.
// @param rcomp the handle (0 or beyond the registry throws
// std::runtime_error).
LCI_CXX_SIMPLE_OP1(void, deregister_rcomp, rcomp_t, rcomp)

class alloc_graph_x {
 public:
  alloc_graph_x() {}
  LCI_CXX_SETTER(alloc_graph_x, comp_t, comp)
  LCI_CXX_SETTER(alloc_graph_x, const char*, name)
  LCI_CXX_SETTER(alloc_graph_x, void*, user_context)
  LCI_CXX_RUNTIME_ARG(alloc_graph_x)
  comp_t call() const { return detail::alloc_graph(m_comp, m_name, m_user_context); }
  comp_t operator()() const { return call(); }

 private:
  comp_t m_comp;
  const char* m_name = nullptr;
  void* m_user_context = nullptr;
  runtime_t m_runtime;
};
// Allocates a completion graph: nodes (graph_add_node) run when all their
// predecessors completed (graph_add_edge), from graph_start on. With
// .comp(c), the graph signals c once every node completed (a done status
// with the graph's user_context) and then frees itself; without, graph_test
// reports it. Build it from one thread before graph_start; completions may
// then come from any thread. Concepts: Completion kinds.
// @return the graph (a completion object); free it with free_comp, except a
// graph given .comp(c) that completed (it freed itself).
inline comp_t alloc_graph() { return alloc_graph_x()(); }

class graph_add_node_x {
 public:
  graph_add_node_x(comp_t comp, graph_node_run_cb_t fn) : m_comp(comp), m_fn(fn) {}
  LCI_CXX_SETTER(graph_add_node_x, comp_t, comp)
  LCI_CXX_SETTER(graph_add_node_x, graph_node_run_cb_t, fn)
  LCI_CXX_SETTER(graph_add_node_x, void*, value)
  LCI_CXX_SETTER(graph_add_node_x, graph_node_free_cb_t, free_cb)
  LCI_CXX_RUNTIME_ARG(graph_add_node_x)
  graph_node_t call() const { return detail::graph_add_node(m_comp, m_fn, m_value, m_free_cb); }
  graph_node_t operator()() const { return call(); }

 private:
  comp_t m_comp;
  graph_node_run_cb_t m_fn;
  void* m_value = nullptr;
  graph_node_free_cb_t m_free_cb = nullptr;
  runtime_t m_runtime;
};
// Adds a node to a graph (before graph_start). .value(v) is passed to fn
// and to .free_cb(f), which the graph calls on v when it is freed. Not
// thread-safe.
// @param comp the graph (another kind throws std::runtime_error).
// @param fn the node's function; GRAPH_NODE_DUMMY_CB: none.
// @return the node.
inline graph_node_t graph_add_node(comp_t comp, graph_node_run_cb_t fn) {
  return graph_add_node_x(comp, fn)();
}

class graph_add_edge_x {
 public:
  graph_add_edge_x(comp_t comp, graph_node_t src, graph_node_t dst)
      : m_comp(comp), m_src(src), m_dst(dst) {}
  LCI_CXX_SETTER(graph_add_edge_x, comp_t, comp)
  LCI_CXX_SETTER(graph_add_edge_x, graph_node_t, src)
  LCI_CXX_SETTER(graph_add_edge_x, graph_node_t, dst)
  LCI_CXX_SETTER(graph_add_edge_x, graph_edge_run_cb_t, fn)
  LCI_CXX_RUNTIME_ARG(graph_add_edge_x)
  void call() const { detail::graph_add_edge(m_comp, m_src, m_dst, m_fn); }
  void operator()() const { call(); }

 private:
  comp_t m_comp;
  graph_node_t m_src, m_dst;
  graph_edge_run_cb_t m_fn = nullptr;
  runtime_t m_runtime;
};
// Adds an edge: `dst` runs only after `src` completed (.fn(f): f runs
// when src completed, before dst may run). Before graph_start; not
// thread-safe.
// @param comp the graph (another kind throws std::runtime_error).
// @param src a node of the graph, or GRAPH_START.
// @param dst a node of the graph, or GRAPH_END.
inline void graph_add_edge(comp_t comp, graph_node_t src, graph_node_t dst) {
  graph_add_edge_x(comp, src, dst).call();
}

class graph_node_mark_complete_x {
 public:
  explicit graph_node_mark_complete_x(graph_node_t node) : m_node(node) {}
  LCI_CXX_SETTER(graph_node_mark_complete_x, graph_node_t, node)
  LCI_CXX_SETTER(graph_node_mark_complete_x, status_t, status)
  LCI_CXX_RUNTIME_ARG(graph_node_mark_complete_x)
  void call() const { detail::graph_node_mark_complete(m_node, m_status); }
  void operator()() const { call(); }

 private:
  graph_node_t m_node;
  status_t m_status;
  runtime_t m_runtime;
};
// Completes a node whose function returned posted (.status(s): the status
// its edges see; default: done). Thread-safe.
// @param node the node (of a running graph).
inline void graph_node_mark_complete(graph_node_t node) { graph_node_mark_complete_x(node).call(); }

class graph_start_x {
 public:
  explicit graph_start_x(comp_t comp) : m_comp(comp) {}
  LCI_CXX_SETTER(graph_start_x, comp_t, comp)
  LCI_CXX_RUNTIME_ARG(graph_start_x)
  void call() const { detail::graph_start(m_comp); }
  void operator()() const { call(); }

 private:
  comp_t m_comp;
  runtime_t m_runtime;
};
// Runs a graph: the nodes without predecessors and those after
// GRAPH_START run in the call; the others as their predecessors complete.
// A graph may run again once complete. Not thread-safe with another
// graph_start of the same graph.
// @param comp the graph (another kind throws std::runtime_error).
inline void graph_start(comp_t comp) { graph_start_x(comp).call(); }

class graph_test_x {
 public:
  explicit graph_test_x(comp_t comp) : m_comp(comp) {}
  LCI_CXX_SETTER(graph_test_x, comp_t, comp)
  LCI_CXX_RUNTIME_ARG(graph_test_x)
  status_t call() const { return detail::graph_test(m_comp); }
  status_t operator()() const { return call(); }

 private:
  comp_t m_comp;
  runtime_t m_runtime;
};
// Tests a graph allocated without .comp(), running again the nodes whose
// function returned retry. Thread-safe.
// @param comp the graph (another kind throws std::runtime_error).
// @return done once every node completed (the graph is then reset for
// another graph_start); retry while not.
inline status_t graph_test(comp_t comp) { return graph_test_x(comp)(); }

// ---- communication -------------------------------------------------------------

// The optional arguments every posting shares (_NO_CALL: the class
// defines its own call operator, post_send_x and post_recv_x).
#define LCI_CXX_COMM_SETTERS(cls)                                     \
  LCI_CXX_COMM_SETTERS_NO_CALL(cls)                                   \
  status_t call() const { return detail::post_comm(a_); }             \
  status_t operator()() const { return call(); }
#define LCI_CXX_COMM_SETTERS_NO_CALL(cls)                             \
  LCI_CXX_ARG_SETTER(cls, runtime_t, runtime)                         \
  LCI_CXX_ARG_SETTER(cls, packet_pool_t, packet_pool)                 \
  LCI_CXX_ARG_SETTER(cls, device_t, device)                           \
  LCI_CXX_ARG_SETTER(cls, endpoint_t, endpoint)                       \
  LCI_CXX_ARG_SETTER(cls, mr_t, mr)                                   \
  LCI_CXX_ARG_SETTER(cls, void*, user_context)                        \
  LCI_CXX_ARG_SETTER(cls, bool, allow_done)                           \
  LCI_CXX_ARG_SETTER(cls, bool, allow_posted)                         \
  LCI_CXX_ARG_SETTER(cls, bool, allow_retry)                          \
  LCI_CXX_ARG_SETTER(cls, int, rank)                                  \
  LCI_CXX_ARG_SETTER(cls, void*, local_buffer)                        \
  LCI_CXX_ARG_SETTER(cls, size_t, size)                               \
  LCI_CXX_ARG_SETTER(cls, comp_t, local_comp)

class post_comm_x {
 public:
  post_comm_x(direction_t direction, int rank, void* local_buffer, size_t size, comp_t local_comp)
      : a_(direction == direction_t::OUT ? detail::comm_kind::send : detail::comm_kind::recv,
           direction, rank, local_buffer, size, local_comp) {}
  LCI_CXX_COMM_SETTERS(post_comm_x)
  LCI_CXX_ARG_SETTER(post_comm_x, direction_t, direction)
  LCI_CXX_ARG_SETTER(post_comm_x, matching_engine_t, matching_engine)
  LCI_CXX_ARG_SETTER(post_comm_x, comp_semantic_t, comp_semantic)
  LCI_CXX_ARG_SETTER(post_comm_x, uintptr_t, remote_disp)
  LCI_CXX_ARG_SETTER(post_comm_x, rmr_t, rmr)
  LCI_CXX_ARG_SETTER(post_comm_x, tag_t, tag)
  LCI_CXX_ARG_SETTER(post_comm_x, rcomp_t, remote_comp)
  LCI_CXX_ARG_SETTER(post_comm_x, matching_policy_t, matching_policy)

 private:
  detail::comm_args a_;
};
// The generic posting the others are forms of: direction_t::OUT is
// post_send, direction_t::IN is post_recv (with .tag() and the rest of
// their optional arguments). Thread-safe. Concepts: Message flow.
// @param direction OUT (a send) or IN (a receive).
// @param rank the peer, in [0, get_rank_n()) (a receive also takes
// ANY_SOURCE).
// @param local_buffer the data (a send) or where it goes (a receive); the
// caller keeps it, valid until the operation completed.
// @param size bytes to send, or the most a receive takes.
// @param local_comp the completion object signalled when a posted operation
// completes; COMP_NULL: complete in the call; COMP_NULL_RETRY: complete in
// the call, or retry.
// @return as post_send or post_recv: done, posted or retry.
inline status_t post_comm(direction_t direction, int rank, void* local_buffer, size_t size,
                          comp_t local_comp) {
  return post_comm_x(direction, rank, local_buffer, size, local_comp)();
}

class post_am_x {
 public:
  post_am_x(int rank, void* local_buffer, size_t size, comp_t local_comp, rcomp_t remote_comp)
      : a_(detail::comm_kind::am, direction_t::OUT, rank, local_buffer, size, local_comp) {
    a_.remote_comp = remote_comp;
  }
  LCI_CXX_COMM_SETTERS(post_am_x)
  LCI_CXX_ARG_SETTER(post_am_x, rcomp_t, remote_comp)
  LCI_CXX_ARG_SETTER(post_am_x, comp_semantic_t, comp_semantic)
  LCI_CXX_ARG_SETTER(post_am_x, tag_t, tag)

 private:
  detail::comm_args a_;
};
// Sends an active message: `size` bytes to the completion object that
// `remote_comp` names at `rank`, which receives them in a buffer of its
// own: allocated through the target's allocator (set_allocator), or, for an
// eager message to an object with zero_copy_am, the packet itself (given
// back with put_upacket). The target's status has the source rank, the tag
// (.tag()), the buffer and size, and user_context nullptr. Eager up to
// get_max_bcopy_size() bytes, by rendezvous beyond. Thread-safe; throws
// std::runtime_error for an invalid argument and peer_failure_error for a
// failed rank. Concepts: Message flow, Buffer ownership.
// @param rank the target, in [0, get_rank_n()).
// @param local_buffer the data; the caller keeps it (a get_upacket buffer
// goes to LCI with the message).
// @param size the bytes to send.
// @param local_comp signalled when a posted message completes; COMP_NULL:
// complete in the call; COMP_NULL_RETRY: complete in the call, or retry.
// @param remote_comp the target's register_rcomp handle (0 throws).
// @return done: an eager message was sent in the call (the buffer may be
// reused; local_comp is not signalled); posted: local_comp will be
// signalled once (rendezvous, comp_semantic_t::network or allow_done(false));
// retry: nothing was sent (no packet or send slot, or a backlog to wait
// behind), progress and call again; done_backlog or posted_backlog with
// allow_retry(false).
inline status_t post_am(int rank, void* local_buffer, size_t size, comp_t local_comp,
                        rcomp_t remote_comp) {
  return post_am_x(rank, local_buffer, size, local_comp, remote_comp)();
}

class post_send_x {
 public:
  post_send_x(int rank, void* local_buffer, size_t size, tag_t tag, comp_t local_comp)
      : a_(detail::comm_kind::send, direction_t::OUT, rank, local_buffer, size, local_comp) {
    a_.tag = tag;
  }
  LCI_CXX_COMM_SETTERS_NO_CALL(post_send_x)
  LCI_CXX_ARG_SETTER(post_send_x, tag_t, tag)
  LCI_CXX_ARG_SETTER(post_send_x, matching_engine_t, matching_engine)
  LCI_CXX_ARG_SETTER(post_send_x, comp_semantic_t, comp_semantic)
  LCI_CXX_ARG_SETTER(post_send_x, matching_policy_t, matching_policy)
  status_t call() const {
    if (detail::plain(a_) && a_.allow_done) {
      const errorcode_t e =
          detail::post_send_plain(a_.device.p_impl, a_.rank, a_.local_buffer, a_.size, a_.tag);
      if (__builtin_expect(e == errorcode_t::done, 1)) {
        status_t s(errorcode_t::done);
        s.rank = a_.rank;
        s.buffer = a_.local_buffer;
        s.size = a_.size;
        s.tag = a_.tag;
        s.user_context = a_.user_context;
        return s;
      }
      // A refusal is returned as post_comm would: with allow_retry and a
      // completion object other than COMP_NULL (which asks for done).
      if (e != detail::not_taken && a_.allow_retry && a_.local_comp.p_impl != nullptr)
        return status_t(e);
      return detail::post_plain_slow(detail::comm_kind::send, a_.device.p_impl, a_.rank,
                                     a_.local_buffer, a_.size, a_.tag, a_.local_comp.p_impl,
                                     a_.user_context, true, a_.allow_retry);
    }
    return detail::post_comm(a_);
  }
  status_t operator()() const { return call(); }

 private:
  detail::comm_args a_;
};
// Sends a tagged message, matched at `rank` by a post_recv with the same
// matching policy (and matching engine): any size, eager up to
// get_max_bcopy_size() bytes (copied into a packet), by rendezvous into the
// receiver's buffer beyond. Thread-safe; throws
// std::runtime_error for an invalid argument (rank out of range, a tag
// above the maximum, a null buffer with a size, an empty handle) and
// peer_failure_error for a failed rank. Concepts: Message flow, Completion
// kinds, Back-pressure and LCI_ERR_RETRY.
// @param rank the target, in [0, get_rank_n()).
// @param local_buffer the data; the caller keeps it, unchanged until the
// send completed (a get_upacket buffer goes to LCI with the message).
// @param size the bytes to send.
// @param tag the tag, at most runtime_t::get_attr_max_tag().
// @param local_comp signalled when a posted send completes; COMP_NULL:
// complete in the call (the call progresses until it is); COMP_NULL_RETRY:
// complete in the call, or retry.
// @return done: sent in the call (eager; the buffer may be reused,
// local_comp is not signalled); posted: local_comp will be signalled once
// (rendezvous, comp_semantic_t::network or allow_done(false)); retry:
// nothing was sent (no packet or send slot, or a backlog to wait behind),
// progress and call again; done_backlog or posted_backlog with
// allow_retry(false).
inline status_t post_send(int rank, void* local_buffer, size_t size, tag_t tag,
                          comp_t local_comp) {
  return post_send_x(rank, local_buffer, size, tag, local_comp)();
}

class post_recv_x {
 public:
  post_recv_x(int rank, void* local_buffer, size_t size, tag_t tag, comp_t local_comp)
      : a_(detail::comm_kind::recv, direction_t::IN, rank, local_buffer, size, local_comp) {
    a_.tag = tag;
  }
  LCI_CXX_COMM_SETTERS_NO_CALL(post_recv_x)
  LCI_CXX_ARG_SETTER(post_recv_x, tag_t, tag)
  LCI_CXX_ARG_SETTER(post_recv_x, matching_engine_t, matching_engine)
  LCI_CXX_ARG_SETTER(post_recv_x, matching_policy_t, matching_policy)
  status_t call() const {
    if (detail::plain(a_)) {
      detail::status_slot done;
      const errorcode_t e =
          detail::post_recv_plain(a_.device.p_impl, a_.rank, a_.local_buffer, a_.size, a_.tag,
                                  a_.local_comp.p_impl, a_.user_context,
                                  a_.allow_done ? &done.s : nullptr);
      if (__builtin_expect(e == errorcode_t::posted, 1)) return status_t(errorcode_t::posted);
      if (e == errorcode_t::done) return done.s;
      return detail::post_plain_slow(detail::comm_kind::recv, a_.device.p_impl, a_.rank,
                                     a_.local_buffer, a_.size, a_.tag, a_.local_comp.p_impl,
                                     a_.user_context, a_.allow_done, a_.allow_retry);
    }
    return detail::post_comm(a_);
  }
  status_t operator()() const { return call(); }

 private:
  detail::comm_args a_;
};
// Receives a tagged message of at most `size` bytes into local_buffer
// (a longer one is cut to the buffer), eager or rendezvous. ANY_SOURCE and
// ANY_TAG leave the rank or the tag out of the match: such a receive
// matches sends posted with the matching policy that leaves out the same
// (tag_only for ANY_SOURCE). The status has the source rank, the tag and
// the bytes received. Receives never wait behind the backlog. Thread-safe;
// throws std::runtime_error for an invalid argument. Concepts: Message flow.
// @param rank the source, in [0, get_rank_n()), or ANY_SOURCE.
// @param local_buffer where the data goes; the caller keeps it, valid until
// the receive completed.
// @param size the most bytes to receive.
// @param tag the tag, at most runtime_t::get_attr_max_tag(), or ANY_TAG.
// @param local_comp signalled when the posted receive completes;
// COMP_NULL: complete in the call (the call progresses until a message
// arrived).
// @return done: the message was there already (allow_done), received in
// the call, local_comp is not signalled; posted: local_comp will be
// signalled once with the status. A receive is never refused (no retry).
inline status_t post_recv(int rank, void* local_buffer, size_t size, tag_t tag,
                          comp_t local_comp) {
  return post_recv_x(rank, local_buffer, size, tag, local_comp)();
}

class post_put_x {
 public:
  post_put_x(int rank, void* local_buffer, size_t size, comp_t local_comp, uintptr_t remote_disp,
             rmr_t rmr)
      : a_(detail::comm_kind::put, direction_t::OUT, rank, local_buffer, size, local_comp) {
    a_.remote_disp = remote_disp;
    a_.rmr = rmr;
  }
  LCI_CXX_COMM_SETTERS(post_put_x)
  LCI_CXX_ARG_SETTER(post_put_x, uintptr_t, remote_disp)
  LCI_CXX_ARG_SETTER(post_put_x, rmr_t, rmr)
  LCI_CXX_ARG_SETTER(post_put_x, comp_semantic_t, comp_semantic)
  LCI_CXX_ARG_SETTER(post_put_x, tag_t, tag)
  LCI_CXX_ARG_SETTER(post_put_x, rcomp_t, remote_comp)

 private:
  detail::comm_args a_;
};
// Writes `size` bytes to rmr.base + remote_disp at `rank`; with
// .remote_comp(h), the target's completion object h is signalled too
// (source rank and tag, no buffer). A range beyond the registration
// completes with an error. Thread-safe; throws std::runtime_error for an
// invalid argument (an empty rmr, ...) and peer_failure_error for a failed
// rank. Concepts: Message flow, Buffer ownership.
// @param rank the target, in [0, get_rank_n()).
// @param local_buffer the data (.mr(m): its registration); the caller
// keeps it, unchanged until the put completed.
// @param size the bytes to write.
// @param local_comp signalled when the put completes; COMP_NULL: complete
// in the call; COMP_NULL_RETRY: complete in the call, or retry.
// @param remote_disp the offset in bytes from rmr.base.
// @param rmr the target's registration (its get_rmr, copied here).
// @return posted: local_comp will be signalled once; done with COMP_NULL
// (or allow_posted(false); fatal if the put failed); retry: nothing
// happened, progress and call again; posted_backlog with allow_retry(false).
inline status_t post_put(int rank, void* local_buffer, size_t size, comp_t local_comp,
                         uintptr_t remote_disp, rmr_t rmr) {
  return post_put_x(rank, local_buffer, size, local_comp, remote_disp, rmr)();
}

class post_get_x {
 public:
  post_get_x(int rank, void* local_buffer, size_t size, comp_t local_comp, uintptr_t remote_disp,
             rmr_t rmr)
      : a_(detail::comm_kind::get, direction_t::IN, rank, local_buffer, size, local_comp) {
    a_.remote_disp = remote_disp;
    a_.rmr = rmr;
  }
  LCI_CXX_COMM_SETTERS(post_get_x)
  LCI_CXX_ARG_SETTER(post_get_x, uintptr_t, remote_disp)
  LCI_CXX_ARG_SETTER(post_get_x, rmr_t, rmr)
  LCI_CXX_ARG_SETTER(post_get_x, tag_t, tag)
  LCI_CXX_ARG_SETTER(post_get_x, rcomp_t, remote_comp)

 private:
  detail::comm_args a_;
};
// Reads `size` bytes from rmr.base + remote_disp at `rank` into
// local_buffer; .remote_comp(h) as for post_put. Thread-safe; throws as
// post_put. Concepts: Message flow, Buffer ownership.
// @param rank the target, in [0, get_rank_n()).
// @param local_buffer where the data goes (.mr(m): its registration); the
// caller keeps it, valid until the get completed.
// @param size the bytes to read.
// @param local_comp signalled when the get completes; COMP_NULL: complete
// in the call; COMP_NULL_RETRY: complete in the call, or retry.
// @param remote_disp the offset in bytes from rmr.base.
// @param rmr the target's registration (its get_rmr, copied here).
// @return posted: local_comp will be signalled once; done with COMP_NULL
// (or allow_posted(false); fatal if the get failed); retry: nothing
// happened, progress and call again; posted_backlog with allow_retry(false).
inline status_t post_get(int rank, void* local_buffer, size_t size, comp_t local_comp,
                         uintptr_t remote_disp, rmr_t rmr) {
  return post_get_x(rank, local_buffer, size, local_comp, remote_disp, rmr)();
}
#undef LCI_CXX_COMM_SETTERS
#undef LCI_CXX_COMM_SETTERS_NO_CALL

// ---- the network layer -------------------------------------------------------------
//
// Raw sends, receives, puts, gets and atomics of one device, with their
// completions reported by net_poll_cq as net_status_t instead of through
// completion objects. Over this library's core they are an emulation on
// the device's messages and one-sided operations (docs/lci2.md, "The
// network layer"): a message of the network layer goes to the receives
// posted with net_post_recv on the device of the same uid at its target,
// oldest first, and waits there, in arrival order, while none is posted.
// A send carries at most get_max_bcopy_size() bytes.
namespace detail {
enum class net_kind : uint8_t { recv, sends, send, puts, put, putImms, putImm, get, fetch_add,
                                add };
struct net_args {
  net_kind kind;
  int rank;
  void* buffer;
  size_t size;
  mr_t mr;
  uint64_t offset;
  rmr_t rmr;
  uint64_t value;
  uint64_t* result;
  net_atomic_scope_t required_atomic_scope;
  runtime_t runtime;
  device_t device;
  endpoint_t endpoint;
  net_imm_data_t imm_data;
  void* user_context;
  net_args(net_kind k, int rank_, void* buffer_, size_t size_, mr_t mr_, uint64_t offset_,
           rmr_t rmr_)
      : kind(k), rank(rank_), buffer(buffer_), size(size_), mr(mr_), offset(offset_),
        rmr(rmr_), value(0), result(nullptr),
        required_atomic_scope(net_atomic_scope_t::GLOBAL), imm_data(0), user_context(nullptr) {}
};
LCI_CXX_API error_t post_net(const net_args& a);
LCI_CXX_API size_t net_poll_cq(size_t max_polls, net_status_t* statuses, device_t device,
                               runtime_t runtime);
}  // namespace detail

class net_poll_cq_x {
 public:
  net_poll_cq_x(size_t max_polls, net_status_t* statuses)
      : m_max_polls(max_polls), m_statuses(statuses) {}
  LCI_CXX_SETTER(net_poll_cq_x, size_t, max_polls)
  LCI_CXX_SETTER(net_poll_cq_x, net_status_t*, statuses)
  LCI_CXX_SETTER(net_poll_cq_x, device_t, device)
  LCI_CXX_RUNTIME_ARG(net_poll_cq_x)
  size_t call() const { return detail::net_poll_cq(m_max_polls, m_statuses, m_device, m_runtime); }
  size_t operator()() const { return call(); }

 private:
  size_t m_max_polls;
  net_status_t* m_statuses;
  device_t m_device;
  runtime_t m_runtime;
};
// Progresses the device (.device(); default: the runtime's default device)
// once, then takes up to max_polls of its network layer's completions,
// oldest first: those of the operations posted on it and the messages,
// REMOTE_WRITEs and replies sent to it. Thread-safe (a thread that finds
// another taking them takes none).
// @param max_polls the most completions to take.
// @param statuses out: room for max_polls statuses; nullptr: the
// completions are discarded.
// @return how many it took.
inline size_t net_poll_cq(size_t max_polls, net_status_t* statuses) {
  return net_poll_cq_x(max_polls, statuses)();
}

#define LCI_CXX_NET_COMMON(cls)                   \
  LCI_CXX_ARG_SETTER(cls, runtime_t, runtime)     \
  LCI_CXX_ARG_SETTER(cls, device_t, device)       \
  LCI_CXX_ARG_SETTER(cls, void*, user_context)    \
  error_t call() const { return detail::post_net(a_); } \
  error_t operator()() const { return call(); }
#define LCI_CXX_NET_TO_RANK(cls)                  \
  LCI_CXX_NET_COMMON(cls)                         \
  LCI_CXX_ARG_SETTER(cls, int, rank)              \
  LCI_CXX_ARG_SETTER(cls, endpoint_t, endpoint)
#define LCI_CXX_NET_BUFFER(cls)                   \
  LCI_CXX_ARG_SETTER(cls, void*, buffer)          \
  LCI_CXX_ARG_SETTER(cls, size_t, size)
#define LCI_CXX_NET_REMOTE(cls)                   \
  LCI_CXX_ARG_SETTER(cls, uint64_t, offset)       \
  LCI_CXX_ARG_SETTER(cls, rmr_t, rmr)

class net_post_recv_x {
 public:
  net_post_recv_x(void* buffer, size_t size, mr_t mr)
      : a_(detail::net_kind::recv, -1, buffer, size, mr, 0, rmr_t()) {}
  LCI_CXX_NET_COMMON(net_post_recv_x)
  LCI_CXX_NET_BUFFER(net_post_recv_x)
  LCI_CXX_ARG_SETTER(net_post_recv_x, mr_t, mr)

 private:
  detail::net_args a_;
};
// Posts a receive buffer for the device's next network-layer message
// (from the device of the same uid at the sender), oldest buffer first; a
// message that arrived before waits for it. Thread-safe.
// @param buffer where the message goes; the caller keeps it, valid until
// the RECV completion.
// @param size its size; a longer message completes it with ERROR (nothing
// copied).
// @param mr its registration, or MR_HOST.
// @return posted: a RECV {source rank, length, imm_data, user_context}
// comes through net_poll_cq.
inline error_t net_post_recv(void* buffer, size_t size, mr_t mr) {
  return net_post_recv_x(buffer, size, mr)();
}

class net_post_sends_x {
 public:
  net_post_sends_x(int rank, void* buffer, size_t size)
      : a_(detail::net_kind::sends, rank, buffer, size, mr_t(), 0, rmr_t()) {}
  LCI_CXX_NET_TO_RANK(net_post_sends_x)
  LCI_CXX_NET_BUFFER(net_post_sends_x)
  LCI_CXX_ARG_SETTER(net_post_sends_x, net_imm_data_t, imm_data)

 private:
  detail::net_args a_;
};
// Sends a network-layer message with inject semantics (.imm_data(d): its
// immediate data). Thread-safe; an invalid argument (a size beyond
// get_max_bcopy_size(), ...) throws std::runtime_error.
// @param rank the target, in [0, get_rank_n()).
// @param buffer the data, copied in the call: the caller keeps it.
// @param size at most get_max_bcopy_size() bytes.
// @return done: sent, no completion; retry: nothing sent, poll and call
// again.
inline error_t net_post_sends(int rank, void* buffer, size_t size) {
  return net_post_sends_x(rank, buffer, size)();
}

class net_post_send_x {
 public:
  net_post_send_x(int rank, void* buffer, size_t size, mr_t mr)
      : a_(detail::net_kind::send, rank, buffer, size, mr, 0, rmr_t()) {}
  LCI_CXX_NET_TO_RANK(net_post_send_x)
  LCI_CXX_NET_BUFFER(net_post_send_x)
  LCI_CXX_ARG_SETTER(net_post_send_x, mr_t, mr)
  LCI_CXX_ARG_SETTER(net_post_send_x, net_imm_data_t, imm_data)

 private:
  detail::net_args a_;
};
// Sends a network-layer message with post semantics (.imm_data(d): its
// immediate data). Thread-safe; an invalid argument throws
// std::runtime_error.
// @param rank the target, in [0, get_rank_n()).
// @param buffer the data (copied: the SEND completion is queued at once);
// the caller keeps it.
// @param size at most get_max_bcopy_size() bytes.
// @param mr the buffer's registration, or MR_HOST.
// @return posted: a SEND {rank, size, user_context} comes through
// net_poll_cq; retry: nothing sent, poll and call again.
inline error_t net_post_send(int rank, void* buffer, size_t size, mr_t mr) {
  return net_post_send_x(rank, buffer, size, mr)();
}

class net_post_puts_x {
 public:
  net_post_puts_x(int rank, void* buffer, size_t size, uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::puts, rank, buffer, size, mr_t(), offset, rmr) {}
  LCI_CXX_NET_TO_RANK(net_post_puts_x)
  LCI_CXX_NET_BUFFER(net_post_puts_x)
  LCI_CXX_NET_REMOTE(net_post_puts_x)

 private:
  detail::net_args a_;
};
// Writes to rmr.base + offset at `rank` with inject semantics. Thread-safe;
// an invalid argument throws std::runtime_error.
// @param rank the target, in [0, get_rank_n()).
// @param buffer the data, copied in the call: the caller keeps it.
// @param size at most get_max_bcopy_size() bytes.
// @param offset the offset in bytes from rmr.base.
// @param rmr the target's registration.
// @return done: no completion (only a failure is reported, as ERROR);
// retry: nothing happened, poll and call again.
inline error_t net_post_puts(int rank, void* buffer, size_t size, uint64_t offset, rmr_t rmr) {
  return net_post_puts_x(rank, buffer, size, offset, rmr)();
}

class net_post_put_x {
 public:
  net_post_put_x(int rank, void* buffer, size_t size, mr_t mr, uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::put, rank, buffer, size, mr, offset, rmr) {}
  LCI_CXX_NET_TO_RANK(net_post_put_x)
  LCI_CXX_NET_BUFFER(net_post_put_x)
  LCI_CXX_NET_REMOTE(net_post_put_x)
  LCI_CXX_ARG_SETTER(net_post_put_x, mr_t, mr)

 private:
  detail::net_args a_;
};
// Writes to rmr.base + offset at `rank` with post semantics, any size.
// Thread-safe; an invalid argument throws std::runtime_error.
// @param rank the target, in [0, get_rank_n()).
// @param buffer the data; the caller keeps it, unchanged until the WRITE
// completion.
// @param size the bytes to write.
// @param mr the buffer's registration, or MR_HOST.
// @param offset the offset in bytes from rmr.base.
// @param rmr the target's registration.
// @return posted: a WRITE (or ERROR, for a range beyond the registration)
// comes through net_poll_cq; retry: nothing happened, poll and call again.
inline error_t net_post_put(int rank, void* buffer, size_t size, mr_t mr, uint64_t offset,
                            rmr_t rmr) {
  return net_post_put_x(rank, buffer, size, mr, offset, rmr)();
}

class net_post_putImms_x {
 public:
  net_post_putImms_x(int rank, void* buffer, size_t size, uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::putImms, rank, buffer, size, mr_t(), offset, rmr) {}
  LCI_CXX_NET_TO_RANK(net_post_putImms_x)
  LCI_CXX_NET_BUFFER(net_post_putImms_x)
  LCI_CXX_NET_REMOTE(net_post_putImms_x)
  LCI_CXX_ARG_SETTER(net_post_putImms_x, net_imm_data_t, imm_data)

 private:
  detail::net_args a_;
};
// net_post_puts with immediate data (.imm_data(d)): once the data is at the
// target, its net_poll_cq reports REMOTE_WRITE {source rank, length,
// imm_data, user_context nullptr}. Thread-safe.
// @param rank the target, in [0, get_rank_n()).
// @param buffer the data, copied in the call: the caller keeps it.
// @param size at most get_max_bcopy_size() bytes.
// @param offset the offset in bytes from rmr.base.
// @param rmr the target's registration.
// @return done: no completion here; retry: nothing happened, poll and call
// again.
inline error_t net_post_putImms(int rank, void* buffer, size_t size, uint64_t offset,
                                rmr_t rmr) {
  return net_post_putImms_x(rank, buffer, size, offset, rmr)();
}

class net_post_putImm_x {
 public:
  net_post_putImm_x(int rank, void* buffer, size_t size, mr_t mr, uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::putImm, rank, buffer, size, mr, offset, rmr) {}
  LCI_CXX_NET_TO_RANK(net_post_putImm_x)
  LCI_CXX_NET_BUFFER(net_post_putImm_x)
  LCI_CXX_NET_REMOTE(net_post_putImm_x)
  LCI_CXX_ARG_SETTER(net_post_putImm_x, mr_t, mr)
  LCI_CXX_ARG_SETTER(net_post_putImm_x, net_imm_data_t, imm_data)

 private:
  detail::net_args a_;
};
// net_post_put with immediate data (.imm_data(d)): a WRITE completion here
// and REMOTE_WRITE {source rank, length, imm_data} at the target.
// Thread-safe.
// @param rank the target, in [0, get_rank_n()).
// @param buffer the data; the caller keeps it, unchanged until the WRITE
// completion.
// @param size the bytes to write.
// @param mr the buffer's registration, or MR_HOST.
// @param offset the offset in bytes from rmr.base.
// @param rmr the target's registration.
// @return posted: a WRITE (or ERROR) comes through net_poll_cq; retry:
// nothing happened, poll and call again.
inline error_t net_post_putImm(int rank, void* buffer, size_t size, mr_t mr, uint64_t offset,
                               rmr_t rmr) {
  return net_post_putImm_x(rank, buffer, size, mr, offset, rmr)();
}

class net_post_get_x {
 public:
  net_post_get_x(int rank, void* buffer, size_t size, mr_t mr, uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::get, rank, buffer, size, mr, offset, rmr) {}
  LCI_CXX_NET_TO_RANK(net_post_get_x)
  LCI_CXX_NET_BUFFER(net_post_get_x)
  LCI_CXX_NET_REMOTE(net_post_get_x)
  LCI_CXX_ARG_SETTER(net_post_get_x, mr_t, mr)

 private:
  detail::net_args a_;
};
// Reads from rmr.base + offset at `rank` with post semantics, any size.
// Thread-safe; an invalid argument throws std::runtime_error.
// @param rank the target, in [0, get_rank_n()).
// @param buffer where the data goes; the caller keeps it, valid until the
// READ completion.
// @param size the bytes to read.
// @param mr the buffer's registration, or MR_HOST.
// @param offset the offset in bytes from rmr.base.
// @param rmr the target's registration.
// @return posted: a READ (or ERROR) comes through net_poll_cq; retry:
// nothing happened, poll and call again.
inline error_t net_post_get(int rank, void* buffer, size_t size, mr_t mr, uint64_t offset,
                            rmr_t rmr) {
  return net_post_get_x(rank, buffer, size, mr, offset, rmr)();
}

class net_post_fetch_add_x {
 public:
  net_post_fetch_add_x(int rank, uint64_t* result, mr_t result_mr, uint64_t value,
                       uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::fetch_add, rank, result, sizeof(uint64_t), result_mr, offset, rmr) {
    a_.result = result;
    a_.value = value;
  }
  LCI_CXX_NET_TO_RANK(net_post_fetch_add_x)
  LCI_CXX_NET_REMOTE(net_post_fetch_add_x)
  LCI_CXX_ARG_SETTER(net_post_fetch_add_x, uint64_t*, result)
  net_post_fetch_add_x&& result_mr(mr_t v) {
    a_.mr = v;
    return std::move(*this);
  }
  LCI_CXX_ARG_SETTER(net_post_fetch_add_x, uint64_t, value)
  LCI_CXX_ARG_SETTER(net_post_fetch_add_x, net_atomic_scope_t, required_atomic_scope)

 private:
  detail::net_args a_;
};
// Adds `value` to the 8-byte-aligned uint64 at rmr.base + offset at `rank`
// and stores its previous value in *result: a request that the target's
// progress executes with an atomic fetch-add (atomic with the target's own
// atomic instructions too: net_atomic_scope_t::GLOBAL), and a reply.
// Thread-safe. An empty rmr, a misaligned or out-of-range word, a result
// nullptr or misaligned return errorcode_t::fatal with a warning.
// @param rank the target, in [0, get_rank_n()).
// @param result out: the previous value (8-byte aligned), written before
// the FETCH_ADD completion.
// @param result_mr result's registration, or MR_HOST.
// @param value what to add.
// @param offset the offset in bytes from rmr.base (8-byte aligned word).
// @param rmr the target's registration.
// @return posted: a FETCH_ADD {rank, length 8, user_context} (or ERROR)
// comes through net_poll_cq; retry: poll and call again; fatal: refused.
inline error_t net_post_fetch_add(int rank, uint64_t* result, mr_t result_mr, uint64_t value,
                                  uint64_t offset, rmr_t rmr) {
  return net_post_fetch_add_x(rank, result, result_mr, value, offset, rmr)();
}

class net_post_add_x {
 public:
  net_post_add_x(int rank, uint64_t value, uint64_t offset, rmr_t rmr)
      : a_(detail::net_kind::add, rank, nullptr, 0, mr_t(), offset, rmr) {
    a_.value = value;
  }
  LCI_CXX_NET_TO_RANK(net_post_add_x)
  LCI_CXX_NET_REMOTE(net_post_add_x)
  LCI_CXX_ARG_SETTER(net_post_add_x, uint64_t, value)
  LCI_CXX_ARG_SETTER(net_post_add_x, net_atomic_scope_t, required_atomic_scope)

 private:
  detail::net_args a_;
};
// net_post_fetch_add without the previous value. Thread-safe.
// @param rank the target, in [0, get_rank_n()).
// @param value what to add.
// @param offset the offset in bytes from rmr.base (8-byte aligned word).
// @param rmr the target's registration.
// @return posted: a FETCH_ADD completion (or ERROR) comes through
// net_poll_cq; retry: poll and call again; fatal: refused (as
// net_post_fetch_add).
inline error_t net_post_add(int rank, uint64_t value, uint64_t offset, rmr_t rmr) {
  return net_post_add_x(rank, value, offset, rmr)();
}
#undef LCI_CXX_NET_COMMON
#undef LCI_CXX_NET_TO_RANK
#undef LCI_CXX_NET_BUFFER
#undef LCI_CXX_NET_REMOTE

// ---- progress --------------------------------------------------------------------

namespace detail {
LCI_CXX_API error_t progress(device_t device, endpoint_t endpoint, runtime_t runtime);
// progress() of the global runtime's default device: what progress_x()()
// without arguments calls (no handles to pass, once per poll of a wait).
LCI_CXX_API error_t progress_default();
LCI_CXX_API error_t test_drained(device_t device, runtime_t runtime);
LCI_CXX_API void wait_drained(device_t device, runtime_t runtime);
}  // namespace detail

class progress_x {
 public:
  progress_x() {}
  LCI_CXX_SETTER(progress_x, device_t, device)
  LCI_CXX_SETTER(progress_x, endpoint_t, endpoint)
  LCI_CXX_RUNTIME_ARG(progress_x)
  error_t call() const {
    if (m_device.p_impl == nullptr && m_runtime.p_impl == nullptr) return detail::progress_default();
    return detail::progress(m_device, m_endpoint, m_runtime);
  }
  error_t operator()() const { return call(); }

 private:
  device_t m_device;
  endpoint_t m_endpoint;
  runtime_t m_runtime;
};
// Advances a device's communication (.device(); default: the runtime's
// default device): its network, arrivals, rendezvous steps, then its
// backlog and the graphs' retried nodes. Nothing completes without it: some
// thread must call it (or a call that progresses) while work is
// outstanding. .endpoint() is accepted and ignored. Thread-safe: any
// number of threads may progress one device. Concepts: Progress.
// @return done if it did some work; retry if there was none.
inline error_t progress() { return progress_x()(); }

class test_drained_x {
 public:
  test_drained_x() {}
  LCI_CXX_SETTER(test_drained_x, device_t, device)
  LCI_CXX_RUNTIME_ARG(test_drained_x)
  error_t call() const { return detail::test_drained(m_device, m_runtime); }
  error_t operator()() const { return call(); }

 private:
  device_t m_device;
  runtime_t m_runtime;
};
// Whether a device (.device(); default: the runtime's default device) has
// nothing left to send: its backlog and the core's are empty. Thread-safe.
// Concepts: Back-pressure and LCI_ERR_RETRY.
// @return done if drained; retry if not.
inline error_t test_drained() { return test_drained_x()(); }

class wait_drained_x {
 public:
  wait_drained_x() {}
  LCI_CXX_SETTER(wait_drained_x, device_t, device)
  LCI_CXX_RUNTIME_ARG(wait_drained_x)
  void call() const { detail::wait_drained(m_device, m_runtime); }
  void operator()() const { call(); }

 private:
  device_t m_device;
  runtime_t m_runtime;
};
// Progresses a device (.device(); default: the runtime's default device)
// until test_drained() is done. Thread-safe. Concepts: Progress.
inline void wait_drained() { wait_drained_x().call(); }

// ---- collectives -----------------------------------------------------------------

namespace detail {
struct coll_args {
  device_t device;
  endpoint_t endpoint;
  matching_engine_t matching_engine;
  comp_semantic_t comp_semantic = comp_semantic_t::memory;
  comp_t comp;
  runtime_t runtime;
};
LCI_CXX_API void barrier(const coll_args& a);
LCI_CXX_API void broadcast(void* buffer, size_t size, int root, const coll_args& a);
LCI_CXX_API void reduce(const void* sendbuf, void* recvbuf, size_t count, size_t item_size,
                        reduce_op_t op, int root, const coll_args& a);
LCI_CXX_API void allreduce(const void* sendbuf, void* recvbuf, size_t count, size_t item_size,
                           reduce_op_t op, const coll_args& a);
LCI_CXX_API void reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                                size_t item_size, reduce_op_t op, const coll_args& a);
LCI_CXX_API void allgather(const void* sendbuf, void* recvbuf, size_t size, const coll_args& a);
LCI_CXX_API void alltoall(const void* sendbuf, void* recvbuf, size_t size, const coll_args& a);
}  // namespace detail

#define LCI_CXX_COLL_SETTERS(cls)                                 \
  cls&& device(device_t v) {                                      \
    c_.device = v;                                                \
    return std::move(*this);                                      \
  }                                                               \
  cls&& endpoint(endpoint_t v) {                                  \
    c_.endpoint = v;                                              \
    return std::move(*this);                                      \
  }                                                               \
  cls&& matching_engine(matching_engine_t v) {                    \
    c_.matching_engine = v;                                       \
    return std::move(*this);                                      \
  }                                                               \
  cls&& runtime(runtime_t v) {                                    \
    c_.runtime = v;                                               \
    return std::move(*this);                                      \
  }

class barrier_x {
 public:
  barrier_x() {}
  LCI_CXX_COLL_SETTERS(barrier_x)
  barrier_x&& comp_semantic(comp_semantic_t v) {
    c_.comp_semantic = v;
    return std::move(*this);
  }
  barrier_x&& comp(comp_t v) {
    c_.comp = v;
    return std::move(*this);
  }
  void call() const { detail::barrier(c_); }
  void operator()() const { call(); }

 private:
  detail::coll_args c_;
};
// Waits until every rank called barrier (a dissemination barrier on the
// device, .device(); default: the runtime's default device). Collectives:
// every rank calls them, on each device in the same order; each runs to
// its end in the call, progressing the device, and then signals .comp(c),
// if given, once (a done status, user_context nullptr). .endpoint(),
// .matching_engine() and .comp_semantic() are accepted and not used. Not
// thread-safe on one device: one thread at a time runs the collectives of a
// device. Throws peer_failure_error or std::runtime_error when a message of
// the collective fails. Concepts: Progress.
inline void barrier() { barrier_x().call(); }

class broadcast_x {
 public:
  broadcast_x(void* buffer, size_t size, int root) : m_buffer(buffer), m_size(size), m_root(root) {}
  LCI_CXX_COLL_SETTERS(broadcast_x)
  LCI_CXX_SETTER(broadcast_x, void*, buffer)
  LCI_CXX_SETTER(broadcast_x, size_t, size)
  LCI_CXX_SETTER(broadcast_x, int, root)
  LCI_CXX_SETTER(broadcast_x, broadcast_algorithm_t, algorithm)
  LCI_CXX_SETTER(broadcast_x, int, ring_nsteps)
  broadcast_x&& comp(comp_t v) {
    c_.comp = v;
    return std::move(*this);
  }
  void call() const { detail::broadcast(m_buffer, m_size, m_root, c_); }
  void operator()() const { call(); }

 private:
  void* m_buffer;
  size_t m_size;
  int m_root;
  broadcast_algorithm_t m_algorithm = broadcast_algorithm_t::none;
  int m_ring_nsteps = 0;
  detail::coll_args c_;
};
// Broadcasts `size` bytes from `root` to every rank (binomial tree), as
// barrier runs (collective, blocking, .comp(c) signalled at the end).
// .algorithm() and .ring_nsteps() are accepted and not used.
// @param buffer in at root, out elsewhere: the data; the caller's.
// @param size its size in bytes, the same on every rank.
// @param root the rank that has the data, in [0, get_rank_n()) (else
// std::runtime_error).
inline void broadcast(void* buffer, size_t size, int root) { broadcast_x(buffer, size, root).call(); }

class reduce_x {
 public:
  reduce_x(const void* sendbuf, void* recvbuf, size_t count, size_t item_size, reduce_op_t op,
           int root)
      : m_sendbuf(sendbuf), m_recvbuf(recvbuf), m_count(count), m_item_size(item_size), m_op(op),
        m_root(root) {}
  LCI_CXX_COLL_SETTERS(reduce_x)
  void call() const {
    detail::reduce(m_sendbuf, m_recvbuf, m_count, m_item_size, m_op, m_root, c_);
  }
  void operator()() const { call(); }

 private:
  const void* m_sendbuf;
  void* m_recvbuf;
  size_t m_count, m_item_size;
  reduce_op_t m_op;
  int m_root;
  detail::coll_args c_;
};
// Reduces every rank's `count` items into root's recvbuf (binomial tree),
// as barrier runs (collective, blocking).
// @param sendbuf in: this rank's items.
// @param recvbuf out at root: the result (may be sendbuf); unused
// elsewhere.
// @param count items per rank.
// @param item_size bytes per item.
// @param op the operator (reduce_op_t; nullptr throws std::runtime_error).
// @param root the rank that gets the result, in [0, get_rank_n()).
inline void reduce(const void* sendbuf, void* recvbuf, size_t count, size_t item_size,
                   reduce_op_t op, int root) {
  reduce_x(sendbuf, recvbuf, count, item_size, op, root).call();
}

class allreduce_x {
 public:
  allreduce_x(const void* sendbuf, void* recvbuf, size_t count, size_t item_size, reduce_op_t op)
      : m_sendbuf(sendbuf), m_recvbuf(recvbuf), m_count(count), m_item_size(item_size), m_op(op) {}
  LCI_CXX_COLL_SETTERS(allreduce_x)
  LCI_CXX_SETTER(allreduce_x, allreduce_algorithm_t, algorithm)
  LCI_CXX_SETTER(allreduce_x, int, ring_nsteps)
  allreduce_x&& comp(comp_t v) {
    c_.comp = v;
    return std::move(*this);
  }
  void call() const { detail::allreduce(m_sendbuf, m_recvbuf, m_count, m_item_size, m_op, c_); }
  void operator()() const { call(); }

 private:
  const void* m_sendbuf;
  void* m_recvbuf;
  size_t m_count, m_item_size;
  reduce_op_t m_op;
  allreduce_algorithm_t m_algorithm = allreduce_algorithm_t::none;
  int m_ring_nsteps = 0;
  detail::coll_args c_;
};
// Reduces every rank's `count` items into every rank's recvbuf (a reduce
// to rank 0, then a broadcast), as barrier runs (collective, blocking,
// .comp(c) signalled at the end). .algorithm() and .ring_nsteps() are
// accepted and not used.
// @param sendbuf in: this rank's items.
// @param recvbuf out: the result (may be sendbuf).
// @param count items per rank.
// @param item_size bytes per item.
// @param op the operator (reduce_op_t; nullptr throws std::runtime_error).
inline void allreduce(const void* sendbuf, void* recvbuf, size_t count, size_t item_size,
                      reduce_op_t op) {
  allreduce_x(sendbuf, recvbuf, count, item_size, op).call();
}

class reduce_scatter_x {
 public:
  reduce_scatter_x(const void* sendbuf, void* recvbuf, size_t recvcount, size_t item_size,
                   reduce_op_t op)
      : m_sendbuf(sendbuf), m_recvbuf(recvbuf), m_recvcount(recvcount), m_item_size(item_size),
        m_op(op) {}
  LCI_CXX_COLL_SETTERS(reduce_scatter_x)
  LCI_CXX_SETTER(reduce_scatter_x, reduce_scatter_algorithm_t, algorithm)
  LCI_CXX_SETTER(reduce_scatter_x, int, ring_nsteps)
  reduce_scatter_x&& comp(comp_t v) {
    c_.comp = v;
    return std::move(*this);
  }
  void call() const {
    detail::reduce_scatter(m_sendbuf, m_recvbuf, m_recvcount, m_item_size, m_op, c_);
  }
  void operator()() const { call(); }

 private:
  const void* m_sendbuf;
  void* m_recvbuf;
  size_t m_recvcount, m_item_size;
  reduce_op_t m_op;
  reduce_scatter_algorithm_t m_algorithm = reduce_scatter_algorithm_t::none;
  int m_ring_nsteps = 0;
  detail::coll_args c_;
};
// Reduces block j (recvcount items) of every rank's sendbuf into rank j's
// recvbuf (every pair exchanges its block), as barrier runs (collective,
// blocking, .comp(c) signalled at the end). .algorithm() and
// .ring_nsteps() are accepted and not used.
// @param sendbuf in: get_rank_n() blocks of recvcount items.
// @param recvbuf out: this rank's reduced block.
// @param recvcount items per block.
// @param item_size bytes per item.
// @param op the operator (reduce_op_t; nullptr throws std::runtime_error).
inline void reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, size_t item_size,
                           reduce_op_t op) {
  reduce_scatter_x(sendbuf, recvbuf, recvcount, item_size, op).call();
}

class allgather_x {
 public:
  allgather_x(const void* sendbuf, void* recvbuf, size_t size)
      : m_sendbuf(sendbuf), m_recvbuf(recvbuf), m_size(size) {}
  LCI_CXX_COLL_SETTERS(allgather_x)
  void call() const { detail::allgather(m_sendbuf, m_recvbuf, m_size, c_); }
  void operator()() const { call(); }

 private:
  const void* m_sendbuf;
  void* m_recvbuf;
  size_t m_size;
  detail::coll_args c_;
};
// Gathers every rank's `size` bytes into every rank's recvbuf, rank i's at
// recvbuf + i * size, as barrier runs (collective, blocking).
// @param sendbuf in: this rank's bytes.
// @param recvbuf out: get_rank_n() * size bytes.
// @param size bytes per rank.
inline void allgather(const void* sendbuf, void* recvbuf, size_t size) {
  allgather_x(sendbuf, recvbuf, size).call();
}

class alltoall_x {
 public:
  alltoall_x(const void* sendbuf, void* recvbuf, size_t size)
      : m_sendbuf(sendbuf), m_recvbuf(recvbuf), m_size(size) {}
  LCI_CXX_COLL_SETTERS(alltoall_x)
  void call() const { detail::alltoall(m_sendbuf, m_recvbuf, m_size, c_); }
  void operator()() const { call(); }

 private:
  const void* m_sendbuf;
  void* m_recvbuf;
  size_t m_size;
  detail::coll_args c_;
};
// Sends block j of sendbuf to rank j, which puts it at recvbuf + i * size
// for the sender i, as barrier runs (collective, blocking).
// @param sendbuf in: get_rank_n() blocks of `size` bytes.
// @param recvbuf out: get_rank_n() blocks of `size` bytes.
// @param size bytes per block.
inline void alltoall(const void* sendbuf, void* recvbuf, size_t size) {
  alltoall_x(sendbuf, recvbuf, size).call();
}
#undef LCI_CXX_COLL_SETTERS

#undef LCI_CXX_SIMPLE_OP0
#undef LCI_CXX_SIMPLE_OP1
#undef LCI_CXX_SIMPLE_OP2
#undef LCI_CXX_RUNTIME_ARG
#undef LCI_CXX_ARG_SETTER
#undef LCI_CXX_SETTER

// ---- helpers for completion graphs -------------------------------------------------

// A node that runs an operation object (post_send_x(...) and the like):
// graph_add_node_op copies `op`, and the node posts it when its
// predecessors completed; the operation's completion (its user_context is
// set to the node) then completes the node.
namespace detail {
inline status_t graph_status_of(status_t s) { return s; }
inline status_t graph_status_of(errorcode_t e) { return status_t(e); }
inline status_t graph_status_of(error_t e) { return status_t(e.errorcode); }
template <typename R>
status_t graph_status_of(const R&) {
  return status_t(errorcode_t::done);
}
template <typename T>
status_t graph_run_op(T& op, std::true_type /* returns void */) {
  op();
  return status_t(errorcode_t::done);
}
template <typename T>
status_t graph_run_op(T& op, std::false_type) {
  return graph_status_of(op());
}
}  // namespace detail

// A node function (graph_node_run_cb_t) that runs the operation object
// *value of type T. Thread-safe as the operation is.
// @tparam T the operation object's type.
// @param value a T*.
// @return the operation's status (a void or non-status result counts as
// done).
template <typename T>
status_t graph_execute_op_fn(void* value) {
  T& op = *static_cast<T*>(value);
  return detail::graph_run_op(op, std::is_void<decltype(op())>());
}

// A node free callback (graph_node_free_cb_t) that deletes the T at value.
// @tparam T the operation object's type.
// @param value a T* of new.
template <typename T>
void graph_free_op_fn(void* value) {
  delete static_cast<T*>(value);
}

// Adds a node that posts an operation object (post_send_x(...) and the
// like) when its predecessors completed: the graph keeps a copy of `op`
// (freed with the graph) whose user_context is set to the node, so that a
// posted operation completes the node when the graph (its completion
// object) is signalled. Not thread-safe, as graph_add_node.
// @tparam T the operation object's type.
// @param graph the graph.
// @param op the operation, copied; its local_comp should be the graph.
// @return the node.
template <typename T>
graph_node_t graph_add_node_op(comp_t graph, const T& op) {
  T* copy = new T(op);
  graph_node_t node = graph_add_node_x(graph, graph_execute_op_fn<T>)
                          .value(copy)
                          .free_cb(graph_free_op_fn<T>)();
  copy->user_context(node);
  return node;
}

}  // namespace lci

#endif  // LCI_API_LCI_HPP
