// ofi_common: the raw-libfabric benchmarks' shared endpoint set-up and
// error path (see ofi_common.hpp).
#include "ofi_common.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ofi_bench {

namespace {
const char* g_program = "ofi_bench";
lci::bootstrap::bootstrap* g_boot = nullptr;
}  // namespace

void set_program(const char* name) { g_program = name; }
void set_bootstrap(lci::bootstrap::bootstrap* boot) { g_boot = boot; }

void fail(const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (g_boot) g_boot->abort(1, std::string(g_program) + ": " + msg);
  std::fprintf(stderr, "%s: %s\n", g_program, msg);
  std::exit(1);
}

void check(int rc, const char* what) {
  if (rc) fail("%s failed: %s (%d)", what, fi_strerror(-rc), rc);
}

std::vector<unsigned char> from_hex(const std::string& s) {
  std::vector<unsigned char> out;
  if (lci::bootstrap::decode_hex(s, &out)) return out;
  fail("malformed bootstrap value '%s'", s.c_str());
}

rdm_base::rdm_base(int ranks, bool rma_caps) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG;
  if (rma_caps) hints->caps |= FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  hints->mode = 0;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  hints->tx_attr->op_flags = 0;
  int rc = fi_getinfo(FI_VERSION(1, 14), nullptr, nullptr, 0, hints, &info_);
  fi_freeinfo(hints);
  if (rc || !info_)
    fail("no provider offers RDM endpoints with FI_MSG%s (fi_getinfo: %s); check FI_PROVIDER",
         rma_caps ? " and FI_RMA" : "", fi_strerror(-rc));
  if (info_->domain_attr->cq_data_size < 8)
    fail("provider %s carries only %zu bytes of immediate data, 8 are needed",
         info_->fabric_attr->prov_name, info_->domain_attr->cq_data_size);
  provider_ = info_->fabric_attr->prov_name;
  inject_size_ = info_->tx_attr->inject_size;
  uint64_t mr_mode = info_->domain_attr->mr_mode;
  if (mr_mode == FI_MR_BASIC) mr_mode = FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
  prov_key_ = mr_mode & FI_MR_PROV_KEY;
  mr_endpoint_ = mr_mode & FI_MR_ENDPOINT;
  virt_addr_ = mr_mode & FI_MR_VIRT_ADDR;

  check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric");
  check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain");
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_NONE;
  check(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), "fi_cq_open");
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<size_t>(ranks);
  check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open");
  check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint");
  check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
  check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind(av)");
  check(fi_enable(ep_), "fi_enable");
}

rdm_base::~rdm_base() {
  auto close = [](fid* f, const char* what) {
    if (f && fi_close(f) != 0) std::fprintf(stderr, "%s: closing the %s failed\n", g_program, what);
  };
  close(ep_ ? &ep_->fid : nullptr, "endpoint");
  for (auto it = mrs_.rbegin(); it != mrs_.rend(); ++it) close(&(*it)->fid, "memory registration");
  close(av_ ? &av_->fid : nullptr, "address vector");
  close(cq_ ? &cq_->fid : nullptr, "completion queue");
  close(domain_ ? &domain_->fid : nullptr, "domain");
  close(fabric_ ? &fabric_->fid : nullptr, "fabric");
  for (void* b : buffers_) std::free(b);
  if (info_) fi_freeinfo(info_);
}

void* rdm_base::allocate(size_t bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(4096, rounded);
  if (!p) fail("cannot allocate %zu bytes of buffers", rounded);
  std::memset(p, 0, rounded);
  buffers_.push_back(p);
  return p;
}

fid_mr* rdm_base::register_buffer(void* buf, size_t len, uint64_t access,
                                  uint64_t requested_key) {
  fid_mr* mr = nullptr;
  check(fi_mr_reg(domain_, buf, len, access, 0, prov_key_ ? 0 : requested_key, 0, &mr, nullptr),
        "fi_mr_reg");
  mrs_.push_back(mr);
  if (mr_endpoint_) {
    check(fi_mr_bind(mr, &ep_->fid, 0), "fi_mr_bind");
    check(fi_mr_enable(mr), "fi_mr_enable");
  }
  return mr;
}

void rdm_base::exchange_addresses(lci::bootstrap::bootstrap& boot, const std::string& key) {
  char name[256];
  size_t namelen = sizeof(name);
  check(fi_getname(&ep_->fid, name, &namelen), "fi_getname");
  boot.put(key, to_hex(name, namelen));
  boot.fence();
  addrs_.resize(static_cast<size_t>(boot.size()));
  for (int r = 0; r < boot.size(); ++r) {
    std::vector<unsigned char> a = from_hex(boot.get(r, key));
    if (fi_av_insert(av_, a.data(), 1, &addrs_[static_cast<size_t>(r)], 0, nullptr) != 1)
      fail("fi_av_insert of rank %d's address failed", r);
  }
  rank_bits_ = static_cast<uint64_t>(static_cast<uint32_t>(boot.rank())) << 32;
}

void rdm_base::cq_error(ssize_t rc) {
  if (rc == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    fi_cq_readerr(cq_, &err, 0);
    fail("operation failed: %s (%s)", fi_strerror(err.err),
         fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0));
  }
  fail("fi_cq_read: %s", fi_strerror(static_cast<int>(-rc)));
}

}  // namespace ofi_bench
