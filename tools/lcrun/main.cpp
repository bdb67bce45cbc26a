// lcrun: starts N ranks of a program on this machine and serves the PMI-1
// wire protocol to them, so LCI programs find each other with no other
// software installed.
//
//   lcrun [-n N | -np N] [--hosts H] [--prefix CMD] [--] prog [args...]
//
// With --prefix, each rank is started as `CMD prog args...`, where CMD is
// split into words like a shell would (quotes, backslashes; no expansion)
// and {rank}, {host}, {size} and {hosts} in it are replaced per rank; rank r
// is on host r mod H. The prefix must exec the program in the same process
// (env, ip netns exec, nsenter, numactl, taskset do): lcrun signals and reaps
// the pid it forked. PMI_FD is an inherited descriptor, so the PMI channel
// keeps working in another network namespace.
//
// Each rank gets one end of a socketpair as PMI_FD (plus PMI_RANK, PMI_SIZE
// and LCI_LCRUN=1); stdin/stdout/stderr are inherited, which is all the
// output forwarding a single machine needs. One thread runs one poll() loop
// over a self-pipe (SIGCHLD, SIGINT, SIGTERM, SIGHUP) and the rank sockets,
// serves PMI commands from an in-memory key-value store and reaps ranks with
// waitpid(pid, WNOHANG).
//
// Invariants:
//   - lcrun signals a rank only by the pid it forked and only until it has
//     reaped it, so the pid cannot have been reused by another process; for
//     the same reason a dead rank's /dev/shm files are removed before it is
//     reaped (every exit, any status);
//   - no rank outlives lcrun: on Linux each rank gets SIGKILL when lcrun
//     dies, even by SIGKILL (PR_SET_PDEATHSIG);
//   - once the job is being terminated, every rank gets SIGTERM, then SIGKILL
//     term_grace later, and lcrun gives up kill_grace after that: the loop
//     always ends by itself;
//   - lcrun's memory per rank is bounded: it stops reading a rank's
//     requests while max_pending_replies bytes of replies wait for the rank
//     to read them;
//   - exit status: the worst rank status (exit code, or 128+S for a rank
//     killed by signal S), not counting ranks that died of the very signal
//     lcrun sent them; an abort counts its exit code, LCRUN_TIMEOUT 124, a
//     signal S to lcrun 128+S, a broken PMI conversation 1.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lci/bootstrap/pmi1_wire.hpp"
#include "tools/lcrun/options.hpp"

extern char** environ;

namespace lci::lcrun {
namespace {

using steady = std::chrono::steady_clock;

// A PMI line longer than this is a broken client; values are at most 1 KiB.
constexpr std::size_t max_line_length = 64 * 1024;
// lcrun stops reading a rank's requests while this many bytes of replies
// wait for the rank to read them: a rank that sends without reading then
// blocks on its own socket instead of growing lcrun's memory. One read
// (16 KiB of requests) can still add about 1.1 MiB of replies (a get of a
// 1 KiB value per 16-byte request), so a rank holds at most about 2.1 MiB.
constexpr std::size_t max_pending_replies = 1024 * 1024;
constexpr auto term_grace = std::chrono::seconds(2);
constexpr auto kill_grace = std::chrono::seconds(5);
// The same limits as MPICH's Hydra, so a program that runs under lcrun also
// runs under mpiexec.
constexpr int kvsname_max = 256;
constexpr std::size_t keylen_max = 64;
constexpr std::size_t vallen_max = 1024;
constexpr int handled_signals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};

// Written by the signal handler, read by the poll loop (the self-pipe trick:
// a signal becomes a readable byte, so poll() cannot miss it).
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

// PMI lines are parsed by the wire code shared with LCI's client.
using bootstrap::pmi1_wire::parse_line;
using bootstrap::pmi1_wire::percent_decode;

std::string describe_signal(int sig) {
  const char* name = ::strsignal(sig);
  return "signal " + std::to_string(sig) + (name != nullptr ? std::string(" (") + name + ")" : "");
}

struct rank_state {
  pid_t pid = -1;
  int fd = -1;           // lcrun's end of the socketpair; -1 once closed
  std::string in;        // bytes received past the last complete line
  std::string out;       // replies; out[out_sent, size) not yet accepted by the socket
  std::size_t out_sent = 0;
  bool running = false;  // forked and not yet reaped
  bool finalized = false;
  bool in_barrier = false;
  bool signalled = false;  // lcrun sent it SIGTERM or SIGKILL
};

class job {
 public:
  explicit job(options opts) : opts_(std::move(opts)), ranks_(opts_.nranks) {
    kvsname_ = "lcrun_" + std::to_string(::getpid());
  }
  job(const job&) = delete;
  job& operator=(const job&) = delete;
  ~job() {
    for (auto& r : ranks_)
      if (r.fd >= 0) ::close(r.fd);
  }

