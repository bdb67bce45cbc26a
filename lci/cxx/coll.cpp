// The LCI 2 interface: collectives (barrier, broadcast, reduce, allreduce,
// reduce_scatter, allgather, alltoall) over a device's point-to-point
// messages.
//
// Messages: tagged sends and receives on the device's own collective
// endpoint (device_impl_t::coll_endpoint, rank-and-tag matching), so that
// the program's post_send/post_recv, on its endpoints, never match them.
// The tag holds the collective's number on the device (coll_seq, the same
// on every rank since all ranks start the collectives of a device in one
// order) in its upper 10 bits and the step within the collective in its
// lower 6, so that consecutive collectives do not mix; each pair of ranks
// exchanges at most one message per direction and step. Sizes are free:
// beyond get_max_bcopy_size() a message goes by rendezvous.
//
// Algorithms: dissemination barrier; binomial-tree broadcast and reduce;
// allreduce as reduce to rank 0 then broadcast; reduce_scatter, allgather
// and alltoall direct (every pair exchanges its block). A reduction
// operator is taken to be associative and commutative, and is called as
// op(received, accumulated, accumulated, count) (the right operand may
// alias the destination).
//
// Completion: every collective runs to its end in the call, progressing
// the device while it waits. With a completion object (`.comp(c)`), it is
// still complete when the call returns, and `c` is then signalled once (a
// status done with user_context nullptr): programs that wait on `c` see the
// same as with a collective that runs in the background.
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "lci.hpp"
#include "lci/cxx/impl.hpp"

namespace lci {

namespace {

constexpr unsigned step_bits = 6;
constexpr uint32_t seq_mask = (1u << (16 - step_bits)) - 1;

// One collective on one device: its posted operations count into an
// internal counter, which wait() progresses the device until it reaches
// what was posted.
class coll_op {
 public:
  explicit coll_op(const detail::coll_args& a)
      : d_(device_of(a.device, runtime_of(a.runtime))),
        device_(static_cast<void*>(d_)),
        endpoint_(static_cast<void*>(d_->coll_endpoint)),
        seq_(d_->coll_seq.fetch_add(1, std::memory_order_relaxed)),
        counter_(detail::alloc_counter("lci-collective", nullptr)),
        me_(get_rank_me()),
        n_(get_rank_n()) {}

  // A collective left by an exception may still have operations that will
  // signal the counter: it is then kept.
  ~coll_op() {
    if (detail::counter_get(counter_) >= posted_) detail::free_comp(&counter_);
  }
  coll_op(const coll_op&) = delete;
  coll_op& operator=(const coll_op&) = delete;

  int rank() const { return me_; }
  int nranks() const { return n_; }

  void send(int rank, const void* buffer, size_t size, unsigned step) {
    post([&] {
      return post_send_x(rank, const_cast<void*>(buffer), size, tag(step), counter_)
          .device(device_)
          .endpoint(endpoint_)();
    });
  }

  void recv(int rank, void* buffer, size_t size, unsigned step) {
    post([&] {
      return post_recv_x(rank, buffer, size, tag(step), counter_)
          .device(device_)
          .endpoint(endpoint_)();
    });
  }

  // Progresses the device until everything posted so far completed.
  void wait() {
    while (detail::counter_get(counter_) < posted_) progress_device(d_);
  }

  // The end: signals the program's completion object, if any.
  static void finish(const detail::coll_args& a) {
    if (!a.comp.is_empty()) detail::comp_signal(a.comp, status_t(static_cast<void*>(nullptr)));
  }

 private:
  tag_t tag(unsigned step) const {
    return static_cast<tag_t>(((seq_ & seq_mask) << step_bits) | (step & ((1u << step_bits) - 1)));
  }

  // Posts until the device takes the operation; counts it if it is posted.
  template <typename F>
  void post(F attempt) {
    for (;;) {
      const status_t s = attempt();
      if (s.is_posted()) {
        ++posted_;
        return;
      }
      if (s.is_done()) return;
      if (s.error.errorcode == errorcode_t::fatal)
        throw std::runtime_error("lci collective: a message of the collective failed");
      progress_device(d_);
    }
  }

