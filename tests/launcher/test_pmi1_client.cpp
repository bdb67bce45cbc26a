// Unit tests of the bootstrap clients against a fake PMI-1 server: replies
// that arrive one byte at a time, EINTR during a wait, the PMI_PORT
// handshake, error replies and a closed connection (each must end the
// process with a message naming the PMI command), key hashing, open()'s
// choice of bootstrap, and the SIGUSR1 that Hydra sends when a rank fails
// (LCI_PEER_FAILURE=continue: survive_failures()). Cases that must end the process run in a forked child
// whose stderr and exit status the parent checks, with a bounded wait.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "lci/bootstrap/bootstrap.hpp"

namespace {

// Sets and unsets environment variables for one test, restoring them after.
class env_guard {
 public:
  env_guard(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* name : {"PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE", "LCI_PMI",
                             "LCI_LCRUN", "LCT_PMI_BACKEND", "PMIX_RANK", "PMIX_NAMESPACE"})
      set(name, nullptr);
    for (const auto& v : vars) set(v.first, v.second);
  }
  ~env_guard() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second.first)
        ::setenv(it->first.c_str(), it->second.second.c_str(), 1);
      else
        ::unsetenv(it->first.c_str());
    }
  }

 private:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.emplace_back(name, std::make_pair(old != nullptr, old ? std::string(old) : ""));
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  std::vector<std::pair<std::string, std::pair<bool, std::string>>> saved_;
};

// What the fake server does with one request line: the text to send back
// (any number of lines, or nothing), or close the connection.
struct action {
  std::string text;
  bool close = false;
  int delay_ms = 0;
};

// A PMI-1 server on one stream, in a thread: a small KVS with the replies
// Hydra sends, unless `override` returns an action for a line first.
// `trickle` writes every reply one byte per write().
class fake_server {
 public:
  using override_fn = std::function<bool(const std::string& line, action& out)>;

  fake_server(int fd, bool trickle, override_fn override = nullptr)
      : fd_(fd), trickle_(trickle), override_(std::move(override)) {
    thread_ = std::thread([this] { loop(); });
  }
  ~fake_server() {
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  static std::string field(const std::string& line, const std::string& key) {
    std::size_t pos = line.find(" " + key + "=");
    if (pos == std::string::npos) return "";
    pos += key.size() + 2;
    return line.substr(pos, line.find(' ', pos) - pos);
  }

  action standard(const std::string& line) {
    std::string cmd = field(" " + line, "cmd");
    if (cmd == "init") return {"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"};
    if (cmd == "get_maxes") return {"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"};
    if (cmd == "get_my_kvsname") return {"cmd=my_kvsname kvsname=fake_kvs\n"};
    if (cmd == "put") {
      kvs_[field(line, "key")] = field(line, "value");
      return {"cmd=put_result rc=0 msg=success\n"};
    }
    if (cmd == "barrier_in") return {"cmd=barrier_out\n"};
    if (cmd == "get") {
      auto it = kvs_.find(field(line, "key"));
      if (it == kvs_.end()) return {"cmd=get_result rc=-1 msg=key_not_found value=unknown\n"};
      return {"cmd=get_result rc=0 msg=success value=" + it->second + "\n"};
    }
    if (cmd == "finalize") return {"cmd=finalize_ack\n"};
    if (cmd == "abort") return {"", true};
    return {"cmd=error msg=unexpected\n"};
  }

  void loop() {
    // Signals (the EINTR test's SIGALRM) belong to the client's thread.
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::string in;
    char buf[512];
    for (;;) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      in.append(buf, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = in.find('\n')) != std::string::npos) {
        std::string line = in.substr(0, nl);
        in.erase(0, nl + 1);
        {
          std::lock_guard<std::mutex> lock(mutex_);
          requests_.push_back(line);
        }
        action a;
        if (!override_ || !override_(line, a)) a = standard(line);
        if (a.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.delay_ms));
        if (a.close) {
          ::shutdown(fd_, SHUT_RDWR);
          return;
        }
        send_all(a.text);
      }
    }
  }

  void send_all(const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
      std::size_t chunk = trickle_ ? 1 : text.size() - done;
      ssize_t n = ::send(fd_, text.data() + done, chunk, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
      if (trickle_) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  int fd_;
  bool trickle_;
  override_fn override_;
  std::map<std::string, std::string> kvs_;
  std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

struct socket_pair {
  int server = -1, client = -1;
  socket_pair() {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    server = sv[0];
    client = sv[1];
  }
  std::string client_fd() const { return std::to_string(client); }
};

struct child_result {
  bool exited = false;
  int status = -1;
  std::string err;
};

// Runs `body` in a forked child with stderr captured; the child's exit
// status is whatever `body` ends it with (0 if it returns). Kills the child
// by its pid if it has not finished within 20 s.
child_result run_in_child(const std::function<void()>& body) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(p[0]);
    ::dup2(p[1], 2);
    ::close(p[1]);
    body();
    ::_exit(0);
  }
  ::close(p[1]);
  child_result result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  char buf[1024];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      ::kill(pid, SIGKILL);
      result.err += "\n[child killed after 20 s]";
      break;
    }
    pollfd pfd{p[0], POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = ::read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.err.append(buf, static_cast<std::size_t>(n));
  }
  ::close(p[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  result.exited = WIFEXITED(wstatus);
  result.status = result.exited ? WEXITSTATUS(wstatus) : -1;
  return result;
}

// The body of a child that talks to a fake server with `override` and
// performs `ops` on the bootstrap; fatal errors end the child.
void client_against(fake_server::override_fn override,
                    const std::function<void(lci::bootstrap::bootstrap&)>& ops) {
  socket_pair sp;
  fake_server server(sp.server, false, std::move(override));
  sp.server = -1;
  env_guard env({{"PMI_FD", sp.client_fd().c_str()}, {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}});
  auto bs = lci::bootstrap::open();
  ops(*bs);
  bs.reset();
}

}  // namespace

