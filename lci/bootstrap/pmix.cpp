// pmix: a client of the PMIx library (Open MPI's mpirun, PRRTE, Slurm's
// srun --mpi=pmix). Built only where PMIx was found (LCI_HAVE_PMIX).
//
// Mapping of the interface onto PMIx:
//   rank, size   the rank in our namespace from PMIx_Init; PMIX_JOB_SIZE of
//                the namespace's wildcard rank;
//   put          PMIx_Put(PMIX_GLOBAL) of a string, staged locally until
//   fence        PMIx_Commit plus a PMIx_Fence that collects every rank's
//                data (PMIX_COLLECT_DATA), so a later get needs no round trip;
//   get          PMIx_Get on the peer's proc, marked PMIX_OPTIONAL: after the
//                collecting fence the value is local or was never put, and
//                asking the server for a missing key could wait forever;
//   barrier      PMIx_Fence without data (both fences also complete with
//                PMIX_ERR_PARTIAL_SUCCESS after survive_failures());
//   abort        prints the message and exits with the status (see abort()).
// Keys carry an "lci." prefix so they can never collide with PMIx's own
// reserved "pmix.*" keys. The PMIx client library is thread-safe, so no
// lock is needed here. The destructor calls PMIx_Finalize.
#include <pmix.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"

namespace lci::bootstrap {
namespace {


std::string pmix_error(pmix_status_t rc) {
  return std::string(PMIx_Error_string(rc)) + " (" + std::to_string(rc) + ")";
}

// One pmix_info_t holding a bool, released on scope exit.
class bool_info {
 public:
  bool_info(const char* key, bool value) {
    PMIX_INFO_CONSTRUCT(&info_);
    PMIX_INFO_LOAD(&info_, key, &value, PMIX_BOOL);
  }
  ~bool_info() { PMIX_INFO_DESTRUCT(&info_); }
  bool_info(const bool_info&) = delete;
  bool_info& operator=(const bool_info&) = delete;
  pmix_info_t* get() { return &info_; }

 private:
  pmix_info_t info_;
};

// Owns a pmix_value_t returned by PMIx_Get.
struct value_deleter {
  void operator()(pmix_value_t* v) const { PMIX_VALUE_RELEASE(v); }
};
using value_ptr = std::unique_ptr<pmix_value_t, value_deleter>;

// A non-negative integer of any of the integer types PMIx uses; -1 otherwise.
long long as_count(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_UINT32: return v.data.uint32;
    case PMIX_UINT16: return v.data.uint16;
    case PMIX_UINT64: return static_cast<long long>(v.data.uint64);
    case PMIX_SIZE: return static_cast<long long>(v.data.size);
    case PMIX_INT32: return v.data.int32;
    case PMIX_INT: return v.data.integer;
    case PMIX_UINT: return v.data.uint;
    default: return -1;
  }
}

class pmix final : public bootstrap {
 public:
  pmix() {
    pmix_status_t rc = PMIx_Init(&self_, nullptr, 0);
    if (rc != PMIX_SUCCESS)
      detail::fatal("pmix: PMIx_Init failed: " + pmix_error(rc) +
                    "; start the program with a PMIx launcher (Open MPI's mpirun, prterun, "
                    "srun --mpi=pmix), or choose another bootstrap with LCI_PMI");
    initialized_ = true;
    if (self_.rank > static_cast<pmix_rank_t>(INT32_MAX))
      detail::fatal("pmix: PMIx_Init gave a reserved rank (" + std::to_string(self_.rank) + ")");
    rank_ = static_cast<int>(self_.rank);

    pmix_proc_t job;
    PMIX_PROC_CONSTRUCT(&job);
    PMIX_LOAD_PROCID(&job, self_.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* raw = nullptr;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &raw);
    value_ptr size_value(raw);
    if (rc != PMIX_SUCCESS || !size_value)
      detail::fatal(std::string("pmix: PMIx_Get(") + PMIX_JOB_SIZE + ") of namespace " +
                    self_.nspace + " failed: " + pmix_error(rc));
    const long long size = as_count(*size_value);
    if (size < 1 || size > INT32_MAX || rank_ >= size)
      detail::fatal(std::string("pmix: ") + PMIX_JOB_SIZE + " of namespace " + self_.nspace +
                    " is not a usable job size for rank " + std::to_string(rank_) + " (type " +
                    PMIx_Data_type_string(size_value->type) + ", value " +
                    std::to_string(size) + ")");
    size_ = static_cast<int>(size);
  }

