// The native intra-node transport (see native.hpp).
#include "lci/backend/native/native.hpp"

#include <fcntl.h>
#include <linux/futex.h>
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
#include <iterator>
#include <mutex>

#include "lci/util/clock.hpp"
#include "lci/util/fd_limit.hpp"
#include "lci/util/futex.hpp"
#include "lci/util/log.hpp"
#include "lci/util/process_exited.hpp"
#include "lci/util/random.hpp"

namespace lci::native {

namespace {

constexpr uint64_t local_ring_cells = 4096;
constexpr size_t local_cell_size = 64;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

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

// Yama's ptrace_scope (0 where Yama is absent).
int yama_scope() {
  std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  return f >> scope ? scope : 0;
}

// PR_SET_PTRACER is one value per process: the native devices that need it
// count themselves here, and the last to close clears it.
std::mutex g_ptracer_lock;
int g_ptracer_users = 0;
int g_ptracer_pid = 0;

// Names `pid` (and so its descendants) as allowed to attach to this process;
// false if another device of this process named a different one.
bool name_ptracer(int pid) {
  std::lock_guard<std::mutex> g(g_ptracer_lock);
  if (g_ptracer_users > 0 && g_ptracer_pid != pid) return false;
  if (g_ptracer_users == 0 && prctl(PR_SET_PTRACER, static_cast<unsigned long>(pid), 0, 0, 0) != 0)
    return false;
  g_ptracer_pid = pid;
  ++g_ptracer_users;
  return true;
}

void unname_ptracer() {
  std::lock_guard<std::mutex> g(g_ptracer_lock);
  if (--g_ptracer_users == 0) {
    prctl(PR_SET_PTRACER, 0, 0, 0, 0);
    g_ptracer_pid = 0;
  }
}

// The parent of `pid` from /proc/<pid>/stat (0 if unknown). The command
// name (field 2) may hold spaces and parentheses: parse after the last ')'.
int parent_of(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  char state = 0;
  int ppid = 0;
  if (sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return 0;
  return ppid;
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

int common_ancestor(const std::vector<int>& pids) {
  if (pids.empty()) return 0;
  // The ancestors of the first, nearest first (bounded: a parent chain
  // longer than this is not a job's).
  std::vector<int> chain;
  for (int p = parent_of(pids[0]); p > 1 && chain.size() < 256; p = parent_of(p))
    chain.push_back(p);
  size_t nearest = 0;  // index into chain of the nearest ancestor common to all so far
  for (size_t i = 1; i < pids.size(); ++i) {
    size_t found = chain.size();
    for (int p = parent_of(pids[i]), steps = 0; p > 1 && steps < 256; p = parent_of(p), ++steps) {
      for (size_t k = nearest; k < chain.size(); ++k)
        if (chain[k] == p) {
          found = k;
          break;
        }
      if (found != chain.size()) break;
    }
    if (found == chain.size()) return 0;
    nearest = found;
  }
  return nearest < chain.size() ? chain[nearest] : 0;
}

// ---- the operation table ---------------------------------------------------------

uint64_t op_table::take(const entry& e) {
  for (uint32_t w = 0; w < slots / 64; ++w) {
    uint64_t bits = used_[w].load(std::memory_order_relaxed);
    while (bits != ~uint64_t{0}) {
      const int b = __builtin_ctzll(~bits);
      if (used_[w].compare_exchange_weak(bits, bits | (uint64_t{1} << b),
                                         std::memory_order_acquire, std::memory_order_relaxed)) {
        const uint32_t index = w * 64 + static_cast<uint32_t>(b);
        slot& s = s_[index];
        const uint64_t gen = s.state.load(std::memory_order_relaxed) >> 32;
        s.state.store(gen << 32 | st_filling, std::memory_order_relaxed);
        s.e = e;
        s.state.store(gen << 32 | st_flight, std::memory_order_release);
        return gen << 32 | index;
      }
    }
  }
  return 0;
}

bool op_table::finish(uint64_t id, int rank, op_kind k, entry& out) {
  const uint64_t index = id & 0xffffffffu;
  if (index >= slots) return false;
  slot& s = s_[index];
  const uint64_t gen = id >> 32;
  // One finisher wins (a forged reply may race the legitimate one). A
  // state of this generation being finished may be a call that refuses and
  // puts the slot back: wait (a few instructions) to see which.
  backoff wait;
  for (;;) {
    uint64_t cur = gen << 32 | st_flight;
    if (s.state.compare_exchange_weak(cur, gen << 32 | st_finishing, std::memory_order_acquire,
                                      std::memory_order_relaxed))
      break;
    if (cur != (gen << 32 | st_flight) && cur != (gen << 32 | st_finishing)) return false;
    wait.pause();
  }
  if (s.e.kind != k || s.e.rank != rank) {
    s.state.store(gen << 32 | st_flight, std::memory_order_release);
    return false;
  }
  out = s.e;
  const uint64_t next = static_cast<uint32_t>(gen + 1) ? static_cast<uint32_t>(gen + 1) : 1;
  s.state.store(next << 32 | st_free, std::memory_order_relaxed);  // never 0: id 0 means "none"
  used_[index / 64].fetch_and(~(uint64_t{1} << (index % 64)), std::memory_order_release);
  return true;
}

void op_table::take_all_of(int rank, std::vector<entry>& out) {
  for (uint32_t i = 0; i < slots; ++i) {
    const uint64_t st = s_[i].state.load(std::memory_order_acquire);
    if ((st & 0xffffffffu) != st_flight) continue;
    // The rank and kind are compared by finish, which holds the slot.
    const uint64_t id = (st >> 32) << 32 | i;
    entry e;
    if (finish(id, rank, op_kind::read, e) || finish(id, rank, op_kind::write, e))
      out.push_back(e);
  }
}

op_table::op_table() {
  // Generations start at random values, so that an id cannot be predicted
  // from the ids this device gave other peers.
  uint64_t x = random_bits();
  for (slot& s : s_) {
    x += 0x9e3779b97f4a7c15ull;  // splitmix64 steps from one random seed
    uint64_t z = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    const uint64_t gen = static_cast<uint32_t>(z ^ (z >> 31)) | 1;
    s.state.store(gen << 32 | st_free, std::memory_order_relaxed);
  }
}

int op_table::in_flight() const {
  int n = 0;
  for (const auto& w : used_) n += __builtin_popcountll(w.load(std::memory_order_relaxed));
  return n;
}

// ---- the device ------------------------------------------------------------------

segment_header* native_device::format_segment(void* base, int rank, int32_t pid) const {
  auto* h = new (base) segment_header{};
  h->magic = segment_magic;
  h->version = segment_version;
  h->rank = rank;
  h->pid = pid;
  h->ncells = static_cast<uint32_t>(opt_.ring_cells);
  h->cell_size = cell_size_for(opt_.max_payload);
  h->bytes = own_bytes_;
  h->probe = segment_magic;
  ring(&h->tail, static_cast<char*>(base) + cells_offset, h->cell_size, opt_.ring_cells)
      .format();
  return h;
}

native_device::native_device(int rank, int nranks, int group_index, const options& o)
    : opt_(o),
      rank_(rank),
      group_index_(group_index),
      let_through_(static_cast<uint32_t>(group_index)) {
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
  own_ = format_segment(base, rank, static_cast<int32_t>(getpid()));
  own_regs_ = reinterpret_cast<reg_bucket*>(static_cast<char*>(base) + reg_table_offset);
  own_ring_ = ring(&own_->tail, static_cast<char*>(base) + cells_offset, own_->cell_size,
                   o.ring_cells);

  local_bytes_ = 64 + local_ring_cells * local_cell_size;
  local_memory_ = mmap(nullptr, local_bytes_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (local_memory_ == MAP_FAILED) fatal("shared-memory transport: out of memory");
  static_assert(sizeof(local_cell) <= local_cell_size, "local completion cell");
  local_ = ring(new (local_memory_) std::atomic<uint64_t>(0),
                static_cast<char*>(local_memory_) + 64, local_cell_size, local_ring_cells);
  local_.format();
  peers_.resize(static_cast<size_t>(nranks));
  is_local_.assign(static_cast<size_t>(nranks), 0);
  replies_.resize(static_cast<size_t>(nranks));
}

std::string native_device::address() const {
  char buf[128];
  snprintf(buf, sizeof buf, "%d,%d,%" PRIxPTR, static_cast<int>(getpid()), fd_,
           reinterpret_cast<uintptr_t>(&own_->probe));
  return buf;
}

void native_device::attach(const std::vector<std::string>& addresses,
                        const std::vector<bool>& local) {
  std::vector<int> others;  // the pids of the local peers
  size_t local_peers = 0;
  for (size_t r = 0; r < peers_.size(); ++r)
    local_peers += local[r] && static_cast<int>(r) != rank_;
  // A pidfd stays open per local peer this rank talks to: room for all of
  // them and for the program's own files.
  raise_fd_limit(local_peers + 256);
  local_peers_ = local_peers;
  mapped_.reset(new std::atomic<uint8_t>[peers_.size()]);
  for (size_t r = 0; r < peers_.size(); ++r) {
    mapped_[r].store(0, std::memory_order_relaxed);
    if (!local[r]) continue;
    peer& p = peers_[r];
    is_local_[r] = 1;
    if (static_cast<int>(r) == rank_) {
      p.inbound = own_ring_;
      p.head = own_;
      p.regs = own_regs_;
      p.pid = 0;  // this process: plain copies where cross-memory attach is on
      p.cma = opt_.cma && rank_ != opt_.test_no_cma_rank;
      mapped_[r].store(1, std::memory_order_relaxed);
      continue;
    }
    // Only the address now: the segment is mapped at the first contact
    // (reach), so that a rank holds mappings and descriptors for the peers
    // it talks to, not for every rank of the host.
    int pid = 0, fd = -1;
    uintptr_t probe = 0;
    if (sscanf(addresses[r].c_str(), "%d,%d,%" SCNxPTR, &pid, &fd, &probe) != 3 || pid <= 0 ||
        fd < 0)
      fatal("shared-memory transport: rank %zu published a malformed address \"%s\"", r,
            addresses[r].c_str());
    p.pid = pid;
    p.segment_fd = fd;
    p.probe = probe;
    others.push_back(pid);
  }
  // A host of few ranks: every peer now (its descriptor then closes in
  // attached(), after the fence that follows every rank's attach).
  map_all_ = local_peers + 1 <= static_cast<size_t>(opt_.map_all);
  if (map_all_)
    for (size_t r = 0; r < peers_.size(); ++r)
      if (local[r] && static_cast<int>(r) != rank_) map_peer(static_cast<int>(r));
  // Yama (ptrace_scope 1) lets only ancestors, or the process named with
  // PR_SET_PTRACER and its descendants, attach: name the nearest process
  // that all local peers descend from (the launcher), and only when there
  // are peers to serve. Scopes 2 and 3 refuse it whatever is named: bulk
  // data is then pipelined.
  if (opt_.cma && !others.empty() && yama_scope() == 1) {
    others.push_back(static_cast<int>(getpid()));
    const int ancestor = common_ancestor(others);
    if (ancestor > 1 && name_ptracer(ancestor))
      ptracer_ = ancestor;
    else
      LCI_LOG(info,
              "device %d: the local ranks have no common ancestor but init to name as ptracer: "
              "bulk data is pipelined through shared memory",
              group_index_);
  }
}

void native_device::attached() {
  // Every local peer has mapped this segment: no descriptor or name of it
  // is left. Otherwise (map_all_ off) the descriptor stays open until the
  // device closes: a local peer opens it (through /proc) when it first
  // talks to this rank.
  if (!map_all_) return;
  close_descriptor();
  for (size_t r = 0; r < peers_.size(); ++r)
    if (mapped(r) && peers_[r].pid != 0) test_cma(static_cast<int>(r));
}

void native_device::map_peer(int rank) {
  std::lock_guard<std::mutex> g(map_lock_);
  const size_t r = static_cast<size_t>(rank);
  if (mapped_[r].load(std::memory_order_relaxed)) return;  // another thread did
  peer& p = peers_[r];
  if (!is_local_[r])
    fatal("shared-memory transport: rank %d is not on this host (an operation for the "
          "network was routed here)",
          rank);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", p.pid, p.segment_fd);
  const int pfd = open(path, O_RDWR | O_CLOEXEC);
  if (pfd < 0 && (errno == EMFILE || errno == ENFILE))
    fatal_exit(1,
               "shared-memory transport: cannot open the segment of rank %d (%s: %s): the "
               "open-file limit (ulimit -n) is %zu and each rank holds a descriptor per local "
               "peer it talks to (%zu on this host, %zu so far) besides its own; raise the "
               "limit (or its hard limit, ulimit -Hn)",
               rank, path, strerror(errno), fd_limit(), local_peers_, mapped_count_);
  if (pfd < 0 && opt_.report_evidence != nullptr) {
    // LCI_PEER_FAILURE=continue: a peer that died before this rank first
    // talked to it gets a private stand-in segment, which nobody reads, and
    // its pidfd; the next check_peers declares it dead (as it would a
    // mapped peer's death).
    const int err = errno;
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, p.pid, 0));
    if (process_exited(p.pid, pidfd)) {
      stand_in(rank, pidfd);
      return;
    }
    if (pidfd >= 0) close(pidfd);
    errno = err;
  }
  if (pfd < 0)
    fatal("shared-memory transport: cannot open the segment of rank %d (%s: %s); run with "
          "LCI_SHM=0 to send through the network backend instead",
          rank, path, strerror(errno));
  struct stat st {};
  fstat(pfd, &st);
  const size_t bytes = static_cast<size_t>(st.st_size);
  void* base = bytes >= cells_offset
                   ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0)
                   : MAP_FAILED;
  close(pfd);
  if (base == MAP_FAILED)
    fatal("shared-memory transport: cannot map the segment of rank %d (%zu bytes)", rank, bytes);
  auto* h = static_cast<segment_header*>(base);
  const uint64_t cells = h->ncells;
  if (h->magic != segment_magic || h->version != segment_version ||
      h->rank != static_cast<int32_t>(rank) || h->pid != p.pid || h->bytes != bytes ||
      h->cell_size != cell_size_for(opt_.max_payload) || cells == 0 ||
      (cells & (cells - 1)) != 0 || cells_offset + cells * h->cell_size > bytes)
    fatal("shared-memory transport: the segment of rank %d is not what it published (do the "
          "ranks run the same LCI with the same LCI_PACKET_SIZE?)",
          rank);
  install(rank, h, bytes, cells, static_cast<int>(syscall(SYS_pidfd_open, p.pid, 0)));
  // At the first contact the peer has named its ptracer long since; at
  // attach (map_all_) it may not have yet: attached() tests then.
  if (!map_all_) test_cma(rank);
  mapped_[r].store(1, std::memory_order_release);
}

void native_device::install(int rank, segment_header* h, size_t bytes, uint64_t cells,
                            int pidfd) {
  peer& p = peers_[static_cast<size_t>(rank)];
  char* base = reinterpret_cast<char*>(h);
  p.head = h;
  p.bytes = bytes;
  // This process claims cells of the peer's ring as rank + 1, so that the
  // peer can give back a cell it held if it dies before publishing it.
  p.inbound = ring(&h->tail, base + cells_offset, cell_size_for(opt_.max_payload), cells,
                   producer_id());
  p.regs = reinterpret_cast<const reg_bucket*>(base + reg_table_offset);
  p.pidfd = pidfd;
  ++mapped_count_;
}

void native_device::stand_in(int rank, int pidfd) {
  peer& p = peers_[static_cast<size_t>(rank)];
  void* base =
      mmap(nullptr, own_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) fatal("shared-memory transport: out of memory");
  install(rank, format_segment(base, rank, p.pid), own_bytes_, opt_.ring_cells, pidfd);
  p.cma = false;
  LCI_LOG(info, "device %d: rank %d exited before this rank first talked to it", group_index_,
          rank);
  mapped_[static_cast<size_t>(rank)].store(1, std::memory_order_release);
}

void native_device::test_cma(int rank) {
  peer& p = peers_[static_cast<size_t>(rank)];
  // Cross-memory attach: read the peer's probe word.
  uint64_t word = 0;
  const int err = opt_.cma ? cma_copy(p.pid, &word, p.probe, sizeof word, false) : 0;
  p.cma = opt_.cma && err == 0 && word == segment_magic && rank != opt_.test_no_cma_rank;
  if (opt_.cma && !p.cma)
    LCI_LOG(info,
            "device %d: cross-memory attach to rank %d refused (%s): bulk data is pipelined "
            "through shared memory",
            group_index_, rank, err ? strerror(err) : "unexpected data");
}

void native_device::close_descriptor() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

native_device::~native_device() {
  own_->closed.store(1, std::memory_order_release);
  for (size_t r = 0; r < peers_.size(); ++r) {
    peer& p = peers_[r];
    if (p.pidfd >= 0) close(p.pidfd);
    if (p.head && p.head != own_) munmap(p.head, p.bytes);
  }
  close_descriptor();
  if (ptracer_) unname_ptracer();
  munmap(own_, own_bytes_);
  munmap(local_memory_, local_bytes_);
}

// ---- registrations ----------------------------------------------------------------

namespace {

reg_bucket& bucket_at(reg_bucket* table, size_t home, uint64_t d) {
  return table[(home + d) & (reg_buckets - 1)];
}

// A change of one bucket, between two increments of its version (odd while
// it lasts).
template <class F>
void change_bucket(reg_bucket& b, F f) {
  b.version.store(b.version.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  f();
  b.version.store(b.version.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// A bucket's reach, bounded (the segment is mapped writable by the peers).
uint64_t reach_of(const reg_bucket& b) {
  const uint64_t reach = __atomic_load_n(&b.reach, __ATOMIC_RELAXED);
  return reach < reg_max_reach ? reach : reg_max_reach;
}

// The owner's search: the bucket and entry of `key` within reach of its home.
bool find_entry(reg_bucket* table, uint64_t key, reg_bucket** bucket, int* entry) {
  const size_t home = reg_bucket_of(key);
  const uint64_t reach = reach_of(table[home]);
  for (uint64_t d = 0; d <= reach; ++d) {
    reg_bucket& b = bucket_at(table, home, d);
    for (int i = 0; i < 8; ++i)
      if ((b.used >> i & 1) && b.key[i] == key) {
        *bucket = &b;
        *entry = i;
        return true;
      }
  }
  return false;
}

}  // namespace

bool reg_table_insert(reg_bucket* table, uint64_t key, uint64_t base, uint64_t length) {
  reg_table_erase(table, key);
  const size_t home = reg_bucket_of(key);
  for (uint64_t d = 0; d <= reg_max_reach; ++d) {
    reg_bucket& b = bucket_at(table, home, d);
    const uint64_t used = b.used & 0xff;  // (peers map the segment writable)
    if (used == 0xff) continue;
    const int i = __builtin_ctzll(~used);
    change_bucket(b, [&] {
      __atomic_store_n(&b.key[i], key, __ATOMIC_RELAXED);
      __atomic_store_n(&b.base[i], base, __ATOMIC_RELAXED);
      __atomic_store_n(&b.length[i], length, __ATOMIC_RELAXED);
      __atomic_store_n(&b.used, used | (uint64_t{1} << i), __ATOMIC_RELAXED);
    });
    // The entry first, then the reach that lets readers find it.
    reg_bucket& h = table[home];
    if (d > reach_of(h))
      change_bucket(h, [&] { __atomic_store_n(&h.reach, d, __ATOMIC_RELAXED); });
    return true;
  }
  return false;
}

void reg_table_erase(reg_bucket* table, uint64_t key) {
  reg_bucket* b = nullptr;
  int i = 0;
  if (!find_entry(table, key, &b, &i)) return;
  change_bucket(*b, [&] {
    __atomic_store_n(&b->used, b->used & ~(uint64_t{1} << i), __ATOMIC_RELAXED);
  });
  // The home's reach shrinks to the farthest key of that home still there.
  const size_t home = reg_bucket_of(key);
  reg_bucket& h = table[home];
  uint64_t reach = 0;
  const uint64_t was = reach_of(h);
  for (uint64_t d = 1; d <= was; ++d) {
    const reg_bucket& o = bucket_at(table, home, d);
    for (int k = 0; k < 8; ++k)
      if ((o.used >> k & 1) && reg_bucket_of(o.key[k]) == home) reach = d;
  }
  if (reach != h.reach)
    change_bucket(h, [&] { __atomic_store_n(&h.reach, reach, __ATOMIC_RELAXED); });
}

namespace {

// One bucket read consistently: whether it holds `key` (and its range);
// with `reach`, also its reach. False after too many torn reads.
bool read_bucket(const reg_bucket& b, uint64_t key, bool* found, uint64_t* base, uint64_t* len,
                 uint64_t* reach) {
  // A bounded number of tries: the owner changes a bucket in a few stores;
  // one that never settles (a peer writing it) is refused.
  for (int tries = 0; tries < 1000; ++tries) {
    const uint64_t v1 = b.version.load(std::memory_order_acquire);
    if (v1 & 1) continue;
    const uint64_t used = __atomic_load_n(&b.used, __ATOMIC_RELAXED);
    *found = false;
    for (int i = 0; i < 8 && !*found; ++i) {
      if (!(used >> i & 1) || __atomic_load_n(&b.key[i], __ATOMIC_RELAXED) != key) continue;
      *found = true;
      *base = __atomic_load_n(&b.base[i], __ATOMIC_RELAXED);
      *len = __atomic_load_n(&b.length[i], __ATOMIC_RELAXED);
    }
    if (reach) *reach = __atomic_load_n(&b.reach, __ATOMIC_RELAXED);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (b.version.load(std::memory_order_relaxed) == v1) return true;
  }
  return false;
}

}  // namespace

bool reg_table_allows(const reg_bucket* table, uint64_t key, uint64_t address, uint64_t length) {
  const size_t home = reg_bucket_of(key);
  bool found = false;
  uint64_t base = 0, len = 0, reach = 0;
  if (!read_bucket(table[home], key, &found, &base, &len, &reach)) return false;
  // The reach is read from another process's memory: bounded here.
  if (reach > reg_max_reach) reach = reg_max_reach;
  for (uint64_t d = 1; !found && d <= reach; ++d)
    if (!read_bucket(table[(home + d) & (reg_buckets - 1)], key, &found, &base, &len, nullptr))
      return false;
  if (!found) return false;
  const uint64_t end = base + len;
  return address >= base && address <= end && length <= end - address;
}

bool native_device::record_registration(void* addr, size_t len, net::mr_access access,
                                       uint64_t key) {
  if (access != net::mr_access::remote) return true;
  std::lock_guard<std::mutex> g(regs_lock_);
  if (!reg_table_insert(own_regs_, key, reinterpret_cast<uint64_t>(addr), len)) {
    // Its cross-memory peers could not check this key: refused, so that
    // no key is ever allowed that the table does not hold.
    if (!table_full_warned_)
      LCI_WARN("device %d: a registration for remote access was refused (LCI_ERR_RETRY): the "
               "shared-memory registration table has no room where its key falls (%zu "
               "registrations for remote access now, of at most %zu)",
               group_index_, regs_.size(), reg_buckets * 8);
    table_full_warned_ = true;
    return false;
  }
  regs_[key] = {reinterpret_cast<uint64_t>(addr), len};
  return true;
}

void native_device::forget_registration(uint64_t key) {
  // Under the lock: a pipelined copy from or into this memory checks the
  // registration and copies under the same lock, so none runs after this
  // returns.
  std::lock_guard<std::mutex> g(regs_lock_);
  if (regs_.erase(key)) reg_table_erase(own_regs_, key);
}

bool native_device::registered_locked(uint64_t address, uint64_t length, uint64_t key) const {
  auto it = regs_.find(key);
  if (it == regs_.end()) return false;
  const uint64_t base = it->second.first, end = base + it->second.second;
  return address >= base && address <= end && length <= end - address;
}

bool native_device::registered(uint64_t address, uint64_t length, uint64_t key) {
  std::lock_guard<std::mutex> g(regs_lock_);
  return registered_locked(address, length, key);
}

// ---- bulk data ----------------------------------------------------------------------

bool native_device::send_notice(int rank, uint32_t imm) {
  ring::slot s = reach(rank).inbound.reserve();
  if (!s.cell) return false;
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  c->kind = static_cast<uint8_t>(cell_kind::write_notice);
  c->flags = 0;
  c->src = rank_;
  c->imm = imm;
  c->length = 0;
  publish_to(rank, s);
  return true;
}

void native_device::finish_cma(int notify, uint32_t imm, completion_kind kind, void* ctx,
                            int error) {
  if (notify >= 0 && send_notice(notify, imm)) notify = -1;
  if (notify < 0) {
    ring::slot done = local_.reserve();
    if (done.cell) {
      complete_local(done, kind, ctx, error);
      return;
    }
  }
  // A ring was full: the operation is finished, what is left of it waits
  // here for poll() (this process's own list, one entry per operation).
  finished_op f;
  f.notify = notify;
  f.imm = imm;
  f.c.kind = kind;
  f.c.ctx = ctx;
  f.c.error = error;
  finished_lock_.lock();
  finished_.push_back(f);
  finished_size_.store(finished_.size(), std::memory_order_relaxed);
  finished_lock_.unlock();
  wake_self();
}

int native_device::flush_finished(completion* out, int max) {
  if (!finished_lock_.try_lock()) return 0;
  int n = 0;
  while (!finished_.empty() && n < max) {
    finished_op& f = finished_.front();
    if (f.notify >= 0 && peers_[static_cast<size_t>(f.notify)].dead) {
      // Its target died with a full ring, which nobody drains: the notice
      // cannot go, and waiting for it would hold every entry behind it. The
      // write's target never learns of it, so it completes as failed.
      f.notify = -1;
      if (f.c.kind == completion_kind::rma_done) {
        f.c.kind = completion_kind::failed;
        f.c.error = ESRCH;
      }
    }
    if (f.notify >= 0 && !send_notice(f.notify, f.imm)) break;
    out[n++] = f.c;
    finished_.pop_front();
  }
  finished_size_.store(finished_.size(), std::memory_order_relaxed);
  finished_lock_.unlock();
  return n;
}

status native_device::write(int rank, const void* buf, size_t len, uint64_t raddr, uint64_t rkey,
                         void* ctx, bool with_imm, uint32_t imm) {
  peer& p = reach(rank);
  if (__builtin_expect(__atomic_load_n(&p.dead, __ATOMIC_RELAXED), 0)) {
    finish_cma(-1, 0, completion_kind::failed, ctx, ESRCH);
    return status::ok;
  }
  if (p.cma) {
    // The copy first, holding no cell of any ring: other traffic to this
    // rank flows while a transfer of any size runs. The target's table
    // says whether the key still names memory registered there.
    int err = 0;
    if (!reg_table_allows(p.regs, rkey, raddr, len))
      err = EACCES;
    else if (p.pid != 0)
      err = cma_copy(p.pid, const_cast<void*>(buf), raddr, len, true);
    else if (len)
      memcpy(reinterpret_cast<void*>(raddr), buf, len);
    finish_cma(with_imm && !err ? rank : -1, imm,
               err ? completion_kind::failed : completion_kind::rma_done, ctx, err);
    return status::ok;
  }
  // Pipelined: one cell, completed when the target acknowledges it.
  op_table::entry e{op_table::op_kind::write, rank, nullptr, static_cast<uint32_t>(len), ctx};
  const uint64_t id = ops_.take(e);
  if (__builtin_expect(id == 0, 0)) return status::retry;
  ring::slot s = p.inbound.reserve();
  if (__builtin_expect(s.cell == nullptr, 0)) {
    op_table::entry unused;
    ops_.finish(id, rank, op_table::op_kind::write, unused);
    return status::retry;
  }
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  c->kind = static_cast<uint8_t>(cell_kind::write_data);
  c->flags = with_imm ? flag_has_imm : 0;
  c->src = rank_;
  c->imm = imm;
  c->length = static_cast<uint32_t>(len);
  c->address = raddr;
  c->key = rkey;
  c->op = id;
  if (len) memcpy(c->data(), buf, len);
  publish_to(rank, s);
  return status::ok;
}

status native_device::post_read(int rank, void* buf, size_t len, void*, uint64_t raddr,
                             uint64_t rkey, void* ctx) {
  net::annotate_post(this);
  peer& p = reach(rank);
  if (__builtin_expect(__atomic_load_n(&p.dead, __ATOMIC_RELAXED), 0)) {
    finish_cma(-1, 0, completion_kind::failed, ctx, ESRCH);
    return status::ok;
  }
  if (p.cma) {
    int err = 0;
    if (!reg_table_allows(p.regs, rkey, raddr, len))
      err = EACCES;
    else if (p.pid != 0)
      err = cma_copy(p.pid, buf, raddr, len, false);
    else if (len)
      memcpy(buf, reinterpret_cast<const void*>(raddr), len);
    finish_cma(-1, 0, err ? completion_kind::failed : completion_kind::rma_done, ctx, err);
    return status::ok;
  }
  op_table::entry e{op_table::op_kind::read, rank, buf, static_cast<uint32_t>(len), ctx};
  const uint64_t id = ops_.take(e);
  if (__builtin_expect(id == 0, 0)) return status::retry;
  ring::slot s = p.inbound.reserve();
  if (__builtin_expect(s.cell == nullptr, 0)) {
    op_table::entry unused;
    ops_.finish(id, rank, op_table::op_kind::read, unused);
    return status::retry;
  }
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  c->kind = static_cast<uint8_t>(cell_kind::read_request);
  c->flags = 0;
  c->src = rank_;
  c->imm = 0;
  c->length = static_cast<uint32_t>(len);
  c->address = raddr;
  c->key = rkey;
  c->op = id;
  publish_to(rank, s);
  return status::ok;
}

// ---- the less frequent cells ----------------------------------------------------------

int native_device::take_other(cell* c, const cell_fields& f, completion* out) {
  if (const char* bad = check_cell(f, is_local_.data(), is_local_.size(), opt_.max_payload)) {
    drop(*out, f, bad);
    return 1;
  }
  // A rank declared dead reaches no memory of this process any more: its
  // pipelined write and read requests are refused unanswered, as its
  // messages are (the core drops those). Cross-memory attach, which the
  // requester does by itself, cannot be refused here (docs/failure.md).
  if ((f.kind == static_cast<uint8_t>(cell_kind::write_data) ||
       f.kind == static_cast<uint8_t>(cell_kind::read_request)) &&
      __builtin_expect(opt_.is_failed != nullptr && opt_.is_failed(f.src), 0))
    return 0;
  switch (static_cast<cell_kind>(f.kind)) {
    case cell_kind::nop:
      return 0;
    case cell_kind::message:
      // poll() takes every message check_cell accepts; a message reaching
      // this point had a field the fast path refused.
      drop(*out, f, "message header");
      return 1;
    case cell_kind::write_notice:
      out->kind = completion_kind::remote_write;
      out->src_rank = f.src;
      out->imm = f.imm;
      out->length = 0;
      out->ctx = nullptr;
      return 1;
    case cell_kind::write_data: {
      // The answer needs a place in the reply queue, bounded per peer.
      const size_t src = static_cast<size_t>(f.src);
      if (replies_[src].size() >= op_table::slots) {
        drop(*out, f, "operation (more unanswered requests than a peer can have)");
        return 1;
      }
      pending_reply r{cell_kind::write_ack, true, 0, 0, 0, f.op};
      {
        // Checked and copied under the registration lock: a deregistration
        // waits for the copy, and none starts after it.
        std::lock_guard<std::mutex> g(regs_lock_);
        r.ok = registered_locked(f.address, f.length, f.key);
        // f.address was checked: the copy uses it, not the cell's field again.
        if (r.ok && f.length) memcpy(reinterpret_cast<void*>(f.address), c->data(), f.length);
      }
      queue_reply(f.src, r);
      if (!r.ok) {
        drop(*out, f, "address or key (a write outside every registration for remote access)");
        return 1;
      }
      if (!(f.flags & flag_has_imm)) return 0;
      out->kind = completion_kind::remote_write;
      out->src_rank = f.src;
      out->imm = f.imm;
      out->length = 0;
      out->ctx = nullptr;
      return 1;
    }
    case cell_kind::read_request: {
      const size_t src = static_cast<size_t>(f.src);
      if (replies_[src].size() >= op_table::slots) {
        drop(*out, f, "operation (more unanswered requests than a peer can have)");
        return 1;
      }
      // The range is checked where the bytes are copied (reply()); a
      // request that must wait is also checked now, for the report.
      pending_reply r{cell_kind::read_reply, true, f.address, f.length, f.key, f.op};
      answer a = replies_[src].empty() ? reply(f.src, r) : answer::full;
      if (a == answer::full) {
        r.ok = registered(f.address, f.length, f.key);
        a = queue_reply(f.src, r);
        if (!r.ok) a = answer::refused;
      }
      if (a == answer::refused) {
        drop(*out, f, "address or key (a read outside every registration for remote access)");
        return 1;
      }
      return 0;
    }
    case cell_kind::read_reply:
    case cell_kind::write_ack: {
      const bool read = f.kind == static_cast<uint8_t>(cell_kind::read_reply);
      op_table::entry e;
      if (!ops_.finish(f.op, f.src, read ? op_table::op_kind::read : op_table::op_kind::write,
                       e)) {
        drop(*out, f, "operation (no such read or write in flight to that rank)");
        return 1;
      }
      out->ctx = e.ctx;
      out->error = 0;
      if (f.flags & flag_error) {
        out->kind = completion_kind::failed;
        out->error = read ? EFAULT : EACCES;
        return 1;
      }
      if (read) {
        if (f.length != e.length) {
          // The operation ends (failed): a short or long answer is no answer.
          out->kind = completion_kind::failed;
          out->error = EPROTO;
          return 1;
        }
        if (f.length) memcpy(e.buffer, c->data(), f.length);
      }
      out->kind = completion_kind::rma_done;
      return 1;
    }
  }
  return 0;
}

native_device::answer native_device::queue_reply(int rank, const pending_reply& r) {
  std::deque<pending_reply>& q = replies_[static_cast<size_t>(rank)];
  if (q.empty()) {
    const answer a = reply(rank, r);
    if (a != answer::full) return a;
    replying_.push_back(rank);
  }
  q.push_back(r);
  ++replies_count_;
  replies_waiting_.store(1, std::memory_order_relaxed);
  return answer::full;
}

native_device::answer native_device::reply(int rank, const pending_reply& r) {
  peer& p = reach(rank);
  ring::slot s = p.inbound.reserve();
  if (!s.cell) return answer::full;
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  bool ok = r.ok;
  c->kind = static_cast<uint8_t>(r.kind);
  c->src = rank_;
  c->imm = 0;
  c->address = 0;
  c->key = 0;
  c->op = r.op;
  if (r.kind == cell_kind::read_reply && ok) {
    // The registration as it is now, and the copy under the same lock.
    std::lock_guard<std::mutex> g(regs_lock_);
    ok = registered_locked(r.address, r.length, r.key);
    if (ok && r.length) memcpy(c->data(), reinterpret_cast<const void*>(r.address), r.length);
  }
  c->flags = ok ? 0 : flag_error;
  c->length = r.kind == cell_kind::read_reply && ok ? static_cast<uint32_t>(r.length) : 0;
  publish_to(rank, s);
  return ok || r.kind != cell_kind::read_reply ? answer::sent : answer::refused;
}

void native_device::send_pending_replies() {
  // Each requester with answers waiting in turn: as many of its answers as
  // its ring takes. A requester that died is answered no more (its full
  // ring is drained by nobody).
  for (size_t turns = replying_.size(); turns > 0; --turns) {
    const int rank = replying_.front();
    replying_.pop_front();
    std::deque<pending_reply>& q = replies_[static_cast<size_t>(rank)];
    const bool dead = peers_[static_cast<size_t>(rank)].dead;
    while (!q.empty() && (dead || reply(rank, q.front()) != answer::full)) {
      q.pop_front();
      --replies_count_;
    }
    if (!q.empty()) replying_.push_back(rank);
  }
  if (replying_.empty()) replies_waiting_.store(0, std::memory_order_relaxed);
}

// ---- tests ----------------------------------------------------------------------------

bool native_device::forge(int rank, const cell_fields& f, const void* payload, size_t length,
                       uint64_t retarget) {
  if (rank < 0 || static_cast<size_t>(rank) >= peers_.size() ||
      !is_local_[static_cast<size_t>(rank)])
    return false;
  peer& p = reach(rank);
  ring::slot s = p.inbound.reserve();
  if (!s.cell) return false;
  cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
  c->kind = f.kind;
  c->flags = f.flags;
  c->src = f.src;
  c->imm = f.imm;
  c->length = f.length;
  c->address = f.address;
  c->key = f.key;
  c->op = f.op;
  const size_t room = p.inbound.cell_size() - sizeof(cell);
  if (length) memcpy(c->data(), payload, length < room ? length : room);
  publish_to(rank, s);
  if (retarget) __atomic_store_n(&c->address, retarget, __ATOMIC_RELAXED);
  return true;
}

// ---- peers that die -------------------------------------------------------------------

void native_device::describe(const net::describe_fn& out) const {
  char line[384];
  snprintf(line, sizeof(line),
           "native: inbound ring %" PRIu64 "/%" PRIu64 " cells in use; %d pipelined "
           "operation(s) in flight; answers waiting for room: %s; %zu completion(s) waiting "
           "for room; %" PRIu64 " cell(s) taken back from dead senders; %" PRIu64
           " nap(s) of idle progress threads; %zu local peer(s) connected (mapped)",
           own_ring_.occupied(), own_ring_.size(), ops_.in_flight(),
           replies_waiting_.load(std::memory_order_relaxed) ? "yes" : "no",
           finished_size_.load(std::memory_order_relaxed),
           reclaimed_.load(std::memory_order_relaxed), naps_.load(std::memory_order_relaxed),
           connected_peers());
  out(line);
  for (size_t r = 0; r < peers_.size(); ++r) {
    if (!mapped(r) || static_cast<int>(r) == rank_) continue;
    const peer& p = peers_[r];
    snprintf(line, sizeof(line),
             "native: ring of rank %zu: %" PRIu64 "/%" PRIu64 " cells in use; bulk data %s%s",
             r, p.inbound.occupied(), p.inbound.size(),
             p.cma ? "by cross-memory copy" : "pipelined through the rings",
             p.head->closed.load(std::memory_order_acquire) ? "; its device is closed" : "");
    out(line);
  }
}

uint64_t native_device::arrivals_waiting() const {
  auto published = [](const ring& r, uint64_t head) {
    uint64_t n = 0;
    while (n < r.size() && r.peek(head + n)) ++n;
    return n;
  };
  return published(own_ring_, head_.load(std::memory_order_relaxed)) +
         published(local_, local_head_.load(std::memory_order_relaxed));
}

// ---- napping --------------------------------------------------------------------------

void native_device::wake(segment_header* h) {
  // The first to see the bell armed wakes every sleeper (one call for a
  // burst of messages); the word is shared between processes (no
  // FUTEX_PRIVATE_FLAG).
  if (h->armed.exchange(0, std::memory_order_seq_cst) != 0)
    futex(&h->armed, FUTEX_WAKE, INT32_MAX);
}

void native_device::wake_self() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // after the caller's publish
  ring_bell(own_);
}

bool native_device::arm_idle() {
  own_->armed.store(1, std::memory_order_seq_cst);
  // Work published before the store above is seen here; work published
  // after it finds the bell armed.
  return finished_size_.load(std::memory_order_seq_cst) == 0 &&
         replies_waiting_.load(std::memory_order_relaxed) == 0 &&
         !own_ring_.peek(head_.load(std::memory_order_relaxed)) &&
         !local_.peek(local_head_.load(std::memory_order_relaxed));
}

void native_device::nap_on(std::atomic<uint32_t>* const* bells, int n, int64_t timeout_ns) {
  if (n > 1) {
    // futex_waitv (Linux 5.16): sleeps until any of the words changes. Its
    // timeout is absolute, on the clock named.
    futex_waitv w[8] = {};
    n = n < 8 ? n : 8;
    for (int i = 0; i < n; ++i) {
      w[i].val = 1;
      w[i].uaddr = reinterpret_cast<uintptr_t>(bells[i]);
      w[i].flags = FUTEX_32;  // shared between processes: no FUTEX_PRIVATE_FLAG
    }
    timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    const int64_t ns = end.tv_nsec + timeout_ns;
    end.tv_sec += static_cast<time_t>(ns / 1000000000);
    end.tv_nsec = static_cast<long>(ns % 1000000000);
    if (syscall(SYS_futex_waitv, w, n, 0, &end, CLOCK_MONOTONIC) >= 0 || errno != ENOSYS) return;
    // An older kernel: the first device's bell only (the others' messages
    // wait for the timeout at worst).
  }
  const timespec t{static_cast<time_t>(timeout_ns / 1000000000),
                   static_cast<long>(timeout_ns % 1000000000)};
  futex(bells[0], FUTEX_WAIT, 1, &t);  // at once if no longer 1
}

void native_device::check_peers() {
  const int64_t now = now_ns();
  if (now - last_check_ns_ < 100000000) return;
  last_check_ns_ = now;
  // Peers not mapped (not talked to yet) have no pidfd: a few of them per
  // check, in turn, by their pid (a dead one is found within
  // peers / unmapped_per_check checks).
  constexpr size_t unmapped_per_check = 16;
  size_t u = 0;  // the place of a peer among the unmapped ones
  const bool closing = closing_.load(std::memory_order_relaxed);
  for (size_t r = 0; r < peers_.size(); ++r) {
    const peer& p = peers_[r];
    // (an operation posted to it as it was found dead may still be in flight)
    if (p.dead) fail_ops_to(static_cast<int>(r));
    if (p.pid == 0 || p.dead) continue;
    if (!mapped(r)) {
      // In turn; and once this rank closes, a peer's exit may be its
      // finalize, which only its (unmapped) segment would say.
      const size_t i = u++;
      if (closing || i < unmapped_check_ || i >= unmapped_check_ + unmapped_per_check) continue;
      if (!process_exited(p.pid, -1)) continue;
    } else {
      if (p.head->closed.load(std::memory_order_acquire)) continue;
      const bool exited = process_exited(p.pid, p.pidfd);
      if (!exited || p.head->closed.load(std::memory_order_acquire)) continue;
    }
    declare_dead(r);
  }
  unmapped_check_ += unmapped_per_check;
  if (unmapped_check_ >= u) unmapped_check_ = 0;  // the turn starts again
}

void native_device::declare_dead(size_t r) {
  const peer& p = peers_[r];
  if (opt_.report_evidence == nullptr)
    fatal("rank %zu (pid %d) on this host exited while device %d was in use; ending the job", r,
          p.pid, group_index_);
  __atomic_store_n(&peers_[r].dead, true, __ATOMIC_RELAXED);  // checked no more
  ++dead_peers_;
  fail_ops_to(static_cast<int>(r));
  opt_.report_evidence(static_cast<int>(r), net::evidence::pid_gone,
                       "it exited without closing its device");
}

bool native_device::reclaim_from_dead(uint64_t head) {
  // The id is read from shared memory: it must name a local peer that
  // this process saw exit (a live producer may still be filling the cell).
  const uint32_t id = own_ring_.holder(head);
  if (id == 0 || id > peers_.size() || !peers_[id - 1].dead) return false;
  own_ring_.release(head);
  reclaimed_.store(reclaimed_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  return true;
}

void native_device::fail_ops_to(int rank) {
  std::vector<op_table::entry> gone;
  ops_.take_all_of(rank, gone);
  if (gone.empty()) return;
  finished_lock_.lock();
  for (const op_table::entry& e : gone) {
    finished_op f;
    f.notify = -1;
    f.imm = 0;
    f.c.kind = completion_kind::failed;
    f.c.ctx = e.ctx;
    f.c.error = ESRCH;
    finished_.push_back(f);
  }
  finished_size_.store(finished_.size(), std::memory_order_relaxed);
  finished_lock_.unlock();
}

}  // namespace lci::native
