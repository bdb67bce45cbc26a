// pmi_flood: a rank that sends PMI-1 requests to lcrun without reading the
// replies, to check that lcrun's memory stays bounded. Run as
// "lcrun -n 1 pmi_flood [RSS_LIMIT_MIB]" (lcrun must be the parent).
//
// It puts one 1000-byte value, then writes "cmd=get key=big" (16 bytes, a
// 1 KiB reply each) without reading, until 4 MiB are written, the socket
// stays full for 2 s, or lcrun's VmRSS (/proc/<parent>/status) passes the
// limit (default 32 MiB). Then it checks lcrun's VmRSS, reads every reply
// (which must all arrive, in 30 s at most) and checks that one more request
// is still served. Exit status 0 when all holds, 1 otherwise.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using steady = std::chrono::steady_clock;

int fd = -1;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "pmi_flood: FAILED: %s\n", what.c_str());
  std::exit(1);
}

long rss_kib(pid_t pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  std::fclose(f);
  return kib;
}

// Waits (at most until `deadline`) for fd to be ready for `events`.
bool wait_for(short events, steady::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) fail(std::string("poll: ") + std::strerror(errno));
  }
}

void write_all(const std::string& s) {
  auto deadline = steady::now() + std::chrono::seconds(10);
  for (std::size_t done = 0; done < s.size();) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(POLLOUT, deadline)) fail("lcrun accepts no request for 10 s");
    } else {
      fail(std::string("write: ") + std::strerror(errno));
    }
  }
}

// Reads one reply line (at most until `deadline`).
std::string buffered;
std::string read_line(steady::time_point deadline) {
  for (;;) {
    std::size_t nl = buffered.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffered.substr(0, nl);
      buffered.erase(0, nl + 1);
      return line;
    }
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      buffered.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(POLLIN, deadline)) fail("no reply from lcrun in time");
    } else {
      fail("lcrun closed the PMI connection");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long limit_kib = (argc > 1 ? std::atol(argv[1]) : 32) * 1024;
  const char* fd_text = std::getenv("PMI_FD");
  if (!fd_text) fail("no PMI_FD (run me under lcrun)");
  fd = std::atoi(fd_text);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  const pid_t lcrun = ::getppid();
  const long rss_start = rss_kib(lcrun);
  if (rss_start < 0) fail("cannot read lcrun's VmRSS");

  const std::string value(1000, 'v');
  write_all("cmd=put key=big value=" + value + "\n");
  std::string reply = read_line(steady::now() + std::chrono::seconds(10));
  if (reply.find("rc=0") == std::string::npos) fail("put refused: " + reply);

  const std::string request = "cmd=get key=big\n";
  const std::size_t max_bytes = 4u << 20;
  std::string chunk;
  for (int i = 0; i < 256; ++i) chunk += request;
  std::size_t written = 0, offset = 0;
  long rss_peak = rss_start;
  auto stalled_since = steady::now();
  bool stalled = false;
  while (written < max_bytes) {
    ssize_t n = ::write(fd, chunk.data() + offset, chunk.size() - offset);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      offset = (offset + static_cast<std::size_t>(n)) % chunk.size();
      stalled_since = steady::now();
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (steady::now() - stalled_since > std::chrono::seconds(2)) {
        stalled = true;
        break;
      }
      wait_for(POLLOUT, steady::now() + std::chrono::milliseconds(100));
    } else {
      fail(std::string("write: ") + std::strerror(errno));
    }
    long rss = rss_kib(lcrun);
    if (rss > rss_peak) rss_peak = rss;
    if (rss_peak > limit_kib) break;
  }
  long rss = rss_kib(lcrun);
  if (rss > rss_peak) rss_peak = rss;
  std::printf("pmi_flood: wrote %zu bytes of requests without reading (%s); lcrun VmRSS %ld kB "
              "at the start, %ld kB at the peak (limit %ld kB)\n",
              written, stalled ? "lcrun stopped reading" : "stopped", rss_start, rss_peak,
              limit_kib);
  std::fflush(stdout);
  if (rss_peak > limit_kib) fail("lcrun's memory grew past the limit");

  // Every complete request gets its reply, and lcrun still serves.
  const std::size_t requests = written / request.size();
  const std::size_t partial = written % request.size();
  if (partial > 0) write_all(request.substr(partial));
  const std::size_t expected = requests + (partial > 0 ? 1 : 0);
  auto deadline = steady::now() + std::chrono::seconds(30);
  for (std::size_t i = 0; i < expected; ++i) {
    reply = read_line(deadline);
    if (reply.find("rc=0") == std::string::npos || reply.find(value) == std::string::npos)
      fail("reply " + std::to_string(i) + " is wrong: " + reply.substr(0, 100));
  }
  write_all("cmd=get_universe_size\n");
  reply = read_line(steady::now() + std::chrono::seconds(10));
  if (reply != "cmd=universe_size size=1") fail("unexpected reply: " + reply);
  std::printf("pmi_flood: all %zu replies arrived; lcrun still serves\n", expected);
  return 0;
}
