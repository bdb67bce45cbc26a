// lcrun's supervisor (supervisor.hpp): starting the ranks, signals, the event
// loop, reaping, deadlines and the termination of the job.
#include "tools/lcrun/supervisor.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "lci/util/fd_limit.hpp"
#include "lci/util/signal_name.hpp"
#include "tools/lcrun/ofi_shm_cleanup.hpp"

extern char** environ;

namespace lci::lcrun {
namespace {

// Written by the signal handler, read by the event loop (the self-pipe trick:
// a signal becomes a readable byte, so the event loop cannot miss it).
int signal_pipe[2] = {-1, -1};

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  // A full pipe already holds a pending wakeup; losing this byte is fine.
  ssize_t ignored = ::write(signal_pipe[1], &byte, 1);
  (void)ignored;
  errno = saved;
}

// Resolves prog the way execvp would, so a missing program is reported once
// instead of once per rank.
bool find_program(const std::string& prog, std::string& path) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (prog.find('/') != std::string::npos) {
    path = prog;
    return executable(prog);
  }
  const char* env_path = std::getenv("PATH");
  std::string dirs = env_path != nullptr ? env_path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + prog;
    if (executable(candidate)) {
      path = candidate;
      return true;
    }
    if (colon == std::string::npos) return false;
    start = colon + 1;
  }
}

std::string describe_signal(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (name != nullptr ? std::string(" (") + name + ")" : "");
}

}  // namespace

supervisor::supervisor(options opts)
    : opts_(std::move(opts)),
      ranks_(opts_.nranks),
      server_(opts_.nranks, "lcrun_" + std::to_string(::getpid()), *this) {}

int supervisor::run() {
  if (!install_signal_handlers()) return 1;
  // Every rank's command line is resolved before the first rank starts, so
  // a missing program is reported once and nothing has to be cleaned up.
  std::vector<std::vector<std::string>> commands(static_cast<std::size_t>(opts_.nranks));
  std::vector<std::string> paths(static_cast<std::size_t>(opts_.nranks));
  for (std::size_t r = 0; r < commands.size(); ++r) {
    auto& args = commands[r];
    for (const auto& w : opts_.prefix)
      args.push_back(expand_placeholders(w, static_cast<int>(r), opts_));
    args.insert(args.end(), opts_.command.begin(), opts_.command.end());
    // With a prefix, prog is found by the prefix command (maybe elsewhere).
    if (r > 0 && args[0] == commands[r - 1][0]) {
      paths[r] = paths[r - 1];
    } else if (!find_program(args[0], paths[r])) {
      std::fprintf(stderr, "lcrun: cannot find an executable program '%s'%s\n", args[0].c_str(),
                   opts_.prefix.empty() ? "" : " (the first word of --prefix)");
      return 127;
    }
  }
  start_ = steady::now();
  // A socket, the ends of the output pipes and the child's pidfd per rank,
  // and the ranks inherit the limit (each also holds one per local peer).
  raise_fd_limit(static_cast<size_t>(opts_.nranks) * 4 + 64);
  for (int r = 0; r < opts_.nranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (!start_rank(r, paths[i], commands[i])) {
      raise_status(1);
      terminate();
      break;
    }
  }
  serve();
  // Every rank ended within dump_grace (a program without LCI's handler
  // dies of the dump signal): the timeout ended the job all the same.
  if (dumping_ && !terminating_)
    std::fprintf(stderr, "lcrun: LCRUN_TIMEOUT=%g s expired; the ranks ended when asked for "
                 "their state\n", opts_.timeout_s);
  if (const char* st = std::getenv("LCRUN_STATS"); st != nullptr && std::strcmp(st, "1") == 0)
    print_stats();
  std::string failed;
  for (int r = 0; r < opts_.nranks; ++r)
    if (ranks_[r].failed) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  if (!failed.empty())
    std::fprintf(stderr, "lcrun: --keep-going: rank(s) %s failed; the others ran on\n",
                 failed.c_str());
  return status_;
}

