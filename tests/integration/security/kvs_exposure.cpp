// What a process outside the job reads from the launcher's key-value store
// (2 ranks over libfabric tcp under mpiexec.hydra -pmi-port, whose proxy
// answers any process that connects to its TCP port; the test
// registration checks LCI's warning about it).
//
// Rank 0 starts an outsider: this program again (--outsider), with an
// empty environment and, when run as root, as uid/gid 65534, given only
// the proxy's address (a local user finds it with `ss -ltn`). The outsider
// speaks PMI-1 to the proxy (init, get_my_kvsname, get) and prints every
// value it finds under the names LCI publishes ("lci.<rank>.<name>": the
// libfabric address, key-exchange values, wrapped secrets, and the names
// under which earlier versions published the message key and the job
// token). Rank 0 then checks that it read something (the store was
// reachable) and that no value holds the device's message key or job token
// (LCIT_message_secret) in the hex form LCI writes: a process that reads
// the store must not learn a key that lets it forge messages.
#include <arpa/inet.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lci.h"

#include "harness.hpp"
#include "test_hooks.h"

using namespace lci_test;

namespace {

std::string hex(const void* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char b = static_cast<const unsigned char*>(p)[i];
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

// ---- the outsider ----

int g_fd = -1;
std::string g_in;

bool send_line(const std::string& l) {
  const std::string s = l + "\n";
  return write(g_fd, s.data(), s.size()) == static_cast<ssize_t>(s.size());
}

// One reply line, within 10 s.
bool read_line(std::string& out) {
  for (int waited = 0; waited < 100;) {
    const size_t nl = g_in.find('\n');
    if (nl != std::string::npos) {
      out = g_in.substr(0, nl);
      g_in.erase(0, nl + 1);
      return true;
    }
    pollfd p{g_fd, POLLIN, 0};
    if (poll(&p, 1, 100) == 0) {
      ++waited;
      continue;
    }
    char buf[4096];
    const ssize_t n = read(g_fd, buf, sizeof buf);
    if (n <= 0) return false;
    g_in.append(buf, static_cast<size_t>(n));
  }
  return false;
}

std::string field(const std::string& line, const std::string& name) {
  const std::string k = " " + name + "=";
  size_t at = (" " + line).find(k);
  if (at == std::string::npos) return "";
  at += k.size() - 1;
  return line.substr(at, line.find(' ', at) - at);
}

int outsider(const char* host, const char* port, int nranks) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host, port, &hints, &res) != 0) return 2;
  for (addrinfo* a = res; a && g_fd < 0; a = a->ai_next) {
    g_fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (g_fd >= 0 && connect(g_fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(g_fd);
      g_fd = -1;
    }
  }
  freeaddrinfo(res);
  if (g_fd < 0) return 2;
  std::string line;
  if (!send_line("cmd=init pmi_version=1 pmi_subversion=1") || !read_line(line)) return 2;
  if (!send_line("cmd=get_my_kvsname") || !read_line(line)) return 2;
  const std::string kvs = field(line, "kvsname");
  if (kvs.empty()) return 2;
  std::vector<std::string> names = {"ofi0", "ofidh0", "ofiauth0", "ofitoken0", "ofipid0", "native0"};
  for (int r = 0; r < nranks; ++r) names.push_back("ofiwrap0." + std::to_string(r));
  for (int r = 0; r < nranks; ++r) {
    for (const std::string& n : names) {
      const std::string key = "lci." + std::to_string(r) + "." + n;
      if (!send_line("cmd=get kvsname=" + kvs + " key=" + key) || !read_line(line)) return 2;
      if (field(line, "rc") == "0") printf("%s %s\n", key.c_str(), field(line, "value").c_str());
    }
  }
  fflush(stdout);
  close(g_fd);
  return 0;
}

// ---- the job ----

// Runs the outsider and returns what it printed.
std::string run_outsider(const char* self) {
  const char* port_env = getenv("PMI_PORT");
  if (!port_env) die("PMI_PORT is not set: run under mpiexec.hydra -pmi-port");
  const std::string address = port_env;
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) die("PMI_PORT='%s' is not host:port", port_env);
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  const std::string ranks = std::to_string(LCI_NUM_PROCESSES);
  int out[2];
  if (pipe(out) != 0) die("pipe failed");
  const bool root = geteuid() == 0;
  printf("rank 0: the outsider runs as uid %d, with no environment\n", root ? 65534 : static_cast<int>(geteuid()));
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) die("fork failed");
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    if (root && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    char* argv[] = {const_cast<char*>(self), const_cast<char*>("--outsider"),
                    const_cast<char*>(host.c_str()), const_cast<char*>(port.c_str()),
                    const_cast<char*>(ranks.c_str()), nullptr};
    char* envp[] = {nullptr};
    execve(self, argv, envp);
    _exit(4);
  }
  close(out[1]);
  std::string text;
  deadline dl(30);
  for (;;) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 100) == 0) {
      if (dl.passed()) die("the outsider did not finish within 30 s");
      continue;
    }
    char buf[4096];
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the outsider failed (status %d)", status);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "--outsider") == 0) return outsider(argv[2], argv[3], atoi(argv[4]));
  harness_init(120);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  if (LCI_RANK == 0) {
    uint64_t secret[3] = {};
    OK(LCIT_message_secret(LCI_UR_DEVICE, secret));
    EXPECT(secret[0] != 0 || secret[1] != 0, "the device has no message key (not tcp?)");
    const uint32_t token = static_cast<uint32_t>(secret[2]);
    const std::string text = run_outsider(argv[0]);
    fputs(text.c_str(), stdout);
    EXPECT(text.find("lci.0.ofi0 ") != std::string::npos,
           "the outsider read nothing from the store (the exposure was not reproduced)");
    const std::string forms[] = {hex(secret, 16), hex(&secret[0], 8), hex(&secret[1], 8),
                                 hex(&token, 4)};
    for (const std::string& f : forms)
      EXPECT(text.find(f) == std::string::npos,
             "the outsider read the message key or the job token (%s) from the store", f.c_str());
  }
  // The agreed key works: a barrier's messages pass authentication.
  OK(LCI_barrier());
  return harness_finish("kvs_exposure");
}
