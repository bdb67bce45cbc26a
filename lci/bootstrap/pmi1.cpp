// pmi1: a client of the PMI-1 wire protocol (lcrun, MPICH's Hydra).
//
// The protocol is request/reply over one stream: every request is one text
// line "cmd=<name> key=value ...\n" and, except abort, gets exactly one reply
// line whose cmd names the reply (put -> put_result, ...). The stream is
//   - the inherited descriptor in PMI_FD (rank and size in PMI_RANK and
//     PMI_SIZE), or
//   - a TCP connection to PMI_PORT=host:port, opened with
//     "cmd=initack pmiid=<PMI_ID>", answered by "cmd=initack" and
//     "cmd=set size=|rank=|debug=" lines (Hydra's -pmi-port mode).
//
// Invariants: requests are serialized by mutex_, so a reply always belongs to
// the request just sent; in_ holds bytes already read past the last complete
// line (a server may send several lines in one chunk or one line in many).
// Keys are stored as "lci.<rank>.<key>" so get(rank, key) needs no per-rank
// namespace from the server; a key too long for the server's keylen_max is
// replaced by a hash of itself, identical on every rank.
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"
#include "lci/bootstrap/pmi1_wire.hpp"
#include "lci/util/log.hpp"

namespace lci::bootstrap {
namespace {

// A reply longer than this is a broken server, not a value we could use
// (values are at most 512 characters).
constexpr std::size_t max_line_length = 64 * 1024;
// How long abort() waits for the process manager to kill this process
// before exiting by itself.
constexpr int abort_wait_ms = 5000;
constexpr int abort_print_delay_ms = 200;

// Hydra's mpiexec -disable-auto-cleanup sends SIGUSR1 to every rank when
// one fails, whose default action ends the process: the survivors of
// LCI_PEER_FAILURE=continue catch it and carry on (LCI learns of the
// failure from its own transport, not from the signal).
void ignore_failure_signal(int) {}

constexpr const char* port_store_warning =
    "bootstrap: the launcher serves its key-value store on a TCP port (PMI_PORT: Hydra's "
    "-pmi-port) that answers any process that connects: what the ranks publish there can "
    "be read and replaced by any local user and any host that reaches the port. LCI "
    "publishes no secret there (the libfabric message key is agreed by X25519), but a "
    "process that writes the store during start-up can take the key's place; without "
    "-pmi-port Hydra hands each rank a private descriptor (PMI_FD). See docs/security.md";

// Replies are parsed by the wire code shared with lcrun's server.
using pmi1_wire::parse_int;
using reply = pmi1_wire::line;
using pmi1_wire::parse_line;


// Owns the stream to the process manager and frames it into lines.
class line_stream {
 public:
  line_stream() = default;
  line_stream(const line_stream&) = delete;
  line_stream& operator=(const line_stream&) = delete;
  ~line_stream() { close(); }

