// How the ranks of a job find each other.
//
// A bootstrap gives a process its rank and the job size and carries small
// key-value pairs between processes (network addresses at device creation).
// It is used only at set-up and tear-down, never on the data path.
//
// Implementations: pmi1 (the PMI-1 wire protocol, spoken by lcrun, MPICH's
// Hydra and Slurm's --mpi=pmi2), pmix (the PMIx client library: Open MPI's
// mpirun, PRRTE, srun --mpi=pmix; built only where PMIx is found), local (a
// job of one process). open() picks one from the environment;
// LCI_PMI=lcrun|pmi1|pmix|local overrides the choice, and so, when LCI_PMI
// is not set, does LCI 1.7.9's LCT_PMI_BACKEND (a list of pmi1, pmi2, pmix,
// local; pmi2 is served by the PMI-1 client).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace lci::bootstrap {

class bootstrap {
 public:
  virtual ~bootstrap() = default;
  bootstrap() = default;
  bootstrap(const bootstrap&) = delete;
  bootstrap& operator=(const bootstrap&) = delete;

  // Name of the mechanism, for lci_info and logs: "lcrun", "pmi1", "pmix",
  // "local".
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Publishes key=value under this process. Keys are printable, without
  // spaces or '=', at most 63 characters; values are printable, without
  // spaces, at most 512 characters (encode binary data, e.g. as hex).
  virtual void put(const std::string& key, const std::string& value) = 0;
  // Collective: every put issued before fence() on any rank is visible to
  // every get() issued after it on any rank. Also a barrier.
  virtual void fence() = 0;
  // Value that rank `rank` put under `key` (before a fence). Aborts the
  // process with a message naming the key if there is none.
  virtual std::string get(int rank, const std::string& key) = 0;
  // Every rank's value under `key` (after a fence), by rank; as get() for
  // each rank, which is what it does unless the mechanism can do better
  // (lcrun's server answers with many values per request, so a rank asks
  // a few times instead of once per rank).
  virtual std::vector<std::string> get_all(const std::string& key);
  // Collective barrier over all ranks.
  virtual void barrier() = 0;
  // Ends the whole job with an error message (does not return).
  [[noreturn]] virtual void abort(int code, const std::string& message) = 0;

  // LCI_PEER_FAILURE=continue: a rank may die and the others go on. Called
  // once by LCI_initialize, after open(). Under Hydra (pmi1 other than
  // lcrun) it keeps the SIGUSR1 that mpiexec -disable-auto-cleanup sends
  // every rank when one fails from ending the process; under PMIx a fence
  // that reports PMIX_ERR_PARTIAL_SUCCESS (some process of the job is gone,
  // the others met: Open MPI's mpirun --enable-recovery) completes.
  virtual void survive_failures() {}
  // Whether barrier() and fence() still complete once a rank has died,
  // among the living: lcrun, which after a failure runs on only under
  // --keep-going and then leaves failed ranks out of its barriers. Other
  // launchers wait for the dead rank (Hydra, Slurm) or do not promise to
  // complete (PMIx), so after a failure LCI's teardown does without them.
  virtual bool barriers_survive_failures() const { return false; }
};

// Binary values (network addresses) travel as lower-case hex.
std::string encode_hex(const void* data, size_t length);
// Decodes encode_hex output; false (out untouched) if `text` is not hex.
bool decode_hex(const std::string& text, std::vector<unsigned char>* out);

// What open() would pick and why, decided from the environment alone (no
// launcher is contacted), so lci_info and logs can explain the choice.
struct choice {
  const char* name;    // as bootstrap::name() will report it
  std::string reason;  // e.g. "LCI_PMI=pmix", "PMIX_RANK and PMIX_NAMESPACE are set",
                       // "LCT_PMI_BACKEND=pmix;pmi2: pmi2, PMI_FD is set (...)"
};
// Fatal, with a message, on a malformed LCI_PMI or one naming a bootstrap
// that is not built or whose launcher variables are missing, and on an
// LCT_PMI_BACKEND with an unknown name or no usable entry.
choice choose();
// "name (reason)", the one-line form of choose().
std::string describe_choice();
// Who can read and write what the ranks publish through the bootstrap
// `c` (lci_info and docs/security.md): e.g. under Hydra's -pmi-port, any
// process that reaches its TCP port.
std::string store_exposure(const choice& c);
// The bootstraps compiled into this build, space-separated, e.g.
// "lcrun pmi1 pmix local".
const char* built_bootstraps();

// Opens the bootstrap chosen by the environment (see choose()). Fatal, with
// a message, if the environment names a launcher that cannot be reached.
std::unique_ptr<bootstrap> open();

}  // namespace lci::bootstrap

namespace lci::bootstrap {

// The process's one shared bootstrap (lci/bootstrap/shared.cpp): a launcher
// such as lcrun hands a process a single PMI connection, so LCI_initialize
// and LCT_pmi_initialize must share it. acquire() opens it on the first
// call (as open() would) and counts references; release() closes it when
// the count returns to 0 (fatal without a matching acquire). Both are
// thread-safe; the reference stays valid until the matching release().
bootstrap& acquire();
void release();

}  // namespace lci::bootstrap
