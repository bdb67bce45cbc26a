// libfabric backend: set-up, address exchange, registration, error paths.
#include "lci/backend/ofi/ofi.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lci/backend/ofi/hints.hpp"
#include "lci/backend/ofi/key_exchange.hpp"
#include "lci/backend/ofi/sent_counts.hpp"
#include "lci/util/random.hpp"
#include "lci/backend/ofi/shm_name.hpp"
#include "lci/util/clock.hpp"
#include "lci/util/log.hpp"
#include "lci/util/process_exited.hpp"

namespace lci::ofi {
namespace {

void check(int rc, const char* what) {
  if (rc) fatal("libfabric: %s failed: %s (%d)", what, fi_strerror(-rc), rc);
}

std::string to_hex(const void* data, size_t len) { return lci::bootstrap::encode_hex(data, len); }

std::vector<unsigned char> from_hex(const std::string& s) {
  std::vector<unsigned char> out;
  if (!lci::bootstrap::decode_hex(s, &out)) fatal("libfabric: malformed peer address \"%s\"", s.c_str());
  return out;
}

// Providers that move data by virtual address through the kernel (shm:
// process_vm_readv/writev or CMA; tcp, sockets, udp, net: sockets), so that
// a registration is only a key and a permission for a virtual range and
// always reaches whatever is mapped there now. Every other provider (verbs,
// efa, cxi, psm2/3, opx, ucx, ...) is assumed to pin pages: mr_mode cannot
// tell (FI_MR_LOCAL only says that local buffers need descriptors), and a
// wrong "does not pin" would let a cached registration reach freed pages.
// For a layered provider ("tcp;ofi_rxm") the core provider decides.
bool registrations_pin_of(const std::string& provider) {
  const std::string core = provider.substr(0, provider.find(';'));
  for (const char* p : {"shm", "sm2", "tcp", "sockets", "udp", "net"})
    if (core == p) return false;
  return true;
}

// Providers whose peers are named by the kernel for what they are, not by
// what a connecting process claims: shm (and sm2) map a peer's region by the
// name that rank published through the bootstrap, on this host only. Every
// other provider authenticates messages (auth.hpp).
bool authenticates_messages_of(const std::string& provider) {
  const std::string core = provider.substr(0, provider.find(';'));
  return core != "shm" && core != "sm2";
}

// The most a sealed inject stages on the stack (payload and trailer).
constexpr size_t sealed_inject_limit = 256;

// Heartbeats: one of the backend's own kinds (soft_rma.hpp), 32 bytes of
// payload: the messages the sender had sent the addressee before the
// heartbeat, those it received from the addressee, its clock, and whether
// it had receive buffers posted.
constexpr uint32_t heartbeat_imm = own_imm(own_kind::heartbeat);
constexpr int64_t heartbeat_period_ns = 1000000000;
// Heartbeats after the one that found messages missing before a shortfall
// is judged (besides the grace): a message polled before the heartbeat may
// still be checked on another thread, and rxm may deliver a long message
// after a short one sent later.
constexpr uint32_t heartbeat_short_beats = 2;
constexpr size_t heartbeat_bytes = 40;

// completion::admission of a sealed message (admit_sealed): its sequence
// number was new or stale at its poll (the tag is still to check), or the
// message was opened whole (accepted or a duplicate).
constexpr uint8_t admitted_new = 1, admitted_stale = 2, opened_accepted = 3,
                  opened_duplicate = 4;

}  // namespace

ofi_device::ofi_device(bootstrap::bootstrap& boot, int group_index, const net::settings& s) {
  int rc = get_info(boot.name(), &info_);
  if (rc || !info_)
    fatal("libfabric: no provider offers reliable datagram endpoints with send/recv and RMA "
          "(fi_getinfo: %s); check FI_PROVIDER", fi_strerror(-rc));
  cq_data_plan plan;
  fi_info* chosen =
      const_cast<fi_info*>(choose_info(info_, static_cast<size_t>(s.ofi_cq_data_size), &plan));
  if (!chosen)
    fatal("libfabric: provider %s carries %zu bytes of immediate data; 8 are needed, or 4 "
          "with FI_SOURCE (LCI_OFI_CQ_DATA_SIZE=%d)",
          info_->fabric_attr->prov_name, info_->domain_attr->cq_data_size, s.ofi_cq_data_size);
  // The rest of the list is not needed: keep only the chosen entry.
  if (chosen != info_) {
    fi_info* copy = fi_dupinfo(chosen);
    if (!copy) fatal("libfabric: fi_dupinfo failed");
    fi_freeinfo(info_);
    info_ = copy;
  } else if (info_->next) {
    fi_freeinfo(info_->next);
    info_->next = nullptr;
  }
  source_from_provider_ = plan.source_from_provider;
  mr_key_size_ = info_->domain_attr->mr_key_size;
  provider_ = info_->fabric_attr->prov_name;
  uint64_t mr_mode = info_->domain_attr->mr_mode;
  mr_local_ = mr_mode & FI_MR_LOCAL;
  mr_endpoint_ = mr_mode & FI_MR_ENDPOINT;
  mr_prov_key_ = mr_mode & FI_MR_PROV_KEY;
  mr_virt_addr_ = mr_mode & FI_MR_VIRT_ADDR;
  // FI_MR_BASIC (libfabric's old mode) means virtual addresses and provider keys.
  if (mr_mode == FI_MR_BASIC) mr_virt_addr_ = mr_prov_key_ = true;
  registrations_pin_ = registrations_pin_of(provider_);
  max_inject_ = info_->tx_attr->inject_size;
  group_index_ = group_index;
  const bool local_only = !authenticates_messages_of(provider_);
  const bool authenticate = !local_only;
  if (authenticate) {
    // An injected message is staged with its trailer (inject_sealed).
    max_inject_ = std::min(max_inject_, sealed_inject_limit);
    max_inject_ = max_inject_ > message_auth::trailer_bytes
                      ? max_inject_ - message_auth::trailer_bytes : 0;
  }
  rx_size_ = info_->rx_attr->size;
  max_msg_size_ = info_->ep_attr->max_msg_size;

  check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric");
  check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain");

  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_NONE;
  check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open");

  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<size_t>(boot.size());
  check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open");

  check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint");
  check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
  check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind(av)");
  // shm names its region after the pid unless told otherwise; a random name
  // cannot collide with a leftover or a planted file (see shm_name.hpp).
  if (provider_ == "shm") {
    shm_file_ = make_shm_file_name();
    std::string address = shm_address(shm_file_);
    check(fi_setname(&ep_->fid, address.data(), address.size() + 1), "fi_setname");
  }
  check(fi_enable(ep_), "fi_enable");
  if (!shm_file_.empty()) track_shm_file(shm_file_);

  // Exchange addresses: every rank publishes its own, then inserts all of
  // them in rank order so that fi_addr i is rank i.
  char name[256];
  size_t namelen = sizeof(name);
  check(fi_getname(&ep_->fid, name, &namelen), "fi_getname");
  std::string key = "ofi" + std::to_string(group_index);
  boot.put(key, to_hex(name, namelen));
  // The message key and the job token travel wrapped (key_exchange.hpp):
  // the store holds public values and wrapped secrets only.
  const std::string dh_key = "ofidh" + std::to_string(group_index);
  const std::string wrap_key = "ofiwrap" + std::to_string(group_index) + ".";
  const bool exchange = authenticate || plan.job_token;
  std::unique_ptr<key_exchange> kx;
  if (exchange) {
    kx = std::make_unique<key_exchange>();
    boot.put(dh_key, to_hex(kx->public_value(), key_exchange::public_bytes));
  }
  // Peers that die: on a local-only provider every peer is a process of
  // this host, watched by its pid (check_pids).
  const std::string pid_key = "ofipid" + std::to_string(group_index);
  const bool watch_pids = local_only && s.report_evidence != nullptr;
  if (watch_pids) boot.put(pid_key, std::to_string(getpid()));
  boot.fence();
  // secret: message key (two words), job token (the third's low half).
  uint64_t secret[key_exchange::words] = {};
  if (exchange) {
    if (boot.rank() == 0) {
      secret[0] = random_bits();
      secret[1] = random_bits();
      while (static_cast<uint32_t>(secret[2]) == 0) secret[2] = static_cast<uint32_t>(random_bits());
      for (int r = 1; r < boot.size(); ++r) {
        uint64_t w[key_exchange::words];
        if (!kx->pad(from_hex(boot.get(r, dh_key)), r, w))
          fatal("libfabric: malformed key-exchange value from rank %d", r);
        for (size_t j = 0; j < key_exchange::words; ++j) w[j] ^= secret[j];
        boot.put(wrap_key + std::to_string(r), to_hex(w, sizeof(w)));
      }
    }
    boot.fence();
    if (boot.rank() != 0) {
      const std::vector<unsigned char> w = from_hex(boot.get(0, wrap_key + std::to_string(boot.rank())));
      uint64_t pad[key_exchange::words];
      if (w.size() != sizeof(secret) || !kx->pad(from_hex(boot.get(0, dh_key)), boot.rank(), pad))
        fatal("libfabric: malformed key-exchange value from rank 0");
      memcpy(secret, w.data(), sizeof(secret));
      for (size_t j = 0; j < key_exchange::words; ++j) secret[j] ^= pad[j];
      if (static_cast<uint32_t>(secret[2]) == 0 || secret[2] >> 32 != 0)
        fatal("libfabric: the job's secret from rank 0 did not unwrap (a key-exchange value was "
              "replaced in the launcher's key-value store)");
    }
    kx.reset();
  }
  addrs_.resize(static_cast<size_t>(boot.size()));
  const std::vector<std::string> addresses = boot.get_all(key);
  for (int r = 0; r < boot.size(); ++r) {
    std::vector<unsigned char> addr = from_hex(addresses[static_cast<size_t>(r)]);
    if (s.report_evidence && (info_->addr_format == FI_SOCKADDR_IN ||
                          info_->addr_format == FI_SOCKADDR_IN6)) {
      probe_addrs_.resize(static_cast<size_t>(boot.size()));
      memcpy(&probe_addrs_[static_cast<size_t>(r)], addr.data(),
             std::min(addr.size(), sizeof(sockaddr_storage)));
    }
    int n = fi_av_insert(av_, addr.data(), 1, &addrs_[static_cast<size_t>(r)], 0, nullptr);
    if (n != 1) fatal("libfabric: fi_av_insert of rank %d's address failed (%d)", r, n);
    // A table address vector numbers entries in insertion order: the
    // FI_SOURCE address of a message is its sender's rank.
    if (source_from_provider_ && addrs_[static_cast<size_t>(r)] != static_cast<fi_addr_t>(r))
      fatal("libfabric: rank %d's address got index %llu", r,
            static_cast<unsigned long long>(addrs_[static_cast<size_t>(r)]));
  }
  nranks_ = static_cast<fi_addr_t>(boot.size());
  if (watch_pids) {
    watch_pids_ = true;
    pids_.assign(static_cast<size_t>(boot.size()), 0);
    pidfds_.assign(static_cast<size_t>(boot.size()), -1);
    const std::vector<std::string> pids = boot.get_all(pid_key);
    for (int r = 0; r < boot.size(); ++r) {
      if (r == boot.rank()) continue;
      const std::string& v = pids[static_cast<size_t>(r)];
      char* end = nullptr;
      const long pid = strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || pid <= 1 || pid > INT32_MAX)
        fatal("libfabric: malformed pid from rank %d", r);
      pids_[static_cast<size_t>(r)] = static_cast<int>(pid);
      pidfds_[static_cast<size_t>(r)] = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    }
  }
  if (authenticate) {
    auth_ = std::make_unique<message_auth>(secret[0], secret[1], boot.rank(), boot.size());
    watch_.resize(static_cast<size_t>(boot.size()));
    outbound_.resize(static_cast<size_t>(boot.size()));
    soft_ = s.ofi_rma_messages;
  }
  heartbeat_grace_ns_ = static_cast<int64_t>(s.ofi_heartbeat_grace_s) * 1000000000;
  is_failed_ = s.is_failed;
  is_suspected_ = s.is_suspected;
  test_fail_sends_ = s.test_fail_sends;
  test_lose_sends_ = s.test_lose_sends;
  report_ = s.report_evidence;
  if (soft_) {
    soft_setup(s.max_payload);
    check(fi_mr_reg(domain_, staging_.data(), staging_.size(), FI_SEND, 0,
                    mr_prov_key_ ? 0 : random_bits(), 0, &staging_mr_, nullptr),
          "fi_mr_reg(staging)");
    if (mr_endpoint_) {
      check(fi_mr_bind(staging_mr_, &ep_->fid, 0), "fi_mr_bind(staging)");
      check(fi_mr_enable(staging_mr_), "fi_mr_enable(staging)");
    }
  }
  if (plan.job_token) {
    token_bits_ = secret[2] << 32;
    high_bits_ = token_bits_;
  } else if (!source_from_provider_) {
    high_bits_ = static_cast<uint64_t>(static_cast<uint32_t>(boot.rank())) << 32;
  }
  LCI_LOG(info, "libfabric device %d: sender identified by %s", group_index,
          source_from_provider_
              ? (plan.job_token ? "the provider (FI_SOURCE) and the job token"
                                : "the provider (FI_SOURCE), without a job token (4-byte data)")
              : "the rank the sender claims (the provider has no FI_SOURCE)");
  LCI_LOG(info, "libfabric device %d: messages %s", group_index,
          !auth_ ? "not authenticated (a local-only provider)"
          : soft_ ? "authenticated (SipHash-2-4 tag and sequence number under a per-job key); "
                    "puts and gets travel as authenticated messages"
                  : "authenticated (SipHash-2-4 tag and sequence number under a per-job key); "
                    "puts and gets use the provider's RDMA (LCI_OFI_RMA_MESSAGES=0: its "
                    "requests carry registration keys in clear)");
  LCI_LOG(info, "libfabric device %d on provider %s (inject %zu, rx queue %zu, max message %zu)",
          group_index, provider_.c_str(), max_inject_, rx_size_, max_msg_size_);
}

