// A PMI client swarm: one process speaks the PMI-1 wire protocol for N
// simulated ranks against lcrun's PMI server (tools/lcrun/pmi_server.cpp,
// with lcrun's event loop, pmi_server::serve), which runs
// in a child process of its own, without starting N rank processes.
//
// Each simulated rank does what LCI's bootstrap does at start-up and
// teardown (lci/bootstrap/pmi1.cpp): init, get_maxes, get_my_kvsname, one
// put of its address, a barrier, a get of k neighbours' addresses (every
// value checked), a second barrier and finalize. Requests of all ranks are
// sent in one pass per phase (as N processes would, at once) and the phase
// ends when every rank has its reply. Then rank 0 times sequential gets
// into the full store (the latency of one request), and the server's CPU
// time comes from its rusage.
//
// usage: pmi_swarm [--ranks N[,N...]] [--value-bytes B] [--neighbours K]
//                  [--timeout S]
// Prints one table row per N and phase; exits 1 on a wrong value, a
// protocol error or the timeout (bounded: --timeout seconds per N, 120 by
// default).
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/lcrun/pmi_server.hpp"

namespace {

using clk = std::chrono::steady_clock;

[[noreturn, gnu::format(printf, 1, 2)]] void die(const char* fmt, ...) {
  std::fprintf(stderr, "pmi_swarm: ");
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "\n");
  std::exit(1);
}

// The server's view of its job: every rank runs until it closes its
// connection; nobody fails.
class swarm_job final : public lci::lcrun::pmi_job {
 public:
  pid_t pid(int) const override { return 0; }
  bool running(int) const override { return true; }
  bool failed(int) const override { return false; }
  bool keeps_going() const override { return false; }
  bool terminating() const override { return ended; }
  void raise_status(int s) override {
    if (s > status) status = s;
  }
  void terminate() override { ended = true; }
  bool ended = false;
  int status = 0;
};

// One descriptor per message over a unix socket (SCM_RIGHTS).
struct fd_message {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  fd_message() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
  }
};

void send_fd(int chan, int fd) {
  fd_message m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (sendmsg(chan, &m.msg, 0) != 1) die("sendmsg: %s", std::strerror(errno));
}

