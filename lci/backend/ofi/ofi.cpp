// libfabric backend: set-up, address exchange, registration, error paths.
#include "lci/backend/ofi/ofi.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lci/backend/ofi/hints.hpp"
#include "lci/backend/ofi/shm_name.hpp"
#include "lci/core/log.hpp"

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

}  // namespace

ofi_device::ofi_device(bootstrap::bootstrap& boot, int group_index) {
  int rc = get_info(boot.name(), &info_);
  if (rc || !info_)
    fatal("libfabric: no provider offers reliable datagram endpoints with send/recv and RMA "
          "(fi_getinfo: %s); check FI_PROVIDER", fi_strerror(-rc));
  if (info_->domain_attr->cq_data_size < 8)
    fatal("libfabric: provider %s carries %zu bytes of immediate data, 8 are needed",
          info_->fabric_attr->prov_name, info_->domain_attr->cq_data_size);
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
  rx_size_ = info_->rx_attr->size;

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
  boot.fence();
  addrs_.resize(static_cast<size_t>(boot.size()));
  for (int r = 0; r < boot.size(); ++r) {
    std::vector<unsigned char> addr = from_hex(boot.get(r, key));
    int n = fi_av_insert(av_, addr.data(), 1, &addrs_[static_cast<size_t>(r)], 0, nullptr);
    if (n != 1) fatal("libfabric: fi_av_insert of rank %d's address failed (%d)", r, n);
  }
  rank_bits_ = static_cast<uint64_t>(static_cast<uint32_t>(boot.rank())) << 32;
  LCI_LOG(info, "libfabric device %d on provider %s (inject %zu, rx queue %zu)", group_index,
          provider_.c_str(), max_inject_, rx_size_);
}

ofi_device::~ofi_device() {
  // Reverse order of creation; a failure here is reported and ignored.
  auto close = [](fid* f, const char* what) {
    if (!f) return;
    int rc = fi_close(f);
    if (rc) LCI_WARN("libfabric: closing the %s failed: %s", what, fi_strerror(-rc));
  };
  close(ep_ ? &ep_->fid : nullptr, "endpoint");
  // Closing the endpoint removed its /dev/shm file.
  if (!shm_file_.empty()) untrack_shm_file(shm_file_);
  close(av_ ? &av_->fid : nullptr, "address vector");
  close(cq_ ? &cq_->fid : nullptr, "completion queue");
  close(domain_ ? &domain_->fid : nullptr, "domain");
  close(fabric_ ? &fabric_->fid : nullptr, "fabric");
  if (info_) fi_freeinfo(info_);
}

net::mr ofi_device::register_memory(void* addr, size_t len) {
  fid_mr* m = nullptr;
  uint64_t key = mr_prov_key_ ? 0 : __atomic_fetch_add(&next_key_, 1, __ATOMIC_RELAXED);
  uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  int rc = fi_mr_reg(domain_, addr, len, access, 0, key, 0, &m, nullptr);
  if (rc) fatal("libfabric: fi_mr_reg(%p, %zu bytes) failed: %s", addr, len, fi_strerror(-rc));
  if (mr_endpoint_) {
    check(fi_mr_bind(m, &ep_->fid, 0), "fi_mr_bind");
    check(fi_mr_enable(m), "fi_mr_enable");
  }
  net::mr out;
  out.handle = m;
  out.desc = fi_mr_desc(m);
  out.rkey = fi_mr_key(m);
  return out;
}

void ofi_device::deregister_memory(net::mr& m) {
  if (!m.handle) return;
  int rc = fi_close(&static_cast<fid_mr*>(m.handle)->fid);
  if (rc) LCI_WARN("libfabric: fi_close(mr) failed: %s", fi_strerror(-rc));
  m = net::mr{};
}

status ofi_device::on_post_error(const char* call, ssize_t rc) {
  if (rc == -FI_EAGAIN) return status::retry;
  fatal("libfabric: %s failed: %s (%zd)", call, fi_strerror(static_cast<int>(-rc)), rc);
}

int ofi_device::read_error(completion* out, ssize_t rc) {
  if (rc != -FI_EAVAIL)
    fatal("libfabric: fi_cq_read failed: %s (%zd)", fi_strerror(static_cast<int>(-rc)), rc);
  fi_cq_err_entry err{};
  if (fi_cq_readerr(cq_, &err, 0) != 1) return 0;
  // A failed receive means a broken endpoint; a failed send or RDMA is
  // reported to the operation that posted it.
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