ofi_device::~ofi_device() {
  for (int fd : pidfds_)
    if (fd >= 0) ::close(fd);
  // Reverse order of creation; a failure here is reported and ignored.
  auto close = [](fid* f, const char* what) {
    if (!f) return;
    int rc = fi_close(f);
    if (rc) LCI_WARN("libfabric: closing the %s failed: %s", what, fi_strerror(-rc));
  };
  close(ep_ ? &ep_->fid : nullptr, "endpoint");
  close(staging_mr_ ? &staging_mr_->fid : nullptr, "staging registration");
  // Closing the endpoint removed its /dev/shm file.
  if (!shm_file_.empty()) untrack_shm_file(shm_file_);
  close(av_ ? &av_->fid : nullptr, "address vector");
  close(cq_ ? &cq_->fid : nullptr, "completion queue");
  close(domain_ ? &domain_->fid : nullptr, "domain");
  close(fabric_ ? &fabric_->fid : nullptr, "fabric");
  if (info_) fi_freeinfo(info_);
}

void ofi_device::peers_attached() {
  if (shm_file_.empty()) return;
  if (shm_unlink(shm_file_.c_str()) != 0)
    LCI_WARN("libfabric: cannot unlink /dev/shm/%s: %s", shm_file_.c_str(), strerror(errno));
  untrack_shm_file(shm_file_);
  shm_file_.clear();
}