  void adopt(int fd) { fd_ = fd; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Writes all of `line` plus '\n'. On failure returns false and sets err.
  bool write_line(const std::string& line, std::string& err) {
    std::string data = line + "\n";
    std::size_t done = 0;
    while (done < data.size()) {
      // MSG_NOSIGNAL: a dead server must give EPIPE, not kill us with SIGPIPE.
      ssize_t n = use_send_ ? ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL)
                            : ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == ENOTSOCK && use_send_) {
        use_send_ = false;  // PMI_FD may be a pipe-like descriptor
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!wait_for(POLLOUT, -1, err)) return false;
        continue;
      }
      if (n <= 0) {
        err = std::string("write failed: ") + (n < 0 ? std::strerror(errno) : "no progress");
        return false;
      }
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Reads the next complete line (without '\n' or a trailing '\r').
  // timeout_ms < 0 waits forever. On failure returns false and sets err;
  // `closed` tells whether the peer closed the stream.
  bool read_line(std::string& line, std::string& err, bool& closed, int timeout_ms = -1) {
    closed = false;
    for (;;) {
      std::size_t nl = in_.find('\n');
      if (nl != std::string::npos) {
        line = in_.substr(0, nl);
        in_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return true;
      }
      if (in_.size() > max_line_length) {
        err = "reply line longer than " + std::to_string(max_line_length) + " bytes";
        return false;
      }
      if (timeout_ms >= 0 && !wait_for(POLLIN, timeout_ms, err)) return false;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!wait_for(POLLIN, -1, err)) return false;
        continue;
      }
      if (n < 0) {
        err = std::string("read failed: ") + std::strerror(errno);
        return false;
      }
      if (n == 0) {
        closed = true;
        err = "the process manager closed the connection";
        return false;
      }
      in_.append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  // Waits until fd_ is ready for `events`; false with err on timeout/error.
  // Only reached for non-blocking descriptors or an explicit timeout.
  bool wait_for(short events, int timeout_ms, std::string& err) {
    pollfd p{fd_, events, 0};
    for (;;) {
      int r = ::poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;  // restarting keeps the full timeout: fine here
      if (r < 0) {
        err = std::string("poll failed: ") + std::strerror(errno);
        return false;
      }
      if (r == 0) {
        err = "timed out";
        return false;
      }
      return true;  // POLLHUP/POLLERR: the following read/write reports it
    }
  }

  int fd_ = -1;
  bool use_send_ = true;
  std::string in_;
};

// Connects to "host:port" (or "[v6addr]:port"); fatal with a message on failure.
int connect_tcp(const std::string& address) {
  std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    detail::fatal("PMI_PORT='" + address + "' is not of the form host:port");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
  if (rc != 0)
    detail::fatal("cannot resolve PMI_PORT='" + address + "': " + ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(list, &::freeaddrinfo);

  std::string last_error = "no address";
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int r = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (r < 0 && errno == EINTR) {
      // An interrupted connect() carries on in the background; wait for it
      // and read its outcome instead of calling connect() again.
      pollfd p{fd, POLLOUT, 0};
      int pr;
      do pr = ::poll(&p, 1, -1);
      while (pr < 0 && errno == EINTR);
      int so_error = 0;
      socklen_t len = sizeof so_error;
      if (pr > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0)
        r = 0;
      else
        errno = so_error != 0 ? so_error : errno;
    }
    if (r == 0) return fd;
    last_error = std::strerror(errno);
    ::close(fd);
  }
  detail::fatal("cannot connect to the process manager at PMI_PORT='" + address +
                "': " + last_error);
}

class pmi1 final : public bootstrap {
 public:
  explicit pmi1(const char* name) : name_(name) {
    const char* fd_text = std::getenv("PMI_FD");
    if (fd_text != nullptr && *fd_text != '\0') {
      open_fd(fd_text);
    } else {
      open_port(std::getenv("PMI_PORT"));
    }
    // The descriptor must not leak into programs this process execs: they
    // would see PMI_FD in their environment and talk on our stream.
    int flags = ::fcntl(stream_.fd(), F_GETFD);
    if (flags >= 0) ::fcntl(stream_.fd(), F_SETFD, flags | FD_CLOEXEC);

    call("cmd=init pmi_version=1 pmi_subversion=1", "init", "response_to_init");
    reply maxes = call("cmd=get_maxes", "get_maxes", "maxes");
    long v = 0;
    if (parse_int(maxes.get_or("keylen_max", "").c_str(), v) && v > 1)
      keylen_max_ = static_cast<std::size_t>(v);
    if (parse_int(maxes.get_or("vallen_max", "").c_str(), v) && v > 1)
      vallen_max_ = static_cast<std::size_t>(v);
    reply kvs = call("cmd=get_my_kvsname", "get_my_kvsname", "my_kvsname");
    const std::string* name_field = kvs.find("kvsname");
    if (name_field == nullptr || name_field->empty())
      fail_protocol("get_my_kvsname", "the reply names no kvsname: '" + kvs.text + "'");
    kvsname_ = *name_field;
  }

