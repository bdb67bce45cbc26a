// lci_info: what LCI would use here, and why.
//
// Starts LCI like any program (so it works by hand, under lcrun and under
// mpirun/srun/mpiexec, and proves that the launcher and the network come
// up), then rank 0 prints a `key: value` report (or JSON with --json):
// which bootstrap and why, which backend, the libfabric provider, fabric
// and domain with their limits, and every LCI setting with its effective
// value and where it came from (default, environment, derived).
//
// How it reaches internals: the bootstrap choice comes from
// lci::bootstrap::choose() (lci_bootstrap, decided from the environment
// alone, exactly as LCI_initialize decides it); the provider comes from the
// same fi_getinfo query the ofi backend makes (lci/backend/ofi/hints.cpp,
// compiled in); the settings are those LCI_initialize parsed
// (lci::current_config(), the table of lci/core/settings.def), printed by
// LCIX_config_print, and the backend decision is made from them by
// lci::net::choose_backend, as a device makes it.
//
// --config-markdown prints docs/configuration.md from the same table
// (config_markdown.cpp) without starting LCI.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include "lci.h"
#include "lci/backend/ofi/hints.hpp"
#include "lci/backend/select.hpp"
#include "lci/core/transport_info.hpp"
#ifdef LCI_HAVE_IBV
#include <infiniband/verbs.h>

#include "lci/backend/ibv/probe.hpp"
#endif
#include "lci/bootstrap/bootstrap.hpp"
#include "lci/core/config.hpp"
#include "lci/core/config_values.hpp"
#include "tools/build_info.hpp"
#include "tools/config_markdown.hpp"

namespace {

const char usage[] =
    "usage: lci_info [--json] [--config-markdown] [--version] [--help]\n"
    "\n"
    "Prints what LCI would use when started this way: the bootstrap (and why it\n"
    "was chosen), the network backend, the libfabric provider, fabric and domain\n"
    "with their limits, and every LCI_* setting: its effective value, where it\n"
    "came from (default, environment, derived) and what it does.\n"
    "Run it by hand, or under a launcher to check that launcher:\n"
    "  lci_info                     rank 0 of 1 (local bootstrap)\n"
    "  lcrun -n 2 lci_info          PMI-1 through lcrun\n"
    "  mpirun -n 2 lci_info         PMIx (Open MPI), or PMI-1 (MPICH's Hydra)\n"
    "  srun --mpi=pmix -n 2 lci_info\n"
    "Only rank 0 prints. Environment: LCI_PMI=lcrun|pmi1|pmix|local forces the\n"
    "bootstrap; LCI_BACKEND=ofi|ibv forces the network backend (default: ibv when\n"
    "an active verbs port exists, else ofi); FI_PROVIDER restricts libfabric's providers.\n"
    "\n"
    "  --json              print one JSON object instead of key: value lines\n"
    "  --config-markdown   print the reference of every setting (docs/configuration.md)\n"
    "                      and exit, without starting LCI\n"
    "  --version           this implementation's name, versions, commit, build type, checks\n"
    "  --help              print this text\n";

// The report, in print order. Numbers stay unquoted in JSON.
class report {
 public:
  void text(const std::string& key, const std::string& value) {
    rows_.push_back({key, value, false});
  }
  void number(const std::string& key, unsigned long long value) {
    rows_.push_back({key, std::to_string(value), true});
  }
  void number(const std::string& key, long long value) {
    rows_.push_back({key, std::to_string(value), true});
  }
  void number(const std::string& key, int value) { number(key, static_cast<long long>(value)); }

  void print_text(FILE* out) const {
    std::size_t width = 0;
    for (const row& r : rows_) width = std::max(width, r.key.size());
    for (const row& r : rows_)
      std::fprintf(out, "%s:%*s %s\n", r.key.c_str(), static_cast<int>(width - r.key.size()), "",
                   r.value.c_str());
  }