net::mr ofi_device::register_memory(void* addr, size_t len, net::mr_access access) {
  if (soft_ && access == net::mr_access::remote && !mr_local_) {
    // Peers reach the memory only through soft_rma.hpp, and local
    // operations need no descriptor: the provider is not told about it at
    // all (a provider registration, even without remote access flags, can
    // answer a remote read with its key on some providers).
    net::mr out;
    out.handle = this;
    out.rkey = regs_->insert(reinterpret_cast<uintptr_t>(addr), len);
    return out;
  }
  // A source is only sent from and written from (no FI_RECV/FI_READ: a
  // provider that pins may then register read-only memory).
  uint64_t flags = FI_SEND | FI_WRITE;
  if (access != net::mr_access::source) flags |= FI_RECV | FI_READ;
  // With authentication peers reach memory only through soft_rma.hpp: the
  // provider gets no remote access to give away.
  if (access == net::mr_access::remote && !soft_) flags |= FI_REMOTE_READ | FI_REMOTE_WRITE;
  // Where the application chooses keys, random ones: a peer (or a process
  // outside the job) cannot guess a key it was not sent.
  const uint64_t key_mask = mr_key_size_ >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * mr_key_size_)) - 1;
  fid_mr* m = nullptr;
  int rc = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const uint64_t key = mr_prov_key_ ? 0 : random_bits() & key_mask;
    rc = fi_mr_reg(domain_, addr, len, flags, 0, key, 0, &m, nullptr);
    if (rc != -FI_ENOKEY || mr_prov_key_) break;  // else: the key is taken, draw another
  }
  if (rc) {
    LCI_LOG(info, "libfabric: fi_mr_reg(%p, %zu bytes) failed: %s", addr, len, fi_strerror(-rc));
    return net::mr{};
  }
  if (mr_endpoint_) {
    rc = fi_mr_bind(m, &ep_->fid, 0);
    if (!rc) rc = fi_mr_enable(m);
    if (rc) {
      LCI_LOG(info, "libfabric: enabling the registration of %p (%zu bytes) failed: %s", addr,
              len, fi_strerror(-rc));
      fi_close(&m->fid);
      return net::mr{};
    }
  }
  net::mr out;
  out.handle = m;
  out.desc = fi_mr_desc(m);
  out.rkey = fi_mr_key(m);
  if (soft_) {
    // Only keys of this backend's table reach memory; other registrations
    // give peers no key at all.
    out.rkey = access == net::mr_access::remote ? regs_->insert(reinterpret_cast<uintptr_t>(addr), len)
                                                : 0;
  }
  return out;
}