int receive_fd(int chan) {
  fd_message m;
  if (recvmsg(chan, &m.msg, 0) != 1) die("recvmsg: %s", std::strerror(errno));
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
    die("recvmsg: no descriptor");
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

// The server process: lcrun's PMI server and event loop over the ranks'
// sockets until every one is closed. Writes its statistics to `report`.
[[noreturn]] void serve(int chan, int n, int report, double timeout_s) {
  std::vector<int> fds(static_cast<size_t>(n));
  for (int& fd : fds) fd = receive_fd(chan);
  close(chan);
  swarm_job job;
  lci::lcrun::pmi_server server(n, "swarm", job);
  for (int r = 0; r < n; ++r) {
    const int fd = fds[static_cast<size_t>(r)];
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    server.attach(r, fd);
  }
  const auto end = clk::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  while (!job.ended && server.open_connections() > 0 && clk::now() < end) server.serve(1000);
  const auto& s = server.statistics();
  const std::string line =
      std::to_string(s.puts) + " " + std::to_string(s.gets) + " " + std::to_string(s.barriers) +
      " " + std::to_string(s.bytes_in) + " " + std::to_string(s.bytes_out) + " " +
      std::to_string(job.status) + "\n";
  if (write(report, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(3);
  _exit(job.ended || server.open_connections() > 0 ? 2 : 0);
}

// The client side: N sockets, one per simulated rank, read through epoll.
struct swarm {
  int n;
  std::vector<int> fd;
  std::vector<std::string> in;     // bytes past the last complete line
  std::vector<std::string> lines;  // the replies of the current phase, one per rank
  int ep = -1;
  clk::time_point deadline;

  void send(int r, const std::string& line) {
    const std::string l = line + "\n";
    size_t off = 0;
    while (off < l.size()) {
      const ssize_t k = write(fd[static_cast<size_t>(r)], l.data() + off, l.size() - off);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) die("rank %d: write failed", r);
      off += static_cast<size_t>(k);
    }
  }

  // Waits until every rank has `want` more reply lines; returns them joined
  // per rank (newline-separated).
  void collect(int want) {
    std::vector<int> have(static_cast<size_t>(n), 0);
    for (auto& l : lines) l.clear();
    int done = 0;
    std::vector<epoll_event> ev(1024);
    char buf[65536];
    while (done < n) {
      if (clk::now() > deadline) die("timed out with %d ranks still waiting", n - done);
      const int k = epoll_wait(ep, ev.data(), static_cast<int>(ev.size()), 1000);
      for (int i = 0; i < k; ++i) {
        const int r = static_cast<int>(ev[static_cast<size_t>(i)].data.u32);
        const ssize_t m = read(fd[static_cast<size_t>(r)], buf, sizeof buf);
        if (m <= 0) {
          if (m < 0 && (errno == EAGAIN || errno == EINTR)) continue;
          die("rank %d: the server closed its connection", r);
        }
        std::string& s = in[static_cast<size_t>(r)];
        s.append(buf, static_cast<size_t>(m));
        size_t nl;
        while ((nl = s.find('\n')) != std::string::npos) {
          lines[static_cast<size_t>(r)] += s.substr(0, nl + 1);
          s.erase(0, nl + 1);
          if (++have[static_cast<size_t>(r)] == want) ++done;
        }
      }
    }
  }
};

std::string value_of(int r, int bytes) {
  std::string v = "addr" + std::to_string(r) + "-";
  while (static_cast<int>(v.size()) < bytes)
    v += static_cast<char>('a' + (v.size() * 7 + static_cast<size_t>(r)) % 26);
  return v;
}

struct phase_time {
  const char* name;
  double s;
  long ops;
};

// One job of n simulated ranks; false on a wrong reply.
bool run(int n, int value_bytes, int k, double timeout_s) {
  int chan[2], report[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, chan) != 0 || pipe(report) != 0)
    die("socketpair: %s", std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) die("fork: %s", std::strerror(errno));
  if (pid == 0) {
    close(chan[0]);
    close(report[0]);
    serve(chan[1], n, report[1], timeout_s);
  }
  close(chan[1]);
  close(report[1]);
  swarm w;
  w.n = n;
  w.fd.resize(static_cast<size_t>(n));
  w.in.resize(static_cast<size_t>(n));
  w.lines.resize(static_cast<size_t>(n));
  w.ep = epoll_create1(EPOLL_CLOEXEC);
  w.deadline = clk::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  for (int r = 0; r < n; ++r) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      die("socketpair for rank %d: %s (raise ulimit -n)", r, std::strerror(errno));
    send_fd(chan[0], sv[1]);
    close(sv[1]);
    w.fd[static_cast<size_t>(r)] = sv[0];
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.u32 = static_cast<uint32_t>(r);
    epoll_ctl(w.ep, EPOLL_CTL_ADD, sv[0], &e);
  }
  close(chan[0]);

  std::vector<phase_time> times;
  bool ok = true;
  auto expect = [&](int r, const char* what) {
    if (w.lines[static_cast<size_t>(r)].find(what) == std::string::npos) {
      std::fprintf(stderr, "pmi_swarm: rank %d: expected '%s', got '%s'\n", r, what,
                   w.lines[static_cast<size_t>(r)].c_str());
      ok = false;
    }
  };
  auto timed = [&](const char* name, long ops, auto&& body) {
    const auto t0 = clk::now();
    body();
    times.push_back({name, std::chrono::duration<double>(clk::now() - t0).count(), ops});
  };
  timed("init", 3L * n, [&] {
    for (int r = 0; r < n; ++r) {
      w.send(r, "cmd=init pmi_version=1 pmi_subversion=1");
      w.send(r, "cmd=get_maxes");
      w.send(r, "cmd=get_my_kvsname");
    }
    w.collect(3);
    for (int r = 0; r < n; ++r) expect(r, "kvsname=swarm");
  });
  timed("put", n, [&] {
    for (int r = 0; r < n; ++r)
      w.send(r, "cmd=put kvsname=swarm key=a" + std::to_string(r) +
                    " value=" + value_of(r, value_bytes));
    w.collect(1);
    for (int r = 0; r < n; ++r) expect(r, "rc=0");
  });
  auto barrier = [&] {
    for (int r = 0; r < n; ++r) w.send(r, "cmd=barrier_in");
    w.collect(1);
    for (int r = 0; r < n; ++r) expect(r, "cmd=barrier_out");
  };
  timed("barrier", n, barrier);
  long wrong = 0;
  timed("get", static_cast<long>(k) * n, [&] {
    for (int r = 0; r < n; ++r)
      for (int j = 1; j <= k; ++j)
        w.send(r, "cmd=get kvsname=swarm key=a" + std::to_string((r + j) % n));
    w.collect(k);
    for (int r = 0; r < n; ++r) {
      std::string want;
      for (int j = 1; j <= k; ++j)
        want += "cmd=get_result rc=0 msg=success value=" + value_of((r + j) % n, value_bytes) +
                "\n";
      if (w.lines[static_cast<size_t>(r)] != want) ++wrong;
    }
  });
  // One request at a time from rank 0 into the full store.
  const int probes = 200;
  const auto l0 = clk::now();
  for (int i = 0; i < probes; ++i) {
    const int key = static_cast<int>((static_cast<long>(i) * 7919) % n);
    w.send(0, "cmd=get kvsname=swarm key=a" + std::to_string(key));
    std::string got;
    char c;
    while (true) {  // blocking read of one line on rank 0's socket
      const ssize_t m = read(w.fd[0], &c, 1);
      if (m < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (m <= 0) die("rank 0: the server closed its connection");
      if (c == '\n') break;
      got += c;
    }
    if (got != "cmd=get_result rc=0 msg=success value=" + value_of(key, value_bytes)) ++wrong;
  }
  const double latency_us = std::chrono::duration<double>(clk::now() - l0).count() / probes * 1e6;
  timed("barrier", n, barrier);
  timed("finalize", n, [&] {
    for (int r = 0; r < n; ++r) w.send(r, "cmd=finalize");
    w.collect(1);
    for (int r = 0; r < n; ++r) expect(r, "cmd=finalize_ack");
  });
  for (int r = 0; r < n; ++r) close(w.fd[static_cast<size_t>(r)]);
  close(w.ep);
  char rep[256] = {};
  ssize_t got = 0, m;
  while ((m = read(report[0], rep + got, sizeof rep - 1 - static_cast<size_t>(got))) > 0) got += m;
  close(report[0]);
  rusage ru{};
  int status = 0;
  if (wait4(pid, &status, 0, &ru) != pid) die("wait4: %s", std::strerror(errno));
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  unsigned long long puts = 0, gets = 0, barriers = 0, in = 0, out = 0;
  int job_status = -1;
  if (std::sscanf(rep, "%llu %llu %llu %llu %llu %d", &puts, &gets, &barriers, &in, &out,
                  &job_status) != 6 ||
      !WIFEXITED(status) || WEXITSTATUS(status) != 0 || job_status != 0) {
    std::fprintf(stderr, "pmi_swarm: the server ended badly (exit %d, report '%s')\n",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, rep);
    ok = false;
  }
  double total = 0;
  for (const phase_time& t : times) {
    total += t.s;
    std::printf("| %d | %s | %.1f | %ld | %.2f |\n", n, t.name, t.s * 1e3, t.ops,
                t.s * 1e6 / static_cast<double>(t.ops));
  }
  const unsigned long long requests = 6ULL * static_cast<unsigned long long>(n) +
                                      static_cast<unsigned long long>(k) * n + probes;
  std::printf("pmi_swarm: %d ranks: all phases %.1f ms; one get into the full store %.1f us; "
              "server CPU %.3f s (%.2f us per request, %llu requests: %llu puts, %llu gets, "
              "%llu barriers), %llu bytes in, %llu bytes out (%.0f per rank); values checked "
              "%ld, wrong %ld\n",
              n, total * 1e3, latency_us, cpu, cpu * 1e6 / static_cast<double>(requests), requests,
              puts, gets, barriers, in, out, static_cast<double>(in + out) / n,
              static_cast<long>(k) * n + probes, wrong);
  std::fflush(stdout);
  return ok && wrong == 0 && gets == static_cast<unsigned long long>(k) * n + probes &&
         puts == static_cast<unsigned long long>(n) && barriers == 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{1000, 4000, 16000};
  int value_bytes = 64, k = 2;
  double timeout_s = 120;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--ranks" && v) {
      sizes.clear();
      for (const char* p = v; *p;) {
        char* e;
        const long x = std::strtol(p, &e, 10);
        if (e == p || x < 2) die("--ranks: a comma-separated list of counts of at least 2");
        sizes.push_back(static_cast<int>(x));
        p = *e == ',' ? e + 1 : e;
        if (*e != ',' && *e != '\0') die("--ranks: a comma-separated list");
      }
      ++i;
    } else if (a == "--value-bytes" && v) {
      value_bytes = std::atoi(v);
      if (value_bytes < 16 || value_bytes > 1000) die("--value-bytes: 16 to 1000");
      ++i;
    } else if (a == "--neighbours" && v) {
      k = std::atoi(v);
      if (k < 1) die("--neighbours: at least 1");
      ++i;
    } else if (a == "--timeout" && v) {
      timeout_s = std::atof(v);
      ++i;
    } else {
      std::printf("usage: pmi_swarm [--ranks N[,N...]] [--value-bytes B] [--neighbours K] "
                  "[--timeout S]\n");
      return a == "--help" ? 0 : 1;
    }
  }
  // Each rank is one descriptor in this process and one in the server's.
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  std::printf("| ranks | phase | ms | requests | us per request |\n|---:|---|---:|---:|---:|\n");
  bool ok = true;
  for (int n : sizes) {
    if (static_cast<rlim_t>(n) + 64 > rl.rlim_cur) {
      const int fit = static_cast<int>(rl.rlim_cur > 128 ? rl.rlim_cur - 64 : 64);
      std::printf("pmi_swarm: %d ranks asked, %d run: the descriptor limit (ulimit -Hn) is "
                  "%llu\n",
                  n, fit, static_cast<unsigned long long>(rl.rlim_cur));
      n = fit;
    }
    ok = run(n, value_bytes, k, timeout_s) && ok;
  }
  std::printf("pmi_swarm: %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