void supervisor::print_stats() const {
  const pmi_server::stats& s = server_.statistics();
  std::size_t kvs_bytes = 0;
  for (const auto& [key, value] : server_.kvs()) kvs_bytes += key.size() + value.size();
  const uint64_t ops = s.puts + s.gets + s.getalls + s.barrier_ins + s.other;
  std::fprintf(stderr,
               "lcrun: PMI server, %d ranks: %llu requests (%llu put, %llu get, %llu getall, "
               "%llu barrier_in in %llu barriers, %llu other; %.1f per rank), %llu bytes in, "
               "%llu bytes out, %zu keys (%zu bytes) in the store, %.3f s serving, %.3f s "
               "wall\n",
               opts_.nranks, static_cast<unsigned long long>(ops),
               static_cast<unsigned long long>(s.puts), static_cast<unsigned long long>(s.gets),
               static_cast<unsigned long long>(s.getalls),
               static_cast<unsigned long long>(s.barrier_ins),
               static_cast<unsigned long long>(s.barriers),
               static_cast<unsigned long long>(s.other),
               static_cast<double>(ops) / opts_.nranks,
               static_cast<unsigned long long>(s.bytes_in),
               static_cast<unsigned long long>(s.bytes_out), server_.kvs().size(), kvs_bytes,
               s.serve_s, std::chrono::duration<double>(steady::now() - start_).count());
}

bool supervisor::install_signal_handlers() {
  if (::pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::fprintf(stderr, "lcrun: pipe2: %s\n", std::strerror(errno));
    return false;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NOCLDSTOP;
  for (std::size_t i = 0; i < std::size(handled_signals); ++i)
    ::sigaction(handled_signals[i], &sa, &original_actions_[i]);
  // lcrun writes to sockets of ranks that may be dead and to a stderr that
  // may be a closed pipe: it wants EPIPE, not death. The ranks get back
  // every disposition lcrun was started with (an ignored SIGINT stays
  // ignored, as it would without lcrun).
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &original_sigpipe_);
  return true;
}

bool supervisor::start_rank(int r, const std::string& path, std::vector<std::string> args) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    const int e = errno;
    if (e == EMFILE || e == ENFILE)
      std::fprintf(stderr,
                   "lcrun: cannot create the PMI socket for rank %d: %s (the open-file limit, "
                   "ulimit -n, is %zu; lcrun holds a descriptor per rank: raise the "
                   "limit, or its hard limit with ulimit -Hn)\n",
                   r, std::strerror(e), lci::fd_limit());
    else
      std::fprintf(stderr, "lcrun: cannot create the PMI socket for rank %d: %s\n", r,
                   std::strerror(e));
    return false;
  }
  // Everything the child needs is built before fork(), so the child only
  // calls async-signal-safe functions between fork() and exec().
  std::vector<std::string> env;
  static const char* const replaced[] = {"PMI_FD=",   "PMI_RANK=", "PMI_SIZE=",
                                         "PMI_PORT=", "PMI_ID=",   "LCI_LCRUN="};
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    bool drop = false;
    for (const char* prefix : replaced)
      if (std::strncmp(*e, prefix, std::strlen(prefix)) == 0) drop = true;
    if (!drop) env.emplace_back(*e);
  }
  env.push_back("PMI_FD=" + std::to_string(sv[1]));
  env.push_back("PMI_RANK=" + std::to_string(r));
  env.push_back("PMI_SIZE=" + std::to_string(opts_.nranks));
  env.push_back("LCI_LCRUN=1");
  if (opts_.set_dump_signal) env.push_back("LCI_DUMP_SIGNAL=" + dump_signal_name(opts_.dump_signal));
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Signals stay blocked across fork() so the child cannot run lcrun's
  // handler (which writes to lcrun's self-pipe) before it resets them.
  sigset_t all, old;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, &old);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    for (std::size_t i = 0; i < std::size(handled_signals); ++i)
      ::sigaction(handled_signals[i], &original_actions_[i], nullptr);
    ::sigaction(SIGPIPE, &original_sigpipe_, nullptr);
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    ::fcntl(sv[1], F_SETFD, 0);  // the one descriptor the rank must inherit
#ifdef __linux__
    // If lcrun itself is killed (SIGKILL, OOM killer) it cannot terminate
    // the ranks; the kernel does it instead. The getppid() check closes
    // the window where lcrun died before prctl().
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
#endif
    ::execve(path.c_str(), argv.data(), envp.data());
    const char* err = std::strerror(errno);
    const char* what = "lcrun: exec failed: ";
    ssize_t ignored = ::write(2, what, std::strlen(what));
    ignored = ::write(2, err, std::strlen(err));
    ignored = ::write(2, "\n", 1);
    (void)ignored;
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    std::fprintf(stderr, "lcrun: cannot start rank %d: fork: %s\n", r, std::strerror(fork_errno));
    return false;
  }
  ::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK);
  rank_process& rs = ranks_[r];
  rs.pid = pid;
  server_.attach(r, sv[0]);
  rs.running = true;
  ++running_;
  return true;
}