uint64_t ofi_device::provider_key(const net::mr& m) const {
  return m.handle && m.handle != this ? fi_mr_key(static_cast<fid_mr*>(m.handle)) : 0;
}

void ofi_device::deregister_memory(net::mr& m) {
  if (!m.handle) return;
  // Waits for a peer's copy into or out of the memory in progress.
  if (soft_ && m.rkey) regs_->erase(m.rkey);
  if (m.handle == this) {  // in the table only
    m = net::mr{};
    return;
  }
  int rc = fi_close(&static_cast<fid_mr*>(m.handle)->fid);
  if (rc) LCI_WARN("libfabric: fi_close(mr) failed: %s", fi_strerror(-rc));
  m = net::mr{};
}

status ofi_device::on_post_error(const char* call, ssize_t rc) {
  if (rc == -FI_EAGAIN) return status::retry;
  fatal("libfabric: %s failed: %s (%zd)", call, fi_strerror(static_cast<int>(-rc)), rc);
}

status ofi_device::inject_sealed(int rank, const void* buf, size_t len, uint32_t imm) {
  message_auth::sender s(*auth_, rank);
  if (!s.locked()) return status::retry;
  return inject_sealed_locked(s, rank, buf, len, imm);
}

status ofi_device::inject_sealed_locked(message_auth::sender& s, int rank, const void* buf,
                                        size_t len, uint32_t imm) {
  char staged[sealed_inject_limit];
  if (len) memcpy(staged, buf, len);
  auth_->seal(rank, imm, staged, len, s.seq());
  if (test_hit(test_lose_sends_)) {  // no completion to report: inject
    s.commit();
    return status::ok;
  }
  net::annotate_post(this);
  ssize_t rc = fi_injectdata(ep_, staged, len + message_auth::trailer_bytes, make_data(imm),
                             addrs_[rank]);
  if (rc == 0) {
    s.commit();
    return status::ok;
  }
  return on_post_error("fi_injectdata", rc);
}

status ofi_device::post_send_sealed(int rank, const void* buf, size_t len, void* desc,
                                    uint32_t imm, void* ctx) {
  message_auth::sender s(*auth_, rank);
  if (!s.locked()) return status::retry;
  if (test_hit(test_fail_sends_)) {
    s.commit();  // it took its number, as a send that failed after its post
    test_complete(ctx, completion_kind::failed);
    return status::ok;
  }
  // The trailer goes in the buffer's room past the message (a packet's
  // slack); those bytes are put back if the post is refused.
  char* at = static_cast<char*>(const_cast<void*>(buf)) + len;
  char saved[message_auth::trailer_bytes];
  memcpy(saved, at, sizeof(saved));
  auth_->seal(rank, imm, const_cast<void*>(buf), len, s.seq());
  if (test_hit(test_lose_sends_)) {
    s.commit();
    test_complete(ctx, completion_kind::send_done);
    return status::ok;
  }
  net::annotate_post(this);
  ssize_t rc = fi_senddata(ep_, buf, len + message_auth::trailer_bytes, desc, make_data(imm),
                           addrs_[rank], ctx);
  if (rc == 0) {
    s.commit();
    return status::ok;
  }
  memcpy(at, saved, sizeof(saved));
  return on_post_error("fi_senddata", rc);
}

status ofi_device::post_recv_sealed(void* buf, size_t len, void* desc, void* ctx) {
  // Room for the trailer: the packet's slack.
  net::annotate_post(this);
  ssize_t rc = fi_recv(ep_, buf, len + message_auth::trailer_bytes, desc, FI_ADDR_UNSPEC, ctx);
  if (__builtin_expect(rc == 0, 1)) {
    rx_posted_.fetch_add(1, std::memory_order_relaxed);
    return status::ok;
  }
  return on_post_error("fi_recv", rc);
}