  ~pmix() override {
    if (!initialized_) return;
    pmix_status_t rc = PMIx_Finalize(nullptr, 0);
    if (rc != PMIX_SUCCESS)
      std::fprintf(stderr, "lci bootstrap: warning: pmix rank %d: PMIx_Finalize failed: %s\n",
                   rank_, pmix_error(rc).c_str());
  }

  void survive_failures() override { survive_failures_ = true; }

  const char* name() const override { return "pmix"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void put(const std::string& key, const std::string& value) override {
    detail::check_key("put", key);
    detail::check_value("put", key, value);
    const std::string k = wire_key(key);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_STRING;
    // PMIx_Put copies the value; the cast only satisfies the C struct.
    v.data.string = const_cast<char*>(value.c_str());
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);
    if (rc != PMIX_SUCCESS)
      detail::fatal("pmix: put of key '" + key + "' on rank " + std::to_string(rank_) +
                    " failed: " + pmix_error(rc));
  }

  void fence() override {
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
      detail::fatal("pmix: PMIx_Commit on rank " + std::to_string(rank_) +
                    " failed: " + pmix_error(rc));
    bool_info collect(PMIX_COLLECT_DATA, true);
    rc = PMIx_Fence(nullptr, 0, collect.get(), 1);
    if (!met(rc))
      detail::fatal("pmix: fence (PMIx_Fence with data) on rank " + std::to_string(rank_) +
                    " failed: " + pmix_error(rc));
  }

  std::string get(int rank, const std::string& key) override {
    detail::check_key("get", key);
    if (rank < 0 || rank >= size_)
      detail::fatal("get: rank " + std::to_string(rank) + " is outside the job of " +
                    std::to_string(size_) + " ranks");
    const std::string k = wire_key(key);
    pmix_proc_t peer;
    PMIX_PROC_CONSTRUCT(&peer);
    PMIX_LOAD_PROCID(&peer, self_.nspace, static_cast<pmix_rank_t>(rank));
    bool_info optional(PMIX_OPTIONAL, true);
    pmix_value_t* raw = nullptr;
    pmix_status_t rc = PMIx_Get(&peer, k.c_str(), optional.get(), 1, &raw);
    value_ptr value(raw);
    if (rc != PMIX_SUCCESS || !value)
      abort(1, "get: rank " + std::to_string(rank) + " put no value under key '" + key +
                   "' before the last fence (PMIx_Get: " + pmix_error(rc) + ")");
    if (value->type != PMIX_STRING || value->data.string == nullptr)
      abort(1, "get: the value of rank " + std::to_string(rank) + " under key '" + key +
                   "' is a " + PMIx_Data_type_string(value->type) + ", not a string");
    return value->data.string;
  }

  void barrier() override {
    pmix_status_t rc = PMIx_Fence(nullptr, 0, nullptr, 0);
    if (!met(rc))
      detail::fatal("pmix: barrier (PMIx_Fence) on rank " + std::to_string(rank_) +
                    " failed: " + pmix_error(rc));
  }

  [[noreturn]] void abort(int code, const std::string& message) override {
    const int status = detail::abort_status(code);
    // Launchers differ in whether they print the abort message; print it
    // here so it is never lost.
    std::fflush(stdout);
    std::fprintf(stderr, "lci: rank %d aborted (code %d): %s\n", rank_, code, message.c_str());
    std::fflush(stderr);
    // No PMIx_Abort: with Open MPI 4.1's mpirun it sometimes left mpirun
    // hanging after every rank had exited (seen in about one run in four of
    // launcher.pmix.abort). A rank that exits with a non-zero status makes
    // mpirun, prterun and srun end the job just as well, with their own
    // report naming it; the message above says why.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status);
  }

 private:
  static std::string wire_key(const std::string& key) { return "lci." + key; }
  // A fence completed: everyone met, or (LCI_PEER_FAILURE=continue) every
  // process still alive did, the server reporting that some are gone.
  bool met(pmix_status_t rc) const {
#ifdef PMIX_ERR_PARTIAL_SUCCESS
    if (survive_failures_ && rc == PMIX_ERR_PARTIAL_SUCCESS) return true;
#endif
    return rc == PMIX_SUCCESS;
  }

  pmix_proc_t self_{};
  bool initialized_ = false;
  bool survive_failures_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

namespace detail {
std::unique_ptr<bootstrap> open_pmix() { return std::make_unique<pmix>(); }
}  // namespace detail

}  // namespace lci::bootstrap