  int run() {
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
    for (int r = 0; r < opts_.nranks; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (!start_rank(r, paths[i], commands[i])) {
        raise_status(1);
        terminate();
        break;
      }
    }
    serve();
    return status_;
  }

 private:
  bool install_signal_handlers() {
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

  bool start_rank(int r, const std::string& path, std::vector<std::string> args) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      std::fprintf(stderr, "lcrun: cannot create the PMI socket for rank %d: %s\n", r,
                   std::strerror(errno));
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
    rank_state& rs = ranks_[r];
    rs.pid = pid;
    rs.fd = sv[0];
    rs.running = true;
    ++running_;
    return true;
  }

  void serve() {
    std::vector<pollfd> fds;
    std::vector<int> owner;  // fds[i] belongs to rank owner[i]; -1: the self-pipe
    while (running_ > 0) {
      fds.clear();
      owner.clear();
      fds.push_back({signal_pipe[0], POLLIN, 0});
      owner.push_back(-1);
      for (int r = 0; r < opts_.nranks; ++r) {
        const rank_state& rs = ranks_[r];
        if (rs.fd < 0) continue;
        const bool backlog = pending_replies(rs) >= max_pending_replies;
        fds.push_back({rs.fd,
                       static_cast<short>((backlog ? 0 : POLLIN) |
                                          (pending_replies(rs) > 0 ? POLLOUT : 0)),
                       0});
        owner.push_back(r);
      }
      int n = ::poll(fds.data(), fds.size(), poll_timeout_ms());
      if (n < 0 && errno != EINTR) {
        std::fprintf(stderr, "lcrun: poll: %s\n", std::strerror(errno));
        raise_status(1);
        terminate();
      }
      if (n > 0) {
        for (std::size_t i = 0; i < fds.size(); ++i) {
          if (fds[i].revents == 0) continue;
          if (owner[i] < 0) {
            drain_signals();
            continue;
          }
          rank_state& rs = ranks_[owner[i]];
          if (rs.fd != fds[i].fd) continue;  // closed while handling an earlier entry
          if (fds[i].revents & POLLOUT) flush(owner[i]);
          if (rs.fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) receive(owner[i]);
        }
      }
      reap();
      check_deadlines();
      if (gave_up_) break;
    }
  }