status ofi_device::send_own_locked(message_auth::sender& s, int rank, own_kind k,
                                   const rma_header& h) {
  return inject_sealed_locked(s, rank, &h, sizeof h, own_imm(k));
}

status ofi_device::post_own_locked(message_auth::sender& s, int rank, own_kind k, char* staged,
                                   size_t len) {
  const uint32_t imm = own_imm(k);
  auth_->seal(rank, imm, staged, len, s.seq());
  net::annotate_post(this);
  ssize_t rc = fi_senddata(ep_, staged, len + message_auth::trailer_bytes, fi_mr_desc(staging_mr_),
                           make_data(imm), addrs_[rank], staged);
  if (rc == 0) {
    s.commit();
    return status::ok;
  }
  return on_post_error("fi_senddata", rc);
}

int ofi_device::poll_sealed(completion* out, int max, const fi_cq_data_entry* entries,
                            const fi_addr_t* sources, ssize_t n) {
  if (__builtin_expect((++polls_ & 255) == 0, 0)) send_heartbeats();
  if (__builtin_expect((polls_ & 255) == 0 && report_ != nullptr, 0)) check_suspects();
  int j = 0;
  uint64_t received = 0;
  if (n < 0) {
    if (n != -FI_EAGAIN) j = read_error(out, n);
  } else {
    for (ssize_t i = 0; i < n; ++i) {
      const fi_cq_data_entry& e = entries[i];
      if (!(e.flags & (FI_RECV | FI_REMOTE_WRITE | FI_WRITE | FI_READ))) {
        const int b = soft_ ? staging_index(e.op_context) : -1;
        if (b >= 0) {  // a piece of soft_rma left: its buffer is free again
          staging_give(b);
          continue;
        }
      }
      received += convert<true>(e, sources + i, out[j++]);
    }
  }
  count_received(received);
  if (__builtin_expect(test_done_any_.load(std::memory_order_relaxed), 0) && j < max) {
    std::lock_guard<std::mutex> g(held_lock_);
    while (!test_done_.empty() && j < max) {
      completion& c = out[j++];
      c = completion{};
      c.kind = test_done_.back().second;
      c.ctx = test_done_.back().first;
      if (c.kind == completion_kind::failed) c.error = FI_ECONNRESET;
      test_done_.pop_back();
    }
    test_done_any_.store(!test_done_.empty(), std::memory_order_relaxed);
  }
  if (!soft_) return j;
  if (soft_pending_.any()) soft_resume();
  if (j < max && (ops_->any_finished() || refused_.load(std::memory_order_relaxed) != refused_told_))
    j += soft_completions(out + j, max - j);
  return j;
}

void ofi_device::admit_sealed(completion& c, const void* buf) {
  if (c.src_rank < 0 || static_cast<fi_addr_t>(c.src_rank) >= nranks_) return;
  if (__builtin_expect(source_from_provider_, 1)) {
    c.admission = auth_->admit(c.src_rank, buf, c.length) ? admitted_new : admitted_stale;
    return;
  }
  const char* why = nullptr;
  switch (auth_->open(c.src_rank, c.imm, buf, c.length, &why)) {
    case message_auth::verdict::accepted: c.admission = opened_accepted; break;
    case message_auth::verdict::duplicate: c.admission = opened_duplicate; break;
    case message_auth::verdict::forged:
      // The rank is only the sender's claim: nothing ties it to rank N.
      c.src_rank = net::bad_token;
      break;
  }
}

bool ofi_device::open_sealed(completion& c, const void* buf) {
  // Not from a member (unknown address, bad token): the core drops it.
  if (c.src_rank < 0 || static_cast<fi_addr_t>(c.src_rank) >= nranks_) return true;
  const char* why = nullptr;
  message_auth::verdict v;
  switch (c.admission) {
    case admitted_new:
    case admitted_stale:
      v = auth_->check(c.src_rank, c.imm, buf, c.length, c.admission == admitted_new, &why);
      break;
    case opened_accepted: v = message_auth::verdict::accepted; break;
    case opened_duplicate: v = message_auth::verdict::duplicate; break;
    default: fatal("libfabric: a received message was not admitted before it was opened");
  }
  if (__builtin_expect(v == message_auth::verdict::accepted, 1)) {
    c.length -= message_auth::trailer_bytes;
    if (__builtin_expect(is_own_imm(c.imm), 0)) {
      // A rank declared dead reaches no memory here any more: its puts and
      // gets (and anything else of the backend's own) are not acted on.
      if (is_failed_ && is_failed_(c.src_rank)) return false;
      if (c.imm == heartbeat_imm) {
        // Authentic: a suspected peer is alive (peer_failure.hpp).
        if (report_ && is_suspected_(c.src_rank))
          report_(c.src_rank, net::evidence::authentic_message, "its heartbeat arrived");
        if (c.length == heartbeat_bytes) on_heartbeat(c.src_rank, buf);
      } else if (soft_) {
        on_own_message(c.src_rank, c.imm, static_cast<const char*>(buf), c.length);
      } else {
        fatal("libfabric: rank %d sends puts and gets as messages (LCI_OFI_RMA_MESSAGES=1) and "
              "this rank does not: every rank must use the same setting", c.src_rank);
      }
      return false;
    }
    return true;
  }
  if (v == message_auth::verdict::duplicate) {
    note_duplicate(c.src_rank);
    return false;
  }
  fatal("libfabric: a message on the connection from rank %d failed authentication (%s): the "
        "connection to rank %d was taken over or corrupted (provider %s)",
        c.src_rank, why, c.src_rank, provider_.c_str());
}