TEST_CASE("pmi1 reads replies that arrive one byte at a time") {
  socket_pair sp;
  fake_server server(sp.server, /*trickle=*/true);
  sp.server = -1;
  {
    env_guard env({{"PMI_FD", sp.client_fd().c_str()}, {"PMI_RANK", "0"}, {"PMI_SIZE", "1"}});
    auto bs = lci::bootstrap::open();
    CHECK(std::string(bs->name()) == "pmi1");
    CHECK(bs->rank() == 0);
    CHECK(bs->size() == 1);
    const std::string long_key(63, 'x');
    bs->put("addr", "a=b:c");
    bs->put(long_key, "long");
    bs->fence();
    CHECK(bs->get(0, "addr") == "a=b:c");
    CHECK(bs->get(0, long_key) == "long");
    bs->barrier();
  }  // the destructor sends finalize and closes the stream
  server.join();
  auto requests = server.requests();
  REQUIRE(requests.size() >= 4);
  CHECK(requests.front() == "cmd=init pmi_version=1 pmi_subversion=1");
  CHECK(requests.back() == "cmd=finalize");
  bool saw_namespaced = false, saw_hashed = false;
  for (const auto& r : requests) {
    if (r.find("cmd=put ") != 0) continue;
    std::size_t k = r.find(" key=") + 5;
    std::string key = r.substr(k, r.find(' ', k) - k);
    CHECK(key.size() < 64);  // fits the server's keylen_max of 64
    if (key == "lci.0.addr") saw_namespaced = true;
    if (key.rfind("lci.0.#", 0) == 0) saw_hashed = true;
  }
  CHECK(saw_namespaced);
  CHECK(saw_hashed);
}

TEST_CASE("pmi1 reports lcrun as its name when LCI_LCRUN=1") {
  socket_pair sp;
  fake_server server(sp.server, false);
  sp.server = -1;
  env_guard env({{"PMI_FD", sp.client_fd().c_str()},
                 {"PMI_RANK", "1"},
                 {"PMI_SIZE", "4"},
                 {"LCI_LCRUN", "1"}});
  auto bs = lci::bootstrap::open();
  CHECK(std::string(bs->name()) == "lcrun");
  CHECK(bs->rank() == 1);
  CHECK(bs->size() == 4);
}