  void print_json(FILE* out) const {
    std::fprintf(out, "{\n");
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const row& r = rows_[i];
      std::fprintf(out, "  %s: %s%s\n", quote(r.key).c_str(),
                   r.is_number ? r.value.c_str() : quote(r.value).c_str(),
                   i + 1 < rows_.size() ? "," : "");
    }
    std::fprintf(out, "}\n");
  }

 private:
  struct row {
    std::string key, value;
    bool is_number;
  };

  static std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }

  std::vector<row> rows_;
};

std::string version_string(uint32_t v) {
  return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

// libfabric's names for the mr_mode bits, e.g. "FI_MR_LOCAL | FI_MR_ENDPOINT".
std::string mr_mode_string(int mr_mode) {
  if (mr_mode == 0) return "0 (none)";
  const char* names = fi_tostr(&mr_mode, FI_TYPE_MR_MODE);
  std::string s = names ? names : "";
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s.empty() ? std::to_string(mr_mode) : s;
}

// The libfabric backend: the provider the ofi device opens (the first that
// fi_getinfo returns for the backend's hints) and what it offers.
void describe_ofi(report& r, const char* bootstrap_name) {
  const uint32_t runtime_version = fi_version();
  r.text("libfabric.version", version_string(runtime_version));
  r.text("libfabric.header_version",
         version_string(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)));
  r.text("libfabric.api_requested", version_string(lci::ofi::api_version));

  fi_info* info = nullptr;
  int rc = lci::ofi::get_info(bootstrap_name, &info);
  if (rc != 0 || info == nullptr) {
    r.text("ofi.provider", std::string("none (fi_getinfo: ") + fi_strerror(-rc) + ")");
    return;
  }
  // The entry the device would open (see choose_info).
  lci::ofi::cq_data_plan plan;
  const fi_info* chosen = lci::ofi::choose_info(
      info, static_cast<size_t>(lci::current_config().ofi_cq_data_size), &plan);
  if (chosen == nullptr) {
    r.text("ofi.provider", std::string("none usable (") + info->fabric_attr->prov_name +
                               ": too little immediate data)");
    fi_freeinfo(info);
    return;
  }
  const fi_info& i = *chosen;
  r.text("ofi.provider", i.fabric_attr->prov_name ? i.fabric_attr->prov_name : "?");
  r.text("ofi.provider_version", version_string(i.fabric_attr->prov_version));
  r.text("ofi.fabric", i.fabric_attr->name ? i.fabric_attr->name : "?");
  r.text("ofi.domain", i.domain_attr->name ? i.domain_attr->name : "?");
  r.number("ofi.inject_size", static_cast<unsigned long long>(i.tx_attr->inject_size));
  r.number("ofi.max_msg_size", static_cast<unsigned long long>(i.ep_attr->max_msg_size));
  r.number("ofi.tx_queue_size", static_cast<unsigned long long>(i.tx_attr->size));
  r.number("ofi.rx_queue_size", static_cast<unsigned long long>(i.rx_attr->size));
  r.number("ofi.cq_data_size", static_cast<unsigned long long>(i.domain_attr->cq_data_size));
  r.number("ofi.iov_limit", static_cast<unsigned long long>(i.tx_attr->iov_limit));
  r.text("ofi.mr_mode", mr_mode_string(i.domain_attr->mr_mode));
  // How a rank knows who sent a message (ofi.hpp): from the provider, or
  // from the message itself, which any process that reaches the port can forge.
  r.text("ofi.sender_identity",
         plan.source_from_provider
             ? (plan.job_token ? "provider (FI_SOURCE) + 32-bit job token"
                               : "provider (FI_SOURCE); no job token (4-byte immediate data)")
             : "claimed by the sender (no FI_SOURCE): not authenticated");
  // Message authentication (lci/backend/ofi/auth.hpp): every provider but
  // the local-only shm, where the kernel names the peer; on the others the
  // provider believes what a connecting process claims (tcp, verbs;ofi_rxm).
  {
    const std::string prov = i.fabric_attr->prov_name ? i.fabric_attr->prov_name : "";
    const std::string core = prov.substr(0, prov.find(';'));
    const bool auth = core != "shm" && core != "sm2";
    r.text("ofi.message_auth",
           auth ? "SipHash-2-4 tag + sequence number per message, per-job key agreed by "
                  "X25519 through the bootstrap (its store holds public values only; a "
                  "process that can write the store at start-up can take the key's place); "
                  "RTR keys masked; sent/received counts checked at teardown; not encrypted"
                : "none (local-only provider: the kernel names the peer)");
    r.text("ofi.rma",
           !auth ? "the provider's RDMA"
           : lci::current_config().ofi_rma_messages
               ? "puts and gets as authenticated messages (no memory is registered with the "
                 "provider for remote access: a key read off the wire reaches nothing)"
               : "the provider's RDMA (LCI_OFI_RMA_MESSAGES=0): its requests carry "
                 "registration keys in clear");
  }
  r.text("ofi.registration_keys", (i.domain_attr->mr_mode & FI_MR_PROV_KEY) || i.domain_attr->mr_mode == FI_MR_BASIC
                                      ? "provider's"
                                      : "random " + std::to_string(8 * std::min<size_t>(i.domain_attr->mr_key_size, 8)) + "-bit");
  // The other providers that would qualify, in libfabric's order of
  // preference (FI_PROVIDER=name picks one of them).
  std::string others;
  for (const fi_info* p = i.next; p != nullptr; p = p->next) {
    const char* name = p->fabric_attr->prov_name ? p->fabric_attr->prov_name : "?";
    if (std::strcmp(name, i.fabric_attr->prov_name ? i.fabric_attr->prov_name : "?") == 0) continue;
    if (others.find(std::string(name) + " ") == 0 ||
        others.find(" " + std::string(name) + " ") != std::string::npos)
      continue;
    others += std::string(name) + " ";
  }
  if (!others.empty()) others.pop_back();
  r.text("ofi.other_providers", others.empty() ? "(none)" : others);
  fi_freeinfo(info);
}