void ofi_device::note_duplicate(int src) {
  // Authentic, so sent by the peer once: the provider or a replay delivered
  // it again. Counted (the state dump); the first one is worth a warning.
  if (!duplicate_warned_.exchange(true, std::memory_order_relaxed))
    LCI_WARN("libfabric: dropped a duplicate of an authenticated message from rank %d "
             "(delivered again by the provider, or replayed); later ones are counted in the "
             "state dump", src);
}

void ofi_device::send_heartbeats() {
  const int64_t now = now_ns();
  // Called every 256 polls: a longer pause means this rank did not
  // progress steadily (it computed, or progresses slowly), and what it
  // posted may have waited in its own queue meanwhile.
  if (now - last_beat_check_ns_ > 2 * heartbeat_period_ns)
    progress_gap_end_ns_.store(now, std::memory_order_relaxed);
  last_beat_check_ns_ = now;
  if (now < next_heartbeat_ns_ || closing_.load(std::memory_order_relaxed)) return;
  next_heartbeat_ns_ = now + heartbeat_period_ns;
  const uint64_t starved = rx_posted_.load(std::memory_order_relaxed) <= 0;
  for (int r = 0; r < auth_->nranks(); ++r) {
    if (r == auth_->self() || (auth_->sent_to(r) == 0 && auth_->received_from(r) == 0)) continue;
    if (is_failed_ && is_failed_(r)) continue;  // LCI_PEER_FAILURE=continue: known dead
    // Read before the heartbeat takes its sequence number: it counts only
    // messages posted before it.
    const uint64_t beat[5] = {auth_->sent_to(r), auth_->received_from(r),
                              static_cast<uint64_t>(now), starved, auth_->withdrawn_to(r)};
    // A refusal (queue full, the peer's send lock busy) skips this round;
    // with LCI_PEER_FAILURE=continue it also asks whether the peer is gone
    // (tcp;ofi_rxm refuses every send to a dead peer, for ever).
    if (inject_sealed(r, beat, sizeof beat, heartbeat_imm) != status::ok && report_ &&
        peer_gone(r))
      report_(r, net::evidence::listener_refuses,
              "its connection was reset and its listening port refuses connections");
  }
}

bool ofi_device::pid_exited(int rank) const {
  return process_exited(pids_[static_cast<size_t>(rank)], pidfds_[static_cast<size_t>(rank)]);
}

void ofi_device::check_pids() {
  // Not once teardown began: a peer that closed its device may exit then.
  if ((++pid_polls_ & 255) != 0) return;
  const int64_t now = now_ns();
  if (now < next_pid_check_ns_ || closing_.load(std::memory_order_relaxed)) return;
  next_pid_check_ns_ = now + 100000000;
  for (size_t r = 0; r < pids_.size(); ++r) {
    if (pids_[r] == 0 || (is_failed_ && is_failed_(static_cast<int>(r)))) continue;
    if (pid_exited(static_cast<int>(r)))
      report_(static_cast<int>(r), net::evidence::pid_gone,
              "its process exited without closing its device");
  }
}

bool ofi_device::peer_gone(int rank) const {
  if (!pids_.empty()) return pid_exited(rank);
  if (probe_addrs_.empty()) return false;
  const sockaddr_storage& a = probe_addrs_[static_cast<size_t>(rank)];
  const socklen_t len = a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const int fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int err = connect(fd, reinterpret_cast<const sockaddr*>(&a), len) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    // A live peer's listener accepts at once on a reachable host; no answer
    // within the wait is no proof of death.
    pollfd p{fd, POLLOUT, 0};
    err = ETIMEDOUT;
    if (::poll(&p, 1, 200) == 1) {
      socklen_t l = sizeof(err);
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0) err = errno;
    }
  }
  close(fd);
  return err == ECONNREFUSED;
}

void ofi_device::check_suspects() {
  const int64_t now = now_ns();
  if (now < next_suspect_check_ns_ || closing_.load(std::memory_order_relaxed)) return;
  next_suspect_check_ns_ = now + 200000000;
  // Each suspected peer is probed: its listening port refuses connections
  // once its process is gone (death); otherwise its silence is reported,
  // which confirms death after the grace period (peer_failure.hpp). The
  // heartbeats (send_heartbeats) go on meanwhile: a live peer's answer ends
  // the suspicion, and a send makes the provider connect again.
  const bool probe = !probes_stopped_.load(std::memory_order_relaxed);
  for (int r = 0; probe && r < static_cast<int>(nranks_); ++r) {
    if (!is_suspected_(r)) continue;
    if (peer_gone(r))
      report_(r, net::evidence::listener_refuses,
              "its connection broke and its listening port refuses connections");
    else
      report_(r, net::evidence::still_silent, "its listening port still accepts connections");
  }
  // Pieces of RDMA transfers whose send failed: again to a peer that is
  // alive, given back for a dead one (its operations fail in forget_peer).
  std::vector<int> pieces;
  {
    std::lock_guard<std::mutex> g(held_lock_);
    if (held_pieces_.empty()) return;
    pieces.swap(held_pieces_);
  }
  std::vector<int> keep;
  for (int b : pieces) {
    const int rank = staging_rank_[static_cast<size_t>(b)];
    if (is_failed_(rank)) {
      staging_give(b);
      continue;
    }
    message_auth::sender s(*auth_, rank);
    char* at = staging_.data() + static_cast<size_t>(b) * staging_size_;
    rma_header h;
    memcpy(&h, at, sizeof h);
    if (is_suspected_(rank) || !s.locked() ||
        post_own_locked(s, rank, static_cast<own_kind>(staging_kind_[static_cast<size_t>(b)]), at,
                        sizeof h + h.length) != status::ok)
      keep.push_back(b);
  }
  if (!keep.empty()) {
    std::lock_guard<std::mutex> g(held_lock_);
    held_pieces_.insert(held_pieces_.end(), keep.begin(), keep.end());
  }
}