  device_impl_t* d_;
  device_t device_;
  endpoint_t endpoint_;
  uint32_t seq_;
  comp_t counter_;
  int64_t posted_ = 0;
  int me_, n_;
};

// The rank `v` places after `root` (relative ranks of the trees).
int absolute(int v, int root, int n) { return (v + root) % n; }

// Binomial-tree broadcast of buffer from root.
void broadcast_tree(coll_op& op, void* buffer, size_t size, int root, unsigned step) {
  const int n = op.nranks();
  const int v = (op.rank() - root + n) % n;
  int mask = 1;
  while (mask < n) {
    if (v & mask) {
      op.recv(absolute(v - mask, root, n), buffer, size, step);
      op.wait();
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (v + mask < n) op.send(absolute(v + mask, root, n), buffer, size, step);
  op.wait();
}

// Binomial-tree reduction into `acc` (count items, holding this rank's
// contribution on entry); on return the root's acc holds the result.
void reduce_tree(coll_op& op, void* acc, size_t count, size_t item_size, reduce_op_t fn,
                 int root, unsigned step) {
  const int n = op.nranks();
  const int v = (op.rank() - root + n) % n;
  const size_t bytes = count * item_size;
  std::unique_ptr<char[]> tmp;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (v & mask) {
      op.send(absolute(v - mask, root, n), acc, bytes, step);
      op.wait();
      return;
    }
    if (v + mask < n) {
      if (!tmp) tmp.reset(new char[bytes ? bytes : 1]);
      op.recv(absolute(v + mask, root, n), tmp.get(), bytes, step);
      op.wait();
      if (count) fn(tmp.get(), acc, acc, count);
    }
  }
}

void copy_block(void* dst, const void* src, size_t size) {
  if (size && dst != src) std::memmove(dst, src, size);
}

void check_root(int root, int n, const char* call) {
  if (root < 0 || root >= n)
    throw std::runtime_error(std::string("lci::") + call + ": root " + std::to_string(root) +
                             " is not in [0, " + std::to_string(n) + ")");
}

void check_op(reduce_op_t op, const char* call) {
  if (!op) throw std::runtime_error(std::string("lci::") + call + ": the reduction op is nullptr");
}

}  // namespace

namespace detail {

void barrier(const coll_args& a) {
  coll_op op(a);
  const int n = op.nranks(), me = op.rank();
  char none = 0;
  unsigned step = 0;
  for (int k = 1; k < n; k <<= 1, ++step) {
    op.send((me + k) % n, &none, 0, step);
    op.recv((me - k + n) % n, &none, 0, step);
    op.wait();
  }
  coll_op::finish(a);
}

void broadcast(void* buffer, size_t size, int root, const coll_args& a) {
  coll_op op(a);
  check_root(root, op.nranks(), "broadcast");
  broadcast_tree(op, buffer, size, root, 0);
  coll_op::finish(a);
}

void reduce(const void* sendbuf, void* recvbuf, size_t count, size_t item_size, reduce_op_t fn,
            int root, const coll_args& a) {
  coll_op op(a);
  check_root(root, op.nranks(), "reduce");
  check_op(fn, "reduce");
  const size_t bytes = count * item_size;
  // Only the root's recvbuf receives the result; the others reduce in a
  // buffer of their own.
  std::unique_ptr<char[]> own;
  void* acc = recvbuf;
  if (op.rank() != root) {
    own.reset(new char[bytes ? bytes : 1]);
    acc = own.get();
  }
  copy_block(acc, sendbuf, bytes);
  reduce_tree(op, acc, count, item_size, fn, root, 0);
  coll_op::finish(a);
}

void allreduce(const void* sendbuf, void* recvbuf, size_t count, size_t item_size,
               reduce_op_t fn, const coll_args& a) {
  coll_op op(a);
  check_op(fn, "allreduce");
  const size_t bytes = count * item_size;
  copy_block(recvbuf, sendbuf, bytes);
  reduce_tree(op, recvbuf, count, item_size, fn, 0, 0);
  broadcast_tree(op, recvbuf, bytes, 0, 1);
  coll_op::finish(a);
}

void reduce_scatter(const void* sendbuf, void* recvbuf, size_t recvcount, size_t item_size,
                    reduce_op_t fn, const coll_args& a) {
  coll_op op(a);
  check_op(fn, "reduce_scatter");
  const int n = op.nranks(), me = op.rank();
  const size_t block = recvcount * item_size;
  const char* send = static_cast<const char*>(sendbuf);
  // Block j of every rank goes to rank j, which reduces them.
  std::unique_ptr<char[]> blocks(new char[block * static_cast<size_t>(n - 1) + 1]);
  for (int j = 1; j < n; ++j) {
    const int from = (me - j + n) % n;
    op.recv(from, blocks.get() + block * static_cast<size_t>(j - 1), block, 0);
  }
  for (int j = 1; j < n; ++j) {
    const int to = (me + j) % n;
    op.send(to, send + block * static_cast<size_t>(to), block, 0);
  }
  op.wait();
  copy_block(recvbuf, send + block * static_cast<size_t>(me), block);
  if (recvcount)
    for (int j = 1; j < n; ++j)
      fn(blocks.get() + block * static_cast<size_t>(j - 1), recvbuf, recvbuf, recvcount);
  coll_op::finish(a);
}

void allgather(const void* sendbuf, void* recvbuf, size_t size, const coll_args& a) {
  coll_op op(a);
  const int n = op.nranks(), me = op.rank();
  char* recv = static_cast<char*>(recvbuf);
  for (int j = 1; j < n; ++j) {
    const int from = (me - j + n) % n;
    op.recv(from, recv + size * static_cast<size_t>(from), size, 0);
  }
  for (int j = 1; j < n; ++j) op.send((me + j) % n, sendbuf, size, 0);
  copy_block(recv + size * static_cast<size_t>(me), sendbuf, size);
  op.wait();
  coll_op::finish(a);
}

void alltoall(const void* sendbuf, void* recvbuf, size_t size, const coll_args& a) {
  coll_op op(a);
  const int n = op.nranks(), me = op.rank();
  const char* send = static_cast<const char*>(sendbuf);
  char* recv = static_cast<char*>(recvbuf);
  for (int j = 1; j < n; ++j) {
    const int from = (me - j + n) % n;
    op.recv(from, recv + size * static_cast<size_t>(from), size, 0);
  }
  for (int j = 1; j < n; ++j) {
    const int to = (me + j) % n;
    op.send(to, send + size * static_cast<size_t>(to), size, 0);
  }
  copy_block(recv + size * static_cast<size_t>(me), send + size * static_cast<size_t>(me), size);
  op.wait();
  coll_op::finish(a);
}

}  // namespace detail

}  // namespace lci