  ~pmi1() override {
    if (stream_.fd() < 0) return;
    // A destructor cannot fail: a broken connection at the end of a job is
    // worth a warning, not an abort.
    std::lock_guard<std::mutex> lock(mutex_);
    std::string err, line;
    bool closed = false;
    if (!stream_.write_line("cmd=finalize", err) || !stream_.read_line(line, err, closed)) {
      warn("finalize", err);
    } else if (parse_line(line).get_or("cmd", "") != "finalize_ack") {
      warn("finalize", "unexpected reply '" + line + "'");
    }
    stream_.close();
  }

  const char* name() const override { return name_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // A handler, not SIG_IGN: programs this process execs get SIGUSR1's
  // default back. A handler or SIG_IGN the program set stays.
  void survive_failures() override {
    if (is_lcrun()) return;
    struct sigaction old {};
    if (::sigaction(SIGUSR1, nullptr, &old) != 0 ||
        (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL)
      return;
    struct sigaction sa {};
    sa.sa_handler = &ignore_failure_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGUSR1, &sa, nullptr);
  }
  // lcrun --keep-going leaves failed ranks out of its barriers; without it
  // a failed rank ends the job. Hydra and Slurm's pmi2 wait for every rank.
  bool barriers_survive_failures() const override { return is_lcrun(); }

  void put(const std::string& key, const std::string& value) override {
    detail::check_key("put", key);
    detail::check_value("put", key, value);
    if (value.size() + 1 > vallen_max_)
      detail::fatal("put: value for key '" + key + "' is longer than the process manager's limit of " +
                    std::to_string(vallen_max_ - 1) + " characters");
    call("cmd=put kvsname=" + kvsname_ + " key=" + wire_key(rank_, key) + " value=" + value, "put",
         "put_result");
  }

  // PMI-1 makes puts visible to gets exactly at a barrier, so fence is one.
  void fence() override { call("cmd=barrier_in", "barrier_in", "barrier_out"); }
  void barrier() override { call("cmd=barrier_in", "barrier_in", "barrier_out"); }

  std::string get(int rank, const std::string& key) override {
    detail::check_key("get", key);
    if (rank < 0 || rank >= size_)
      detail::fatal("get: rank " + std::to_string(rank) + " is outside the job of " +
                    std::to_string(size_) + " ranks");
    reply r = call("cmd=get kvsname=" + kvsname_ + " key=" + wire_key(rank, key), "get",
                   "get_result", /*allow_error=*/true);
    if (r.get_or("rc", "0") != "0")
      abort(1, "get: rank " + std::to_string(rank) + " put no value under key '" + key +
                   "' before the last fence (process manager: " + r.get_or("msg", "?") + ")");
    const std::string* value = r.find("value");
    if (value == nullptr) fail_protocol("get", "the reply has no value: '" + r.text + "'");
    return *value;
  }

  // Under lcrun: its getall extension (pmi1_wire.hpp), a few requests for
  // every rank's value; elsewhere one get per rank.
  std::vector<std::string> get_all(const std::string& key) override {
    if (!is_lcrun()) return bootstrap::get_all(key);
    detail::check_key("get", key);
    std::vector<std::string> values(static_cast<size_t>(size_));
    for (int from = 0; from < size_;) {
      reply r = call("cmd=getall kvsname=" + kvsname_ + " key=" + key +
                         " from=" + std::to_string(from),
                     "getall", "getall_result", /*allow_error=*/true);
      if (r.get_or("rc", "0") != "0")
        abort(1, "get: a rank put no value under key '" + key +
                     "' before the last fence (process manager: " + r.get_or("msg", "?") + ")");
      long next = 0;
      if (!parse_int(r.get_or("next", "").c_str(), next) || next <= from || next > size_)
        fail_protocol("getall", "the reply's next rank is missing or out of range: '" +
                                    r.text.substr(0, 200) + "'");
      int at = from;
      for (const auto& f : r.fields)
        if (f.first == "v" && at < next) values[static_cast<size_t>(at++)] = f.second;
      if (at != next)
        fail_protocol("getall", "the reply holds " + std::to_string(at - from) +
                                    " values for ranks " + std::to_string(from) + " to " +
                                    std::to_string(next - 1));
      from = static_cast<int>(next);
    }
    return values;
  }

  [[noreturn]] void abort(int code, const std::string& message) override {
    const int status = detail::abort_status(code);
    // lcrun prints the message it receives; other process managers (Hydra)
    // may not, so print it here for them.
    if (!is_lcrun()) {
      std::fflush(stdout);
      std::fprintf(stderr, "lci: rank %d aborted (code %d): %s\n", rank_, code, message.c_str());
      std::fflush(stderr);
      // Hydra forwards output through a proxy and kills the job as soon as
      // it reads the abort, dropping output still in flight; give the
      // message a head start (abort is rare, 200 ms is nothing).
      std::this_thread::sleep_for(std::chrono::milliseconds(abort_print_delay_ms));
    }
    // No lock: abort may be called while another thread waits for a reply,
    // and nothing after this line depends on reply ordering.
    std::string err;
    if (stream_.fd() >= 0 &&
        stream_.write_line("cmd=abort exitcode=" + std::to_string(status) +
                               " error_msg=" + pmi1_wire::percent_encode(message),
                           err)) {
      // Give the process manager time to end the job (and us with it), so
      // the job ends as an abort rather than as this rank's exit status.
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(abort_wait_ms);
      std::string line;
      bool closed = false;
      for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0 || !stream_.read_line(line, err, closed, static_cast<int>(left))) break;
      }
    }
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status);
  }

