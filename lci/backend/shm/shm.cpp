// The native intra-node transport (see shm.hpp).
#include "lci/backend/shm/shm.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "lci/util/log.hpp"

namespace lci::shm {

namespace {

constexpr uint64_t local_ring_cells = 4096;
constexpr size_t local_cell_size = 64;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One cross-memory copy of len bytes between this process and `pid`
// (write: local -> remote); 0 or the errno value.
int cma_copy(int pid, void* local, uint64_t remote, size_t len, bool write) {
  size_t done = 0;
  while (done < len) {
    iovec l{static_cast<char*>(local) + done, len - done};
    iovec r{reinterpret_cast<void*>(remote + done), len - done};
    const ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Lets local peers read and write this process's memory by cross-memory
// attach where Yama restricts it to ancestors (ptrace_scope 1): ranks of a
// job are siblings, not ancestors.
void allow_peer_attach() {
  std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (f >> scope && scope == 1) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
}

}  // namespace


size_t cell_size_for(size_t max_payload) { return round_up(sizeof(cell) + max_payload, 64); }

size_t segment_bytes(const options& o) {
  return round_up(cells_offset + o.ring_cells * cell_size_for(o.max_payload), 4096);
}

std::string host_key() {
  std::string boot_id;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  f >> boot_id;
  if (boot_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    boot_id = host;
  }
  struct stat net {}, pid {};
  stat("/proc/self/ns/net", &net);
  stat("/proc/self/ns/pid", &pid);
  char tail[96];
  snprintf(tail, sizeof tail, "/%llx/%llx/%u", static_cast<unsigned long long>(net.st_ino),
           static_cast<unsigned long long>(pid.st_ino), static_cast<unsigned>(getuid()));
  std::string key = boot_id + tail;
  for (char& ch : key)
    if (ch == ' ' || ch == ',' || ch < 33 || ch > 126) ch = '_';
  return key;
}

shm_device::shm_device(int rank, int nranks, int group_index, const options& o)
    : opt_(o), rank_(rank), group_index_(group_index) {
  own_bytes_ = segment_bytes(o);
  fd_ = static_cast<int>(syscall(SYS_memfd_create, "lci-shm", MFD_CLOEXEC));
  if (fd_ < 0) fatal("shared-memory transport: memfd_create failed: %s", strerror(errno));
  if (ftruncate(fd_, static_cast<off_t>(own_bytes_)) != 0)
    fatal("shared-memory transport: cannot size a segment of %zu bytes: %s", own_bytes_,
          strerror(errno));
  void* base = mmap(nullptr, own_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (base == MAP_FAILED)
    fatal("shared-memory transport: cannot map a segment of %zu bytes: %s", own_bytes_,
          strerror(errno));
  own_ = new (base) segment_header{};
  own_->magic = segment_magic;
  own_->version = segment_version;
  own_->rank = rank;
  own_->pid = static_cast<int32_t>(getpid());
  own_->ncells = static_cast<uint32_t>(o.ring_cells);
  own_->cell_size = cell_size_for(o.max_payload);
  own_->bytes = own_bytes_;
  own_->probe = segment_magic;
  own_ring_ = ring(&own_->tail, static_cast<char*>(base) + cells_offset, own_->cell_size,
                   o.ring_cells);
  own_ring_.format();

  local_bytes_ = 64 + local_ring_cells * local_cell_size;
  local_memory_ = mmap(nullptr, local_bytes_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (local_memory_ == MAP_FAILED) fatal("shared-memory transport: out of memory");
  static_assert(sizeof(local_cell) <= local_cell_size, "local completion cell");
  local_ = ring(new (local_memory_) std::atomic<uint64_t>(0),
                static_cast<char*>(local_memory_) + 64, local_cell_size, local_ring_cells);
  local_.format();
  peers_.resize(static_cast<size_t>(nranks));
  if (o.cma) allow_peer_attach();
}

std::string shm_device::address() const {
  char buf[128];
  snprintf(buf, sizeof buf, "%d,%d,%" PRIxPTR, static_cast<int>(getpid()), fd_,
           reinterpret_cast<uintptr_t>(&own_->probe));
  return buf;
}

void shm_device::attach(const std::vector<std::string>& addresses,
                        const std::vector<bool>& local) {
  for (size_t r = 0; r < peers_.size(); ++r) {
    if (!local[r]) continue;
    peer& p = peers_[r];
    if (static_cast<int>(r) == rank_) {
      p.inbound = own_ring_;
      p.head = own_;
      p.pid = 0;  // this process: plain copies
      p.cma = true;
      continue;
    }
    int pid = 0, fd = -1;
    uintptr_t probe = 0;
    if (sscanf(addresses[r].c_str(), "%d,%d,%" SCNxPTR, &pid, &fd, &probe) != 3)
      fatal("shared-memory transport: rank %zu published a malformed address \"%s\"", r,
            addresses[r].c_str());
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    const int pfd = open(path, O_RDWR | O_CLOEXEC);
    if (pfd < 0)
      fatal("shared-memory transport: cannot open the segment of rank %zu (%s: %s); run with "
            "LCI_SHM=0 to send through the network backend instead",
            r, path, strerror(errno));
    struct stat st {};
    fstat(pfd, &st);
    const size_t bytes = static_cast<size_t>(st.st_size);
    void* base = bytes >= cells_offset
                     ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0)
                     : MAP_FAILED;
    close(pfd);
    if (base == MAP_FAILED)
      fatal("shared-memory transport: cannot map the segment of rank %zu (%zu bytes)", r, bytes);
    auto* h = static_cast<segment_header*>(base);
    const uint64_t cells = h->ncells;
    if (h->magic != segment_magic || h->version != segment_version ||
        h->rank != static_cast<int32_t>(r) || h->pid != pid || h->bytes != bytes ||
        h->cell_size != cell_size_for(opt_.max_payload) || cells == 0 ||
        (cells & (cells - 1)) != 0 || cells_offset + cells * h->cell_size > bytes)
      fatal("shared-memory transport: the segment of rank %zu is not what it published (do the "
            "ranks run the same LCI with the same LCI_PACKET_SIZE?)",
            r);
    p.head = h;
    p.bytes = bytes;
    p.pid = pid;
    p.inbound = ring(&h->tail, static_cast<char*>(base) + cells_offset, h->cell_size, cells);
    p.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    // Cross-memory attach: read the peer's probe word.
    uint64_t word = 0;
    const int err = opt_.cma ? cma_copy(pid, &word, probe, sizeof word, false) : 0;
    p.cma = opt_.cma && err == 0 && word == segment_magic;
    if (!p.cma) any_pipelined_ = true;
    if (opt_.cma && !p.cma)
      LCI_LOG(info,
              "device %d: cross-memory attach to rank %zu refused (%s): bulk data is pipelined "
              "through shared memory",
              group_index_, r, err ? strerror(err) : "unexpected data");
  }
}

void shm_device::peers_attached() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

shm_device::~shm_device() {
  own_->closed.store(1, std::memory_order_release);
  for (size_t r = 0; r < peers_.size(); ++r) {
    peer& p = peers_[r];
    if (p.pidfd >= 0) close(p.pidfd);
    if (p.head && p.head != own_) munmap(p.head, p.bytes);
  }
  if (fd_ >= 0) close(fd_);
  munmap(own_, own_bytes_);
  munmap(local_memory_, local_bytes_);
}

// ---- registrations ----------------------------------------------------------------

void shm_device::record_registration(void* addr, size_t len, net::mr_access access,
                                     uint64_t key) {
  if (access != net::mr_access::remote) return;
  std::lock_guard<std::mutex> g(regs_lock_);
  regs_[key] = {reinterpret_cast<uint64_t>(addr), len};
}

void shm_device::forget_registration(uint64_t key) {
  std::lock_guard<std::mutex> g(regs_lock_);
  regs_.erase(key);
}

bool shm_device::registered(uint64_t address, uint64_t length, uint64_t key) {
  std::lock_guard<std::mutex> g(regs_lock_);
  auto it = regs_.find(key);
  if (it == regs_.end()) return false;
  const uint64_t base = it->second.first, end = base + it->second.second;
  return address >= base && address <= end && length <= end - address;
}

// ---- bulk data ----------------------------------------------------------------------

status shm_device::write(int rank, const void* buf, size_t len, uint64_t raddr, uint64_t rkey,
                         void* ctx, bool with_imm, uint32_t imm) {
  peer& p = peers_[rank];
  ring::slot done = local_.reserve();
  if (__builtin_expect(done.cell == nullptr, 0)) return status::retry;
  ring::slot s{nullptr, 0};
  if (with_imm || !p.cma) {
    s = p.inbound.reserve();
    if (__builtin_expect(s.cell == nullptr, 0)) {
      abandon_local(done);
      return status::retry;
    }
  }
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  if (p.cma) {
    int err = 0;
    if (p.pid != 0)
      err = cma_copy(p.pid, const_cast<void*>(buf), raddr, len, true);
    else if (len)
      memcpy(reinterpret_cast<void*>(raddr), buf, len);
    if (with_imm) {
      c->kind = err ? cell_kind::nop : cell_kind::write_notice;
      c->flags = 0;
      c->src = rank_;
      c->imm = imm;
      c->length = 0;
      ring::publish(s);
    }
    complete_local(done, err ? completion_kind::failed : completion_kind::rma_done, ctx, err);
    return status::ok;
  }
  c->kind = cell_kind::write_data;
  c->flags = with_imm ? flag_has_imm : 0;
  c->src = rank_;
  c->imm = imm;
  c->length = static_cast<uint32_t>(len);
  c->address = raddr;
  c->key = rkey;
  if (len) memcpy(c->data(), buf, len);
  ring::publish(s);
  complete_local(done, completion_kind::rma_done, ctx, 0);
  return status::ok;
}

status shm_device::post_read(int rank, void* buf, size_t len, void*, uint64_t raddr,
                             uint64_t rkey, void* ctx) {
  net::annotate_post(this);
  peer& p = peers_[rank];
  if (p.cma) {
    ring::slot done = local_.reserve();
    if (__builtin_expect(done.cell == nullptr, 0)) return status::retry;
    int err = 0;
    if (p.pid != 0)
      err = cma_copy(p.pid, buf, raddr, len, false);
    else if (len)
      memcpy(buf, reinterpret_cast<const void*>(raddr), len);
    complete_local(done, err ? completion_kind::failed : completion_kind::rma_done, ctx, err);
    return status::ok;
  }
  ring::slot s = p.inbound.reserve();
  if (__builtin_expect(s.cell == nullptr, 0)) return status::retry;
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  c->kind = cell_kind::read_request;
  c->flags = 0;
  c->src = rank_;
  c->imm = 0;
  c->length = 0;
  c->address = raddr;
  c->key = rkey;
  c->reply_address = reinterpret_cast<uint64_t>(buf);
  c->reply_ctx = reinterpret_cast<uint64_t>(ctx);
  // The requested length travels in `imm` (a request carries no payload).
  c->imm = static_cast<uint32_t>(len);
  ring::publish(s);
  return status::ok;
}

// ---- the less frequent cells ----------------------------------------------------------

int shm_device::take_other(cell* c, completion* out) {
  const int src = c->src;
  const bool peer_ok = src >= 0 && static_cast<size_t>(src) < peers_.size() &&
                       peers_[static_cast<size_t>(src)].head != nullptr;
  switch (c->kind) {
    case cell_kind::nop:
      return 0;
    case cell_kind::write_notice:
      out->kind = completion_kind::remote_write;
      out->src_rank = peer_ok ? src : net::unknown_source;
      out->imm = c->imm;
      out->length = 0;
      out->ctx = nullptr;
      return 1;
    case cell_kind::write_data: {
      const uint64_t len = c->length;
      if (!peer_ok || len > opt_.max_payload || !registered(c->address, len, c->key)) {
        LCI_WARN("shared-memory transport: dropped a write of %" PRIu64
                 " bytes from rank %d outside every registration for remote access",
                 len, src);
        return 0;
      }
      if (len) memcpy(reinterpret_cast<void*>(c->address), c->data(), len);
      if (!(c->flags & flag_has_imm)) return 0;
      out->kind = completion_kind::remote_write;
      out->src_rank = src;
      out->imm = c->imm;
      out->length = 0;
      out->ctx = nullptr;
      return 1;
    }
    case cell_kind::read_request: {
      if (!peer_ok) return 0;
      pending_reply r;
      r.rank = src;
      r.address = c->address;
      r.length = c->imm;
      r.reply_address = c->reply_address;
      r.reply_ctx = c->reply_ctx;
      r.ok = r.length <= opt_.max_payload && registered(r.address, r.length, c->key);
      if (!r.ok)
        LCI_WARN("shared-memory transport: refused a read of %" PRIu64
                 " bytes from rank %d outside every registration for remote access",
                 r.length, src);
      if (!replies_.empty() || !reply(r)) replies_.push_back(r);
      return 0;
    }
    case cell_kind::read_reply:
      out->ctx = reinterpret_cast<void*>(c->reply_ctx);
      if (c->flags & flag_error || c->length > opt_.max_payload) {
        out->kind = completion_kind::failed;
        out->error = EFAULT;
        return 1;
      }
      if (c->length) memcpy(reinterpret_cast<void*>(c->reply_address), c->data(), c->length);
      out->kind = completion_kind::rma_done;
      return 1;
    case cell_kind::message:
      break;
  }
  return 0;
}

bool shm_device::reply(const pending_reply& r) {
  peer& p = peers_[static_cast<size_t>(r.rank)];
  ring::slot s = p.inbound.reserve();
  if (!s.cell) return false;
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  c->kind = cell_kind::read_reply;
  c->flags = r.ok ? 0 : flag_error;
  c->src = rank_;
  c->imm = 0;
  c->length = r.ok ? static_cast<uint32_t>(r.length) : 0;
  c->reply_address = r.reply_address;
  c->reply_ctx = r.reply_ctx;
  if (r.ok && r.length) memcpy(c->data(), reinterpret_cast<const void*>(r.address), r.length);
  ring::publish(s);
  return true;
}

void shm_device::send_pending_replies() {
  while (!replies_.empty() && reply(replies_.front())) replies_.pop_front();
}

// ---- peers that die -------------------------------------------------------------------

void shm_device::check_peers() {
  idle_polls_ = 0;
  const int64_t now = now_ns();
  if (now - last_check_ns_ < 100000000) return;
  last_check_ns_ = now;
  for (size_t r = 0; r < peers_.size(); ++r) {
    const peer& p = peers_[r];
    if (!p.head || p.pid == 0 || p.head->closed.load(std::memory_order_acquire)) continue;
    bool exited;
    if (p.pidfd >= 0) {
      pollfd pf{p.pidfd, POLLIN, 0};
      exited = ::poll(&pf, 1, 0) > 0;
    } else {
      exited = kill(p.pid, 0) != 0 && errno == ESRCH;
    }
    if (exited && !p.head->closed.load(std::memory_order_acquire))
      fatal("rank %zu (pid %d) on this host exited while device %d was in use; ending the job",
            r, p.pid, group_index_);
  }
}

}  // namespace lci::shm