  int poll_timeout_ms() const {
    // At most a second: a lost wakeup then only delays reaping, never hangs.
    auto wait = std::chrono::milliseconds(1000);
    auto now = steady::now();
    auto until = [&](steady::time_point t) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - now) +
                  std::chrono::milliseconds(1);
      wait = std::max(std::chrono::milliseconds(0), std::min(wait, left));
    };
    if (opts_.timeout_s > 0 && !terminating_) until(timeout_deadline());
    if (terminating_ && !killed_) until(kill_at_);
    if (killed_) until(give_up_at_);
    return static_cast<int>(wait.count());
  }

  steady::time_point timeout_deadline() const {
    return start_ + std::chrono::duration_cast<steady::duration>(
                        std::chrono::duration<double>(opts_.timeout_s));
  }

  void drain_signals() {
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

  static std::size_t pending_replies(const rank_state& rs) { return rs.out.size() - rs.out_sent; }

  // Reads what the socket of rank r holds and serves complete lines; stops
  // at EAGAIN, EOF (closes the socket), an error, or once the rank has
  // max_pending_replies bytes of replies to read (serve() polls it for
  // input again when they have drained).
  void receive(int r) {
    rank_state& rs = ranks_[r];
    char buf[16384];
    while (rs.fd >= 0 && pending_replies(rs) < max_pending_replies) {
      ssize_t n = ::read(rs.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {
        close_rank(r);
        return;
      }
      rs.in.append(buf, static_cast<std::size_t>(n));
      // Every complete line is served, then the served prefix is dropped
      // in one go (erasing line by line would be quadratic).
      std::size_t start = 0, nl;
      while (rs.fd >= 0 && (nl = rs.in.find('\n', start)) != std::string::npos) {
        std::string line = rs.in.substr(start, nl - start);
        start = nl + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) handle(r, line);
      }
      if (rs.fd < 0) return;  // closed while serving a line
      rs.in.erase(0, start);
      if (rs.in.size() > max_line_length) {
        protocol_error(r, "sent a PMI line longer than " + std::to_string(max_line_length) +
                              " bytes");
        return;
      }
    }
  }

  void handle(int r, const std::string& line) {
    const bootstrap::pmi1_wire::line f = parse_line(line);
    auto field = [&](const char* k) { return f.find(k); };
    const std::string* cmd = field("cmd");
    if (cmd == nullptr) {
      protocol_error(r, "sent an unsupported PMI line '" + bootstrap::pmi1_wire::printable(line.substr(0, 200)) + "'");
      return;
    }
    rank_state& rs = ranks_[r];
    if (*cmd == "init") {
      const std::string* version = field("pmi_version");
      if (version != nullptr && *version != "1") {
        reply(r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1");
        return;
      }
      reply(r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    } else if (*cmd == "get_maxes") {
      reply(r, "cmd=maxes kvsname_max=" + std::to_string(kvsname_max) +
                   " keylen_max=" + std::to_string(keylen_max) +
                   " vallen_max=" + std::to_string(vallen_max));
    } else if (*cmd == "get_my_kvsname") {
      reply(r, "cmd=my_kvsname kvsname=" + kvsname_);
    } else if (*cmd == "get_universe_size") {
      reply(r, "cmd=universe_size size=" + std::to_string(opts_.nranks));
    } else if (*cmd == "get_appnum") {
      reply(r, "cmd=appnum appnum=0");
    } else if (*cmd == "put") {
      const std::string* key = field("key");
      const std::string* value = field("value");
      const std::string* kvs = field("kvsname");
      if (kvs != nullptr && *kvs != kvsname_)
        reply(r, "cmd=put_result rc=-1 msg=unknown_kvsname");
      else if (key == nullptr || key->empty() || value == nullptr)
        reply(r, "cmd=put_result rc=-1 msg=put_needs_key_and_value");
      else if (key->size() >= keylen_max || value->size() >= vallen_max)
        reply(r, "cmd=put_result rc=-1 msg=key_or_value_too_long");
      else {
        kvs_[*key] = *value;
        reply(r, "cmd=put_result rc=0 msg=success");
      }
    } else if (*cmd == "get") {
      const std::string* key = field("key");
      const std::string* kvs = field("kvsname");
      auto it = key != nullptr ? kvs_.find(*key) : kvs_.end();
      if (kvs != nullptr && *kvs != kvsname_)
        reply(r, "cmd=get_result rc=-1 msg=unknown_kvsname value=unknown");
      else if (it == kvs_.end())
        reply(r, "cmd=get_result rc=-1 msg=key_" + (key ? *key : std::string()) +
                     "_not_found value=unknown");
      else
        reply(r, "cmd=get_result rc=0 msg=success value=" + it->second);
    } else if (*cmd == "barrier_in") {
      if (rs.in_barrier) {
        protocol_error(r, "entered a PMI barrier twice");
        return;
      }
      rs.in_barrier = true;
      if (++in_barrier_ == opts_.nranks) {
        in_barrier_ = 0;
        for (int i = 0; i < opts_.nranks; ++i) {
          ranks_[i].in_barrier = false;
          reply(i, "cmd=barrier_out");
        }
      } else {
        check_barrier();
      }
    } else if (*cmd == "finalize") {
      rs.finalized = true;
      reply(r, "cmd=finalize_ack");
      check_barrier();
    } else if (*cmd == "abort") {
      long code = 1;
      if (const std::string* c = field("exitcode")) code = std::strtol(c->c_str(), nullptr, 10);
      const std::string* msg = field("error_msg");
      if (msg == nullptr) msg = field("message");
      std::fprintf(stderr, "lcrun: rank %d (pid %ld) called abort with exit code %ld: %s%s\n", r,
                   static_cast<long>(rs.pid), code,
                   msg != nullptr ? percent_decode(*msg).c_str() : "(no message)",
                   terminating_ ? "" : "; terminating the job");
      raise_status(code > 0 && code < 256 ? static_cast<int>(code) : 1);
      terminate();
    } else {
      protocol_error(r, "sent the unsupported PMI command '" + bootstrap::pmi1_wire::printable(cmd->substr(0, 100)) + "'");
    }
  }

  void reply(int r, const std::string& line) {
    rank_state& rs = ranks_[r];
    if (rs.fd < 0) return;
    rs.out += line;
    rs.out += '\n';
    flush(r);
  }

  // Sends what the socket accepts. The sent prefix of `out` is dropped only
  // once it is at least half of the buffer, so each byte is moved at most
  // once on average (erasing after every send would be quadratic).
  void flush(int r) {
    rank_state& rs = ranks_[r];
    while (rs.fd >= 0 && pending_replies(rs) > 0) {
      ssize_t n = ::send(rs.fd, rs.out.data() + rs.out_sent, pending_replies(rs),
                         MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // POLLOUT resumes
      if (n <= 0) {
        close_rank(r);
        return;
      }
      rs.out_sent += static_cast<std::size_t>(n);
    }
    if (rs.out_sent == rs.out.size()) {
      rs.out.clear();
      rs.out_sent = 0;
    } else if (rs.out_sent >= rs.out.size() / 2) {
      rs.out.erase(0, rs.out_sent);
      rs.out_sent = 0;
    }
  }

  void close_rank(int r) {
    rank_state& rs = ranks_[r];
    if (rs.fd < 0) return;
    ::close(rs.fd);
    rs.fd = -1;
    rs.in.clear();
    rs.out.clear();
    rs.out_sent = 0;
    check_barrier();
  }

  // A barrier that some rank can no longer join would wait forever: end the
  // job instead, naming the rank that left.
  void check_barrier() {
    if (in_barrier_ == 0 || terminating_) return;
    for (int r = 0; r < opts_.nranks; ++r) {
      const rank_state& rs = ranks_[r];
      if (rs.in_barrier) continue;
      const char* why = rs.finalized ? "called PMI finalize"
                        : !rs.running ? "exited"
                        : rs.fd < 0   ? "closed its PMI connection"
                                      : nullptr;
      if (why == nullptr) continue;
      std::fprintf(stderr,
                   "lcrun: rank %d (pid %ld) %s while other ranks wait in a PMI barrier; "
                   "terminating the job\n",
                   r, static_cast<long>(rs.pid), why);
      raise_status(1);
      terminate();
      return;
    }
  }

  void protocol_error(int r, const std::string& what) {
    if (!terminating_)
      std::fprintf(stderr, "lcrun: rank %d (pid %ld) %s; terminating the job\n", r,
                   static_cast<long>(ranks_[r].pid), what.c_str());
    raise_status(1);
    close_rank(r);
    terminate();
  }

  void reap() {
    for (int r = 0; r < opts_.nranks; ++r) {
      rank_state& rs = ranks_[r];
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
      if (rs.fd >= 0) receive(r);
      rs.running = false;
      --running_;
      if (got < 0) {  // cannot happen for our own child; count it as a failure
        raise_status(1);
        continue;
      }
      on_exit(r, wstatus);
    }
  }

  // Removes the /dev/shm files that a dead rank left: a rank ended by
  // SIGKILL, abort() or _exit() cannot remove them itself. LCI names its
  // shm regions "lci-<pid>-<random>" (lci/backend/ofi/shm_name.hpp);
  // libfabric's own default, which other libfabric programs use, is
  // "<pid>:...". Called for every rank that ended, whatever its status, and
  // before it is reaped: the zombie still holds the pid, so no other process
  // can own files under it yet. Only lcrun's own user's regular files are
  // removed.
  static void remove_shm_leftovers(pid_t pid) {
    DIR* dir = opendir("/dev/shm");
    if (!dir) return;
    const std::string pid_text = std::to_string(static_cast<long>(pid));
    const std::string prefixes[] = {"lci-" + pid_text + "-", pid_text + ":"};
    const uid_t self = ::geteuid();
    while (dirent* e = readdir(dir)) {
      bool match = false;
      for (const std::string& prefix : prefixes)
        if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) match = true;
      struct stat st;
      if (match && ::fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(st.st_mode) && st.st_uid == self)
        unlinkat(dirfd(dir), e->d_name, 0);
    }
    closedir(dir);
  }

  void on_exit(int r, int wstatus) {
    rank_state& rs = ranks_[r];
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
      ours = rs.signalled && (sig == SIGTERM || sig == SIGKILL);
    }
    if (ours) return;  // a consequence of the failure already reported
    raise_status(code);
    if (code != 0 && !terminating_) {
      std::fprintf(stderr, "lcrun: rank %d (pid %ld) %s%s\n", r, static_cast<long>(rs.pid),
                   how.c_str(), running_ > 0 ? "; terminating the other ranks" : "");
      terminate();
    } else {
      check_barrier();
    }
  }

  void check_deadlines() {
    auto now = steady::now();
    if (!terminating_ && opts_.timeout_s > 0 && now >= timeout_deadline()) {
      std::fprintf(stderr, "lcrun: LCRUN_TIMEOUT=%g s expired; terminating the ranks\n",
                   opts_.timeout_s);
      raise_status(124);
      terminate();
    }
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

  // Sends SIGTERM to every running rank (once) and arms the SIGKILL timer.
  void terminate() {
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

  void kill_all() {
    terminating_ = true;
    killed_ = true;
    give_up_at_ = steady::now() + kill_grace;
    for (auto& rs : ranks_) {
      if (!rs.running) continue;
      ::kill(rs.pid, SIGKILL);
      rs.signalled = true;
    }
  }

  void raise_status(int s) { status_ = std::max(status_, s); }

  options opts_;
  std::vector<rank_state> ranks_;
  std::map<std::string, std::string> kvs_;
  std::string kvsname_;
  int running_ = 0;     // ranks forked and not yet reaped
  int in_barrier_ = 0;  // ranks waiting in the current barrier
  int status_ = 0;
  bool terminating_ = false;
  bool killed_ = false;
  bool gave_up_ = false;
  steady::time_point start_, kill_at_, give_up_at_;
  struct sigaction original_sigpipe_ {};
  struct sigaction original_actions_[std::size(handled_signals)] {};
};

// A rank's PMI_FD must not collide with stdio: if lcrun was started with
// 0, 1 or 2 closed, the first socketpair would take that number.
void ensure_stdio_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) continue;
    int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

}  // namespace
}  // namespace lci::lcrun

int main(int argc, char** argv) {
  using namespace lci::lcrun;
  ensure_stdio_open();
  options opts;
  int early = parse_options(argc, argv, opts);
  if (early >= 0) return early;
  job j(std::move(opts));
  return j.run();
}