 private:
  void open_fd(const char* fd_text) {
    long fd = -1;
    if (!parse_int(fd_text, fd) || fd < 0 || fd > 1 << 24)
      detail::fatal(std::string("PMI_FD='") + fd_text + "' is not a file descriptor number");
    if (::fcntl(static_cast<int>(fd), F_GETFD) < 0)
      detail::fatal(std::string("PMI_FD=") + fd_text +
                    " is not an open file descriptor in this process (was the program started "
                    "by another program that inherited the environment of lcrun/mpiexec?)");
    stream_.adopt(static_cast<int>(fd));
    rank_ = env_int("PMI_RANK", "PMI_FD is set");
    size_ = env_int("PMI_SIZE", "PMI_FD is set");
    check_rank_size("PMI_RANK/PMI_SIZE");
  }

  void open_port(const char* address) {
    if (address == nullptr || *address == '\0') detail::fatal("neither PMI_FD nor PMI_PORT is set");
    const char* id = std::getenv("PMI_ID");
    if (id == nullptr || *id == '\0') id = std::getenv("PMI_RANK");
    long id_value = 0;
    if (id == nullptr || !parse_int(id, id_value))
      detail::fatal("PMI_PORT is set but PMI_ID is missing or not a number");
    stream_.adopt(connect_tcp(address));

    std::string err, line;
    bool closed = false;
    if (!stream_.write_line("cmd=initack pmiid=" + std::to_string(id_value), err))
      fail_io("initack", err, false);
    if (!stream_.read_line(line, err, closed)) fail_io("initack", err, closed);
    if (parse_line(line).get_or("cmd", "") != "initack")
      fail_protocol("initack", "expected 'cmd=initack', got '" + line + "'");
    // The server follows with "cmd=set" lines; rank and size are required,
    // and debug is the last one Hydra sends.
    bool have_rank = false, have_size = false, have_debug = false;
    while (!(have_rank && have_size && have_debug)) {
      if (!stream_.read_line(line, err, closed)) fail_io("initack", err, closed);
      reply r = parse_line(line);
      if (r.get_or("cmd", "") != "set")
        fail_protocol("initack", "expected a 'cmd=set' line, got '" + line + "'");
      long v = 0;
      if (const std::string* size_text = r.find("size")) {
        if (!parse_int(size_text->c_str(), v) || v < 1 || v > (1 << 30))
          fail_protocol("initack", "bad size in '" + line + "'");
        size_ = static_cast<int>(v);
        have_size = true;
      } else if (const std::string* rank_text = r.find("rank")) {
        if (!parse_int(rank_text->c_str(), v) || v < 0 || v > (1 << 30))
          fail_protocol("initack", "bad rank in '" + line + "'");
        rank_ = static_cast<int>(v);
        have_rank = true;
      } else if (r.find("debug") != nullptr) {
        have_debug = true;
      }
    }
    check_rank_size("the process manager's initack");
    // Hydra's -pmi-port proxy listens on every address and answers any
    // process that connects (no credential is asked for): once per job.
    if (rank_ == 0)
      LCI_WARN("%s", port_store_warning);
  }