void ofi_device::forget_peer(int rank) {
  if (!soft_) return;
  rma_peer& p = peers_[static_cast<size_t>(rank)];
  p.lock.lock();
  while (!p.work.empty()) {
    if (p.work.front().staged >= 0) staging_give(p.work.front().staged);
    p.work.pop_front();
  }
  p.lock.unlock();
  const int failed = ops_->fail_rank(rank);
  if (failed) LCI_LOG(info, "libfabric: %d put(s)/get(s) with the failed rank %d end", failed, rank);
}

void ofi_device::on_heartbeat(int src, const void* payload) {
  uint64_t beat[5];
  memcpy(beat, payload, sizeof beat);
  const uint64_t declared = beat[0], arrived = beat[1], withdrawn = beat[4];
  const int64_t peer_now = static_cast<int64_t>(beat[2]);
  const bool starved = beat[3] != 0;
  // A connection delivers in order, so when this heartbeat was admitted
  // every message src posted before it had been (admission runs in
  // delivery order under the poll lock, whichever thread checks the
  // message after): a sequence number passed over and never admitted is
  // a message lost, unless src withdrew it (its send failed before it
  // left; it goes again with a new number). However slowly either rank
  // progresses, and whatever other progress threads are still checking.
  // Judged at each heartbeat anew: a send src withdrew after this
  // heartbeat left is passed over here before a heartbeat says so.
  const uint64_t passed = auth_->passed_over_from(src);
  const uint64_t lost = passed > withdrawn ? passed - withdrawn : 0;
  const int64_t now = now_ns();
  std::lock_guard<std::mutex> g(watch_lock_);
  watch& w = watch_[static_cast<size_t>(src)];
  if (lost == 0) {
    w = watch{};
  } else if (w.since_ns == 0) {
    w = {now, lost, 0};
  } else if (++w.beats >= heartbeat_short_beats && now - w.since_ns >= heartbeat_grace_ns_) {
    // Later messages arrived, earlier ones did not: lost on the way. No
    // forged tag proves a takeover here.
    fatal("libfabric: every heartbeat of rank %d for %lld s found messages of its missing: %llu "
          "of the %llu it had sent this rank before the last one never arrived, although later "
          "ones did: messages on the connection from rank %d were lost (provider %s; "
          "LCI_OFI_HEARTBEAT_GRACE=%lld)",
          src, static_cast<long long>((now - w.since_ns) / 1000000000),
          static_cast<unsigned long long>(lost), static_cast<unsigned long long>(declared), src,
          provider_.c_str(), static_cast<long long>(heartbeat_grace_ns_ / 1000000000));
  }
  // What arrives of this rank's messages at src, which may receive nothing
  // at all any more (its heartbeats still come). Liveness is progress: the
  // watch starts over whenever src received more of them, has all those
  // sent by the watch's start, had no receive buffers posted, or this rank
  // did not progress steadily lately (its messages may have waited in its
  // own queue, and src's heartbeats may come late, behind src's messages).
  // Judged only over `grace` on both clocks and two more heartbeats.
  outbound_watch& o = outbound_[static_cast<size_t>(src)];
  const int64_t gap_end = progress_gap_end_ns_.load(std::memory_order_relaxed);
  if (o.since_ns == 0 || starved || arrived >= o.sent || arrived != o.arrived ||
      gap_end > o.since_ns || now - gap_end < 2 * heartbeat_grace_ns_) {
    o = {now, peer_now, auth_->sent_to(src), arrived, 0, now};
    return;
  }
  o.last_ns = now;
  if (++o.beats < heartbeat_short_beats || now - o.since_ns < heartbeat_grace_ns_ ||
      peer_now - o.since_peer_ns < heartbeat_grace_ns_)
    return;
  fatal("libfabric: rank %d kept progressing (its heartbeats arrive) but received none of this "
        "rank's messages for %lld s (it has %llu of them, %llu were sent when the wait began): "
        "messages on the connection to rank %d are lost (provider %s; LCI_OFI_HEARTBEAT_GRACE=%lld)",
        src, static_cast<long long>((now - o.since_ns) / 1000000000),
        static_cast<unsigned long long>(arrived), static_cast<unsigned long long>(o.sent), src,
        provider_.c_str(), static_cast<long long>(heartbeat_grace_ns_ / 1000000000));
}