namespace {
std::atomic<int> usr1s{0};
extern "C" void count_usr1(int) { usr1s.fetch_add(1, std::memory_order_relaxed); }

// In a child: opens pmi1 (named lcrun with LCI_LCRUN=1), checks what it says
// of its barriers after a failure, calls survive_failures() and raises
// SIGUSR1, then exits with 0 if still alive.
void survive_usr1(bool lcrun, bool own_handler) {
  if (own_handler) {
    struct sigaction sa {};
    sa.sa_handler = count_usr1;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, nullptr);
  }
  socket_pair sp;
  fake_server server(sp.server, false);
  sp.server = -1;
  env_guard env({{"PMI_FD", sp.client_fd().c_str()},
                 {"PMI_RANK", "0"},
                 {"PMI_SIZE", "1"},
                 {"LCI_LCRUN", lcrun ? "1" : nullptr}});
  auto bs = lci::bootstrap::open();
  if (bs->barriers_survive_failures() != lcrun) ::_exit(3);
  bs->survive_failures();
  ::raise(SIGUSR1);
  if (own_handler && usr1s.load() != 1) ::_exit(4);
  bs.reset();
  server.join();
  ::_exit(0);
}
}  // namespace

TEST_CASE("pmi1 under Hydra survives the SIGUSR1 of a failed rank after survive_failures()") {
  // Hydra (mpiexec -disable-auto-cleanup) signals the others when a rank
  // fails: LCI_PEER_FAILURE=continue must not end them.
  child_result hydra = run_in_child([] { survive_usr1(false, false); });
  CHECK(hydra.exited);
  CHECK(hydra.status == 0);
  // The program's own handler stays and sees the signal.
  child_result own = run_in_child([] { survive_usr1(false, true); });
  CHECK(own.exited);
  CHECK(own.status == 0);
  // lcrun sends no such signal and keeps its barriers among the living:
  // nothing is installed, SIGUSR1 keeps its default action.
  child_result lcrun = run_in_child([] { survive_usr1(true, false); });
  CHECK_FALSE(lcrun.exited);
}

namespace {
std::atomic<int> alarms{0};
extern "C" void count_alarm(int) { alarms.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

TEST_CASE("pmi1 waits through EINTR") {
  // SIGALRM without SA_RESTART every millisecond while the server holds the
  // barrier for 300 ms: the client's read() keeps failing with EINTR.
  struct sigaction sa {}, old_sa {};
  sa.sa_handler = count_alarm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  REQUIRE(::sigaction(SIGALRM, &sa, &old_sa) == 0);

  socket_pair sp;
  fake_server server(sp.server, false, [](const std::string& line, action& a) {
    if (line != "cmd=barrier_in") return false;
    a.text = "cmd=barrier_out\n";
    a.delay_ms = 300;
    return true;
  });
  sp.server = -1;
  env_guard env({{"PMI_FD", sp.client_fd().c_str()}, {"PMI_RANK", "0"}, {"PMI_SIZE", "1"}});
  auto bs = lci::bootstrap::open();
  itimerval every_ms{{0, 1000}, {0, 1000}};
  REQUIRE(::setitimer(ITIMER_REAL, &every_ms, nullptr) == 0);
  bs->barrier();
  itimerval off{};
  ::setitimer(ITIMER_REAL, &off, nullptr);
  ::sigaction(SIGALRM, &old_sa, nullptr);
  CHECK(alarms.load() > 0);
  bs->put("k", "v");
  bs->fence();
  CHECK(bs->get(0, "k") == "v");
}

TEST_CASE("pmi1 connects to PMI_PORT and takes rank and size from initack") {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string port = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  std::unique_ptr<fake_server> server;
  std::thread acceptor([&] {
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    server = std::make_unique<fake_server>(fd, false, [](const std::string& line, action& a) {
      if (line.rfind("cmd=initack", 0) != 0) return false;
      // All four lines in one chunk, as Hydra sends them.
      a.text = "cmd=initack\ncmd=set size=3\ncmd=set rank=2\ncmd=set debug=0\n";
      return true;
    });
  });
  {
    env_guard env({{"PMI_PORT", port.c_str()}, {"PMI_ID", "7"}});
    auto bs = lci::bootstrap::open();
    acceptor.join();
    CHECK(std::string(bs->name()) == "pmi1");
    CHECK(bs->rank() == 2);
    CHECK(bs->size() == 3);
    bs->put("k", "v2");
    bs->fence();
    CHECK(bs->get(2, "k") == "v2");
  }
  ::close(listener);
  REQUIRE(server != nullptr);
  server->join();
  auto requests = server->requests();
  REQUIRE(!requests.empty());
  CHECK(requests.front() == "cmd=initack pmiid=7");
  CHECK(requests.back() == "cmd=finalize");
}

TEST_CASE("pmi1 names the command when the server replies with an error") {
  auto r = run_in_child([] {
    client_against(
        [](const std::string& line, action& a) {
          if (line.rfind("cmd=put ", 0) != 0) return false;
          a.text = "cmd=put_result rc=-1 msg=disk_full\n";
          return true;
        },
        [](lci::bootstrap::bootstrap& bs) { bs.put("key", "value"); });
  });
  INFO(r.err);
  CHECK(r.exited);
  CHECK(r.status == 1);
  CHECK(r.err.find("'put'") != std::string::npos);
  CHECK(r.err.find("disk_full") != std::string::npos);
}

TEST_CASE("pmi1 names the command when the server closes the connection") {
  auto r = run_in_child([] {
    client_against(
        [](const std::string& line, action& a) {
          if (line != "cmd=get_maxes") return false;
          a.close = true;
          return true;
        },
        [](lci::bootstrap::bootstrap&) {});
  });
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("'get_maxes'") != std::string::npos);
  CHECK(r.err.find("closed") != std::string::npos);
}

TEST_CASE("pmi1 rejects a reply to another command") {
  auto r = run_in_child([] {
    client_against(
        [](const std::string& line, action& a) {
          if (line != "cmd=barrier_in") return false;
          a.text = "cmd=put_result rc=0\n";
          return true;
        },
        [](lci::bootstrap::bootstrap& bs) { bs.fence(); });
  });
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("'barrier_in'") != std::string::npos);
  CHECK(r.err.find("barrier_out") != std::string::npos);
}