void supervisor::serve() {
  server_.watch(signal_pipe[0]);
  while (running_ > 0) {
    if (server_.serve(poll_timeout_ms())) drain_signals();
    reap();
    check_deadlines();
    if (gave_up_) break;
  }
}

int supervisor::poll_timeout_ms() const {
  // At most a second: a lost wakeup then only delays reaping, never hangs.
  auto wait = std::chrono::milliseconds(1000);
  auto now = steady::now();
  auto until = [&](steady::time_point t) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - now) +
                std::chrono::milliseconds(1);
    wait = std::max(std::chrono::milliseconds(0), std::min(wait, left));
  };
  if (opts_.timeout_s > 0 && !terminating_) until(dumping_ ? dump_until_ : timeout_deadline());
  if (terminating_ && !killed_) until(kill_at_);
  if (killed_) until(give_up_at_);
  return static_cast<int>(wait.count());
}

supervisor::steady::time_point supervisor::timeout_deadline() const {
  return start_ + std::chrono::duration_cast<steady::duration>(
                      std::chrono::duration<double>(opts_.timeout_s));
}

void supervisor::drain_signals() {
  unsigned char buf[64];
  for (;;) {
    ssize_t n = ::read(signal_pipe[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (ssize_t i = 0; i < n; ++i) {
      int sig = buf[i];
      if (sig == SIGCHLD) continue;  // reap() runs after every wakeup
      if (!terminating_) {
        std::fprintf(stderr, "lcrun: received %s; terminating the ranks\n",
                     describe_signal(sig).c_str());
        raise_status(128 + sig);
        terminate();
      } else if (!killed_) {
        // A second request to stop: the user does not want to wait.
        kill_all();
      }
    }
  }
}

void supervisor::reap() {
  for (int r = 0; r < opts_.nranks; ++r) {
    rank_process& rs = ranks_[r];
    if (!rs.running) continue;
    // Look first without reaping: a dead rank stays a zombie, so its pid
    // cannot go to another process while its files are removed.
    siginfo_t info{};
    int rc;
    do rc = ::waitid(P_PID, static_cast<id_t>(rs.pid), &info, WEXITED | WNOHANG | WNOWAIT);
    while (rc < 0 && errno == EINTR);
    if (rc == 0 && info.si_pid == 0) continue;  // still running
    if (rc == 0) remove_shm_leftovers(rs.pid);
    int wstatus = 0;
    pid_t got;
    do got = ::waitpid(rs.pid, &wstatus, WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got == 0) continue;
    // Serve what the rank wrote before it died first: an abort message
    // explains the exit better than the exit status does.
    if (server_.fd(r) >= 0) server_.receive(r);
    rs.running = false;
    --running_;
    if (got < 0) {  // cannot happen for our own child; count it as a failure
      raise_status(1);
      continue;
    }
    on_exit(r, wstatus);
  }
}

void supervisor::on_exit(int r, int wstatus) {
  const rank_process& rs = ranks_[r];
  int code = 0;
  std::string how;
  bool ours = false;
  if (WIFEXITED(wstatus)) {
    code = WEXITSTATUS(wstatus);
    how = "exited with status " + std::to_string(code);
  } else if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    code = 128 + sig;
    how = "was killed by " + describe_signal(sig);
    ours = (rs.signalled && (sig == SIGTERM || sig == SIGKILL)) ||
           (rs.asked_state && sig == opts_.dump_signal);
  }
  if (ours) return;  // a consequence of the failure already reported
  raise_status(code);
  if (code != 0 && !terminating_ && opts_.keep_going) {
    ranks_[r].failed = true;
    std::fprintf(stderr, "lcrun: rank %d (pid %ld) %s; --keep-going: the other ranks go on\n", r,
                 static_cast<long>(rs.pid), how.c_str());
    server_.check_barrier();
  } else if (code != 0 && !terminating_) {
    std::fprintf(stderr, "lcrun: rank %d (pid %ld) %s%s\n", r, static_cast<long>(rs.pid),
                 how.c_str(), running_ > 0 ? "; terminating the other ranks" : "");
    terminate();
  } else {
    server_.check_barrier();
  }
}

void supervisor::check_deadlines() {
  auto now = steady::now();
  if (!terminating_ && !dumping_ && opts_.timeout_s > 0 && now >= timeout_deadline()) {
    if (opts_.dump_signal != 0 && running_ > 0)
      ask_for_state();
    else
      expire();
  }
  if (dumping_ && !terminating_ && now >= dump_until_) expire();
  if (terminating_ && !killed_ && now >= kill_at_) kill_all();
  if (killed_ && running_ > 0 && now >= give_up_at_) {
    for (int r = 0; r < opts_.nranks; ++r)
      if (ranks_[r].running)
        std::fprintf(stderr, "lcrun: rank %d (pid %ld) did not exit after SIGKILL; giving up\n",
                     r, static_cast<long>(ranks_[r].pid));
    raise_status(1);
    gave_up_ = true;
  }
}

// The timeout passed: every running rank gets the dump signal, and the
// job is ended dump_grace later (expire).
void supervisor::ask_for_state() {
  std::fprintf(stderr, "lcrun: timeout after %g s; asking ranks for their state (%s)\n",
               opts_.timeout_s, ("SIG" + dump_signal_name(opts_.dump_signal)).c_str());
  raise_status(124);
  dumping_ = true;
  dump_until_ = steady::now() + dump_grace;
  for (auto& rs : ranks_) {
    if (!rs.running) continue;
    ::kill(rs.pid, opts_.dump_signal);
    rs.asked_state = true;
  }
}

void supervisor::expire() {
  std::fprintf(stderr, "lcrun: LCRUN_TIMEOUT=%g s expired; terminating the ranks\n",
               opts_.timeout_s);
  raise_status(124);
  terminate();
}

// Sends SIGTERM to every running rank (once) and arms the SIGKILL timer.
void supervisor::terminate() {
  if (!terminating_) {
    terminating_ = true;
    kill_at_ = steady::now() + term_grace;
  }
  for (auto& rs : ranks_) {
    if (!rs.running || rs.signalled) continue;
    ::kill(rs.pid, SIGTERM);
    rs.signalled = true;
  }
}

void supervisor::kill_all() {
  terminating_ = true;
  killed_ = true;
  give_up_at_ = steady::now() + kill_grace;
  for (auto& rs : ranks_) {
    if (!rs.running) continue;
    ::kill(rs.pid, SIGKILL);
    rs.signalled = true;
  }
}

void supervisor::raise_status(int s) { status_ = std::max(status_, s); }

}  // namespace lci::lcrun