void ofi_device::check_delivery(bootstrap::bootstrap& boot,
                                const std::function<void()>& progress,
                                const std::function<bool(int)>& failed) {
  // No more heartbeats: the counts published below are final (one racing
  // heartbeat only makes a peer receive more than it expects). No more
  // checks of the peers' pids either: after the barrier before this call a
  // peer may close its device and exit.
  closing_.store(true, std::memory_order_relaxed);
  // A peer's liveness probe (peer_gone; only with LCI_PEER_FAILURE=continue)
  // from before the barrier (the peer stopped probing in begin_close) is a
  // connection to this rank's listener that the peer has closed; the tcp
  // provider frees what it holds for it only when its connection progress
  // reads the close (libfabric 1.17 does not when the endpoint closes
  // first), which ofi_rxm runs from CQ reads at most every 10 ms
  // (FI_OFI_RXM_CM_PROGRESS_INTERVAL): 30 ms of progress.
  if (!probe_addrs_.empty() && report_) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    while (std::chrono::steady_clock::now() < end) progress();
  }
  if (!auth_) return;
  const int n = boot.size(), self = boot.rank();
  const std::string key =
      "ofisent" + std::to_string(group_index_) + "." + std::to_string(check_rounds_++);
  std::vector<uint64_t> sent(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) sent[static_cast<size_t>(r)] = auth_->sent_to(r);
  // Only the peers this rank sent to, in values short enough for any PMI
  // server (sent_counts.hpp): a rank that talks to k peers writes O(k).
  const std::vector<std::string> values = encode_sent_counts(sent);
  for (size_t i = 0; i < values.size(); ++i) boot.put(key + "." + std::to_string(i), values[i]);
  boot.fence();
  std::vector<uint64_t> expected(static_cast<size_t>(n));
  // Every rank's first value at once where every rank published one.
  bool any_failed = false;
  for (int r = 0; r < n; ++r) any_failed = any_failed || failed(r);
  std::vector<std::string> firsts;
  if (!any_failed) firsts = boot.get_all(key + ".0");
  for (int r = 0; r < n; ++r) {
    if (failed(r)) continue;  // a dead peer published nothing (expected stays 0)
    std::vector<std::string> theirs{any_failed ? boot.get(r, key + ".0")
                                               : firsts[static_cast<size_t>(r)]};
    const size_t count = sent_count_values(theirs[0], n);
    for (size_t i = 1; i < count; ++i) theirs.push_back(boot.get(r, key + "." + std::to_string(i)));
    if (count == 0 || !sent_count_to(theirs, n, self, &expected[static_cast<size_t>(r)]))
      fatal("libfabric: malformed message count from rank %d", r);
  }
  // Messages a peer sent before it stopped may still be in the provider:
  // progress (bounded) until they are in.
  auto short_of = [&]() {
    for (int r = 0; r < n; ++r)
      if (auth_->received_from(r) < expected[static_cast<size_t>(r)]) return r;
    return -1;
  };
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int r;
  while ((r = short_of()) >= 0 && std::chrono::steady_clock::now() < end) progress();
  if (r < 0) return;
  fatal("libfabric: rank %d sent %llu authenticated messages to this rank on device %d, %llu "
        "arrived: messages on the connection from rank %d were lost (provider %s)",
        r, static_cast<unsigned long long>(expected[static_cast<size_t>(r)]), group_index_,
        static_cast<unsigned long long>(auth_->received_from(r)), r, provider_.c_str());
}

int ofi_device::read_error(completion* out, ssize_t rc) {
  if (rc != -FI_EAVAIL)
    fatal("libfabric: fi_cq_read failed: %s (%zd)", fi_strerror(static_cast<int>(-rc)), rc);
  fi_cq_err_entry err{};
  if (fi_cq_readerr(cq_, &err, 0) != 1) return 0;
  // A failed receive whose buffer the core posts again: a message longer
  // than the buffer (from a broken or hostile sender), or, with
  // LCI_PEER_FAILURE=continue, one the provider ended because a connection
  // broke (a peer died or was reset mid-message; which peer is not said:
  // its death is established by its own evidence, such as failed sends, its
  // listener or its pid). Any other failed receive means a broken endpoint.
  // A failed send or RDMA is reported to the operation that posted it.
  const bool broke = err.err == FI_ECONNRESET || err.err == FI_ENOTCONN || err.err == EPIPE ||
                     err.err == FI_ECONNABORTED;
  if ((err.flags & FI_RECV) && err.op_context && (err.err == FI_ETRUNC || (broke && report_))) {
    count_received(1);
    out->kind = completion_kind::recv_failed;
    out->ctx = err.op_context;
    out->error = err.err;
    out->imm = 0;
    out->src_rank = net::unknown_source;
    out->length = 0;
    return 1;
  }
  if (soft_) {
    const int b = staging_index(err.op_context);
    if (b >= 0) {
      const int rank = staging_rank_[static_cast<size_t>(b)];
      if (!report_)
        fatal("libfabric: sending a piece of an RDMA transfer to rank %d failed: %s; the "
              "connection to rank %d was taken over or lost (provider %s)",
              rank, fi_strerror(err.err), rank, provider_.c_str());
      // LCI_PEER_FAILURE=continue: the peer is suspected; the piece is sent
      // again once it proved alive (check_suspects), or its operation fails
      // when the core sweeps it dead (forget_peer).
      auth_->withdraw(rank);  // sent again with a new number
      report_(rank, net::evidence::connection_broke,
              "a piece of an RDMA transfer to it failed: its connection broke");
      std::lock_guard<std::mutex> g(held_lock_);
      held_pieces_.push_back(b);
      return 0;
    }
  }
  if ((err.flags & FI_RECV) || !err.op_context)
    fatal("libfabric: receive failed: %s (provider: %s)", fi_strerror(err.err),
          fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0));
  LCI_LOG(info, "libfabric: operation failed: %s (provider: %s)", fi_strerror(err.err),
          fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0));
  out->kind = completion_kind::failed;
  out->ctx = err.op_context;
  out->error = err.err;
  out->imm = 0;
  out->src_rank = -1;
  out->length = 0;
  return 1;
}

}  // namespace lci::ofi