// The backend a device opens, and why: the same decision as
// lci::net::process_backend() (lci/backend/select.hpp over the same probe),
// made from the settings LCI_initialize parsed.
lci::net::backend_choice describe_backend(report& r) {
  const lci::config& cfg = lci::current_config();
  const std::string& request = cfg.backend_request;
  std::string unavailable;
#ifdef LCI_HAVE_IBV
  const bool built = true;
  std::vector<lci::ibv::device_info> devs;
  const lci::ibv::port_choice port = lci::ibv::probe_port(cfg.ibv_device, cfg.ibv_port, &devs);
  if (port.device < 0) unavailable = port.error;
#else
  const bool built = false;
#endif
  const lci::net::backend_choice c = lci::net::choose_backend(request, built, unavailable);
  r.text("backend", c.error.empty() ? (c.kind == lci::net::backend_kind::ibv ? "ibv" : "ofi")
                                    : "none");
  r.text("backend.reason", c.error.empty() ? c.reason : c.error);
  r.text("backend.built", built ? "ofi ibv" : "ofi");
#ifdef LCI_HAVE_IBV
  std::string list;
  for (const auto& d : devs) {
    if (!list.empty()) list += ", ";
    list += d.name + " (";
    std::string ports;
    for (const auto& p : d.ports) {
      if (!ports.empty()) ports += " ";
      ports += std::to_string(p.number) + ":" + (p.active ? "active" : "down") +
               (p.link_layer == IBV_LINK_LAYER_ETHERNET ? "/RoCE" : "/IB");
    }
    list += (ports.empty() ? std::string("no ports readable") : ports) + ")";
  }
  r.text("ibv.devices", list.empty() ? "(none)" : list);
  if (port.device >= 0) {
    r.text("ibv.device", devs[static_cast<size_t>(port.device)].name);
    r.number("ibv.port", port.port);
  } else {
    r.text("ibv.device", "none (" + port.error + ")");
  }
#endif
  return c;
}