TEST_CASE("pmi1 get of a missing key aborts the job naming the key") {
  auto r = run_in_child([] {
    client_against(nullptr, [](lci::bootstrap::bootstrap& bs) { (void)bs.get(1, "nothere"); });
  });
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("nothere") != std::string::npos);
}

TEST_CASE("pmi1 abort prints the message and exits with the code") {
  auto r = run_in_child([] {
    client_against(nullptr, [](lci::bootstrap::bootstrap& bs) { bs.abort(9, "out of memory"); });
  });
  INFO(r.err);
  CHECK(r.status == 9);
  CHECK(r.err.find("out of memory") != std::string::npos);
}

TEST_CASE("pmi1 rejects bad environments with a message") {
  {
    auto r = run_in_child([] {
      env_guard env({{"PMI_FD", "987"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "1"}});
      (void)lci::bootstrap::open();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("PMI_FD=987 is not an open file descriptor") != std::string::npos);
  }
  {
    auto r = run_in_child([] {
      socket_pair sp;
      env_guard env({{"PMI_FD", sp.client_fd().c_str()}, {"PMI_RANK", "3"}, {"PMI_SIZE", "2"}});
      (void)lci::bootstrap::open();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("rank 3 of 2") != std::string::npos);
  }
  {
    auto r = run_in_child([] {
      env_guard env({{"PMI_PORT", "nocolon"}, {"PMI_ID", "0"}});
      (void)lci::bootstrap::open();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("host:port") != std::string::npos);
  }
}

TEST_CASE("open() honours LCI_PMI") {
  {
    env_guard env({{"LCI_PMI", "local"}, {"PMI_FD", "987"}});
    auto bs = lci::bootstrap::open();
    CHECK(std::string(bs->name()) == "local");
  }
  {
    auto r = run_in_child([] {
      env_guard env({{"LCI_PMI", "bogus"}});
      (void)lci::bootstrap::open();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("LCI_PMI='bogus'") != std::string::npos);
  }
  {
    auto r = run_in_child([] {
      env_guard env({{"LCI_PMI", "lcrun"}});
      (void)lci::bootstrap::open();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("lcrun -n N") != std::string::npos);
  }
}

TEST_CASE("LCT_PMI_BACKEND (LCI 1.7.9) picks the first usable bootstrap of its list") {
  using lci::bootstrap::choose;
  {
    // srun --mpi=pmi2: PMI_FD is set, no PMIx variables; pmix is skipped
    // and pmi2 is served by the PMI-1 client.
    env_guard env({{"LCT_PMI_BACKEND", "pmix;pmi2;pmi1;local"}, {"PMI_FD", "987"}});
    auto c = choose();
    CHECK(std::string(c.name) == "pmi1");
    CHECK(c.reason == "LCT_PMI_BACKEND=pmix;pmi2;pmi1;local: pmi2, PMI_FD is set "
                      "(served by the PMI-1 client)");
  }
  {
    env_guard env({{"LCT_PMI_BACKEND", "pmi1"}, {"PMI_PORT", "localhost:1"}});
    auto c = choose();
    CHECK(std::string(c.name) == "pmi1");
    CHECK(c.reason == "LCT_PMI_BACKEND=pmi1: pmi1, PMI_PORT is set");
  }
  {
    // Separators: spaces and commas too; nothing usable before local.
    env_guard env({{"LCT_PMI_BACKEND", " pmi2, mpi file local"}});
    auto c = choose();
    CHECK(std::string(c.name) == "local");
    CHECK(c.reason == "LCT_PMI_BACKEND= pmi2, mpi file local: local");
    auto bs = lci::bootstrap::open();
    CHECK(std::string(bs->name()) == "local");
  }
  {
    // It outranks the launcher variables, as LCI_PMI does.
    env_guard env({{"LCT_PMI_BACKEND", "local"}, {"PMI_FD", "987"}});
    CHECK(std::string(choose().name) == "local");
  }
  {
    // LCI_PMI wins, and the reason says which variable decided.
    env_guard env({{"LCI_PMI", "local"}, {"LCT_PMI_BACKEND", "pmi2"}, {"PMI_FD", "987"}});
    auto c = choose();
    CHECK(std::string(c.name) == "local");
    CHECK(c.reason == "LCI_PMI=local, which overrides LCT_PMI_BACKEND=pmi2");
  }
  if (std::string(lci::bootstrap::built_bootstraps()).find("pmix") != std::string::npos) {
    env_guard env({{"LCT_PMI_BACKEND", "pmix,pmi1"}, {"PMIX_RANK", "0"},
                   {"PMIX_NAMESPACE", "ns"}, {"PMI_FD", "987"}});
    auto c = choose();
    CHECK(std::string(c.name) == "pmix");
    CHECK(c.reason == "LCT_PMI_BACKEND=pmix,pmi1: pmix, PMIX_RANK and PMIX_NAMESPACE are set");
  }
  {
    auto r = run_in_child([] {
      env_guard env({{"LCT_PMI_BACKEND", "pmi1;bogus"}});
      (void)choose();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("LCT_PMI_BACKEND=pmi1;bogus: 'bogus' is not one of: pmi1, pmi2, pmix, "
                     "local") != std::string::npos);
  }
  {
    // Nothing usable: a stop naming each entry and why, not a job of one.
    auto r = run_in_child([] {
      env_guard env({{"LCT_PMI_BACKEND", "pmi2;mpi"}});
      (void)lci::bootstrap::open();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("LCT_PMI_BACKEND=pmi2;mpi: none of the listed bootstraps can be used: pmi2 "
                     "(neither PMI_FD nor PMI_PORT is set); mpi (LCI 1.7.9's mpi bootstrap is "
                     "not provided by this LCI)") != std::string::npos);
  }
  {
    auto r = run_in_child([] {
      env_guard env({{"LCT_PMI_BACKEND", " ;, "}});
      (void)choose();
    });
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(r.err.find("names no bootstrap") != std::string::npos);
  }
}

TEST_CASE("local is rank 0 of 1 with an in-process store") {
  env_guard env({});
  auto bs = lci::bootstrap::open();
  CHECK(std::string(bs->name()) == "local");
  CHECK(bs->rank() == 0);
  CHECK(bs->size() == 1);
  bs->put("k", "v=1");
  bs->fence();
  bs->barrier();
  CHECK(bs->get(0, "k") == "v=1");

  auto r = run_in_child([&] { (void)bs->get(0, "missing_key"); });
  INFO(r.err);
  CHECK(r.status == 1);
  CHECK(r.err.find("missing_key") != std::string::npos);

  r = run_in_child([&] { bs->put("has space", "v"); });
  CHECK(r.status == 1);
  CHECK(r.err.find("has space") != std::string::npos);
}