  static int env_int(const char* var, const char* why) {
    const char* text = std::getenv(var);
    long v = 0;
    if (text == nullptr || *text == '\0')
      detail::fatal(std::string(why) + " but " + var + " is not");
    if (!parse_int(text, v) || v < 0 || v > (1 << 30))
      detail::fatal(std::string(var) + "='" + text + "' is not a non-negative number");
    return static_cast<int>(v);
  }

  void check_rank_size(const char* source) const {
    if (size_ < 1 || rank_ < 0 || rank_ >= size_)
      detail::fatal(std::string(source) + " gives rank " + std::to_string(rank_) + " of " +
                    std::to_string(size_) + " processes, which is impossible");
  }

  // Sends one request and returns its reply. Fatal, naming `command`, on a
  // broken connection, a reply for another command, or (unless
  // allow_error) a nonzero rc.
  reply call(const std::string& request, const char* command, const char* expected,
             bool allow_error = false) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string err, line;
    bool closed = false;
    if (!stream_.write_line(request, err)) fail_io(command, err, false);
    if (!stream_.read_line(line, err, closed)) fail_io(command, err, closed);
    reply r = parse_line(std::move(line));
    if (r.get_or("cmd", "") != expected)
      fail_protocol(command, std::string("expected 'cmd=") + expected + "', got '" + r.text + "'");
    if (!allow_error && r.get_or("rc", "0") != "0")
      fail_protocol(command, "the process manager replied with an error: '" + r.text + "'");
    return r;
  }

  std::string wire_key(int rank, const std::string& key) const {
    return pmi1_wire::wire_key(rank, key, keylen_max_);
  }

  [[noreturn]] void fail_io(const char* command, const std::string& err, bool closed) const {
    detail::fatal(std::string(name_) + " rank " + who() + ": PMI command '" + command +
                  "' failed: " + err +
                  (closed ? " (did the launcher or another rank end the job?)" : ""));
  }
  [[noreturn]] void fail_protocol(const char* command, const std::string& what) const {
    detail::fatal(std::string(name_) + " rank " + who() + ": PMI command '" + command +
                  "' failed: " + what);
  }
  void warn(const char* command, const std::string& err) const {
    std::fprintf(stderr, "lci bootstrap: warning: %s rank %s: PMI command '%s' failed: %s\n",
                 name_, who().c_str(), command, err.c_str());
  }
  std::string who() const { return rank_ >= 0 ? std::to_string(rank_) : std::string("?"); }
  bool is_lcrun() const { return std::strcmp(name_, "lcrun") == 0; }

  const char* name_;
  int rank_ = -1;
  int size_ = 0;
  std::size_t keylen_max_ = 64;   // Hydra's limits until get_maxes says otherwise
  std::size_t vallen_max_ = 1024;
  std::string kvsname_;
  std::mutex mutex_;
  line_stream stream_;
};

}  // namespace

namespace detail {
std::unique_ptr<bootstrap> open_pmi1(const char* name) { return std::make_unique<pmi1>(name); }
}  // namespace detail

}  // namespace lci::bootstrap