// LCI's version and run-time facts; in JSON also every setting of the
// configuration table (its value, and NAME.source: default, environment or
// derived). Text output prints the table itself (LCIX_config_print).
void describe_lci(report& r, bool json) {
  r.text("lci.version", std::to_string(LCI_VERSION_MAJOR) + "." +
                            std::to_string(LCI_VERSION_MINOR) + "." +
                            std::to_string(LCI_VERSION_PATCH));
  r.number("lci.num_processes", LCI_NUM_PROCESSES);
  r.number("LCI_SHORT_SIZE", LCI_SHORT_SIZE);
  r.number("LCI_NUM_DEVICES", LCI_NUM_DEVICES);
  if (!json) return;
  for (const lci::config_row& row : lci::config_rows(lci::current_config())) {
    long long v = 0;
    if (lci::parse_decimal(row.value.c_str(), LLONG_MIN, LLONG_MAX, v))
      r.number(row.name, v);
    else
      r.text(row.name, row.value);
    r.text(std::string(row.name) + ".source", lci::to_string(row.source));
    if (row.category != lci::config_category::effective)
      r.text(std::string(row.name) + ".category", lci::to_string(row.category));
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--version")) {
      std::printf("lci_info: %s\n", LCI_BUILD_VERSION_LINE);
      return 0;
    }
    if (!std::strcmp(argv[i], "--config-markdown")) {
      print_config_markdown(stdout);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
    if (!std::strcmp(argv[i], "--json")) {
      json = true;
      continue;
    }
    std::fprintf(stderr, "lci_info: unknown option '%s'\n%s", argv[i], usage);
    return 2;
  }

  // The settings first, as LCI_initialize would read them: every malformed
  // value is reported (LCI_initialize stops at them too), with the unknown
  // LCI_* variables, and lci_info exits 1 without starting LCI. (Otherwise
  // LCI_initialize warns about the unknown ones.)
  {
    lci::config parsed;
    std::vector<std::string> errors;
    const bool ok = lci::config_read([](const char* name) -> const char* { return getenv(name); },
                                     parsed, errors);
    if (!ok) {
      for (const std::string& m : lci::config_unknown_variables(environ))
        std::fprintf(stderr, "lci_info: warning: %s\n", m.c_str());
      for (const std::string& m : errors) std::fprintf(stderr, "lci_info: %s\n", m.c_str());
      return 1;
    }
  }

  // Decided before LCI_initialize, from the same environment it reads; a bad
  // LCI_PMI stops here with the same message LCI_initialize would give.
  const lci::bootstrap::choice boot = lci::bootstrap::choose();

  if (LCI_initialize() != LCI_OK) {
    std::fprintf(stderr, "lci_info: LCI_initialize failed\n");
    return 1;
  }
  if (LCI_RANK == 0) {
    report r;
    r.text("bootstrap", boot.name);
    r.text("bootstrap.reason", boot.reason);
    r.text("bootstrap.built", lci::bootstrap::built_bootstraps());
    // Who can read and write the store (the message key never travels in
    // it; docs/security.md).
    r.text("bootstrap.store", lci::bootstrap::store_exposure(boot));
    // The backend chosen, why, and what the verbs probe saw; then the
    // libfabric provider (reported whichever backend runs: it is the
    // fallback, and the ofi benchmarks use it).
    describe_backend(r);
    describe_ofi(r, boot.name);
    // Which transport serves the ranks of this host and of the others (the
    // default device, as LCI_initialize opened it).
    for (const auto& row : lci::transport_info(LCI_UR_DEVICE)) r.text(row.first, row.second);
    describe_lci(r, json);
    if (json) {
      r.print_json(stdout);
    } else {
      r.print_text(stdout);
      std::fputs("\n", stdout);
      LCIX_config_print(stdout);
    }
    std::fflush(stdout);
  }
  LCI_finalize();
  return 0;
}
