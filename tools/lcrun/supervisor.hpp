// lcrun's supervisor: starts the ranks, runs the one event loop
// (pmi_server::serve, on epoll) over a self-pipe (SIGCHLD, SIGINT, SIGTERM,
// SIGHUP) and the ranks' PMI sockets, hands PMI traffic to the pmi_server,
// reaps ranks with waitpid(pid, WNOHANG), and ends the job on a failure, a
// signal or LCRUN_TIMEOUT.
//
// Each rank gets one end of a socketpair as PMI_FD (plus PMI_RANK, PMI_SIZE
// and LCI_LCRUN=1); stdin/stdout/stderr are inherited, which is all the
// output forwarding a single machine needs. With --prefix the rank is
// started as the prefix command, which must exec the program in the same
// process: the supervisor signals and reaps the pid it forked. PMI_FD is an
// inherited descriptor, so the PMI channel keeps working in another network
// namespace.
//
// Invariants:
//   - lcrun signals a rank only by the pid it forked and only until it has
//     reaped it, so the pid cannot have been reused by another process; for
//     the same reason a dead rank's /dev/shm files are removed
//     (ofi_shm_cleanup.hpp) before it is reaped (every exit, any status);
//   - no rank outlives lcrun: on Linux each rank gets SIGKILL when lcrun
//     dies, even by SIGKILL (PR_SET_PDEATHSIG);
//   - at LCRUN_TIMEOUT, every running rank first gets the dump signal
//     (options::dump_signal, unless none), and the job is terminated
//     dump_grace later, so that each rank's LCI prints its state to stderr;
//   - once the job is being terminated, every rank gets SIGTERM, then SIGKILL
//     term_grace later, and lcrun gives up kill_grace after that: the loop
//     always ends by itself;
//   - exit status: the worst rank status (exit code, or 128+S for a rank
//     killed by signal S), not counting ranks that died of the very signal
//     lcrun sent them (the dump signal too); an abort counts its exit code,
//     LCRUN_TIMEOUT 124, a
//     signal S to lcrun 128+S, a broken PMI conversation 1.
//
// One supervisor per process: the signal handlers write to a process-wide
// self-pipe.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "tools/lcrun/options.hpp"
#include "tools/lcrun/pmi_server.hpp"

namespace lci::lcrun {

class supervisor final : private pmi_job {
 public:
  explicit supervisor(options opts);
  supervisor(const supervisor&) = delete;
  supervisor& operator=(const supervisor&) = delete;

  // Starts the ranks, serves them until all have been reaped (or lcrun gave
  // up on them), and returns lcrun's exit status.
  int run();

 private:
  using steady = std::chrono::steady_clock;
  static constexpr auto term_grace = std::chrono::seconds(2);
  static constexpr auto kill_grace = std::chrono::seconds(5);
  static constexpr auto dump_grace = std::chrono::seconds(2);
  static constexpr int handled_signals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};
  static constexpr std::size_t num_handled_signals = std::size(handled_signals);

  struct rank_process {
    pid_t pid = -1;
    bool running = false;    // forked and not yet reaped
    bool signalled = false;  // lcrun sent it SIGTERM or SIGKILL
    bool asked_state = false;  // lcrun sent it the dump signal
    bool failed = false;     // failed under --keep-going: the others went on
  };

  // pmi_job
  pid_t pid(int r) const override { return ranks_[r].pid; }
  bool running(int r) const override { return ranks_[r].running; }
  bool failed(int r) const override { return ranks_[r].failed; }
  bool keeps_going() const override { return opts_.keep_going; }
  bool terminating() const override { return terminating_; }
  void raise_status(int s) override;
  void terminate() override;

  bool install_signal_handlers();
  // LCRUN_STATS=1: what the job asked of the PMI server, on stderr.
  void print_stats() const;
  bool start_rank(int r, const std::string& path, std::vector<std::string> args);
  void serve();
  int poll_timeout_ms() const;
  steady::time_point timeout_deadline() const;
  void drain_signals();
  void reap();
  void on_exit(int r, int wstatus);
  void check_deadlines();
  void ask_for_state();
  void expire();
  void kill_all();

  options opts_;
  std::vector<rank_process> ranks_;
  pmi_server server_;
  int running_ = 0;  // ranks forked and not yet reaped
  int status_ = 0;
  bool terminating_ = false;
  bool killed_ = false;
  bool gave_up_ = false;
  bool dumping_ = false;  // the timeout passed: the ranks were asked for their state
  steady::time_point start_, kill_at_, give_up_at_, dump_until_;
  struct sigaction original_sigpipe_ {};
  struct sigaction original_actions_[num_handled_signals] {};
};

}  // namespace lci::lcrun
