// lcrun's PMI-1 server (pmi_server.hpp): request framing, the commands
// lcrun serves (init, get_maxes, get_my_kvsname, get_universe_size,
// get_appnum, put, get, barrier_in, finalize, abort), and reply buffering.
#include "tools/lcrun/pmi_server.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "lci/bootstrap/pmi1_wire.hpp"

namespace lci::lcrun {

// PMI lines are parsed by the wire code shared with LCI's client.
using bootstrap::pmi1_wire::parse_line;
using bootstrap::pmi1_wire::percent_decode;
using bootstrap::pmi1_wire::printable;

pmi_server::pmi_server(int nranks, std::string kvsname, pmi_job& job)
    : job_(job), nranks_(nranks), kvsname_(std::move(kvsname)), conv_(nranks),
      epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (epoll_fd_ < 0) {
    std::fprintf(stderr, "lcrun: epoll_create1: %s\n", std::strerror(errno));
    std::exit(1);
  }
}

pmi_server::~pmi_server() {
  for (auto& c : conv_)
    if (c.fd >= 0) ::close(c.fd);
  ::close(epoll_fd_);
}

void pmi_server::attach(int r, int fd) {
  conv_[r].fd = fd;
  conv_[r].events = EPOLLIN;
  ++open_;
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u32 = static_cast<uint32_t>(r);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &e);
}

bool pmi_server::serve(int timeout_ms) {
  epoll_event ev[256];
  const int n = ::epoll_wait(epoll_fd_, ev, 256, timeout_ms);
  if (n < 0 && errno != EINTR) {
    std::fprintf(stderr, "lcrun: epoll_wait: %s\n", std::strerror(errno));
    job_.raise_status(1);
    job_.terminate();
  }
  bool watched = false;
  for (int i = 0; i < n; ++i) {
    if (ev[i].data.u32 == UINT32_MAX) {
      watched = true;
      continue;
    }
    const int r = static_cast<int>(ev[i].data.u32);
    if (conv_[r].fd < 0) continue;  // closed while handling an earlier event
    if (ev[i].events & EPOLLOUT) flush(r);
    if (conv_[r].fd >= 0 && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) receive(r);
  }
  return watched;
}

void pmi_server::watch(int fd) {
  epoll_event e{};
  e.events = EPOLLIN;
  e.data.u32 = UINT32_MAX;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &e);
}

void pmi_server::update_interest(int r) {
  conversation& rs = conv_[r];
  if (rs.fd < 0) return;
  const std::size_t pending = pending_replies(r);
  const uint32_t want = (pending >= max_pending_replies ? 0u : uint32_t{EPOLLIN}) |
                        (pending > 0 ? uint32_t{EPOLLOUT} : 0u);
  if (want == rs.events) return;
  epoll_event e{};
  e.events = want;
  e.data.u32 = static_cast<uint32_t>(r);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, rs.fd, &e);
  rs.events = want;
}

void pmi_server::receive(int r) {
  receive_lines(r);
  update_interest(r);
}

void pmi_server::receive_lines(int r) {
  conversation& rs = conv_[r];
  char buf[16384];
  while (rs.fd >= 0 && pending_replies(r) < max_pending_replies) {
    ssize_t n = ::read(rs.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      close_rank(r);
      return;
    }
    rs.in.append(buf, static_cast<std::size_t>(n));
    stats_.bytes_in += static_cast<uint64_t>(n);
    const auto served_from = std::chrono::steady_clock::now();
    // Every complete line is served, then the served prefix is dropped
    // in one go (erasing line by line would be quadratic).
    std::size_t start = 0, nl;
    while (rs.fd >= 0 && (nl = rs.in.find('\n', start)) != std::string::npos) {
      std::string line = rs.in.substr(start, nl - start);
      start = nl + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) handle(r, line);
    }
    stats_.serve_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - served_from).count();
    if (rs.fd < 0) return;  // closed while serving a line
    rs.in.erase(0, start);
    if (rs.in.size() > max_line_length) {
      protocol_error(r, "sent a PMI line longer than " + std::to_string(max_line_length) +
                            " bytes");
      return;
    }
  }
}

void pmi_server::handle(int r, const std::string& line) {
  const bootstrap::pmi1_wire::line f = parse_line(line);
  auto field = [&](const char* k) { return f.find(k); };
  const std::string* cmd = field("cmd");
  if (cmd == nullptr) {
    protocol_error(r, "sent an unsupported PMI line '" + printable(line.substr(0, 200)) + "'");
    return;
  }
  if (*cmd == "put")
    ++stats_.puts;
  else if (*cmd == "get")
    ++stats_.gets;
  else if (*cmd == "getall")
    ++stats_.getalls;
  else if (*cmd == "barrier_in")
    ++stats_.barrier_ins;
  else
    ++stats_.other;
  conversation& rs = conv_[r];
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
    reply(r, "cmd=universe_size size=" + std::to_string(nranks_));
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
  } else if (*cmd == "getall") {
    const std::string* key = field("key");
    const std::string* kvs = field("kvsname");
    long from = -1;
    if (kvs != nullptr && *kvs != kvsname_) {
      reply(r, "cmd=getall_result rc=-1 msg=unknown_kvsname");
    } else if (key == nullptr || key->empty() ||
               !bootstrap::pmi1_wire::parse_int(field("from") ? field("from")->c_str() : "",
                                               from) ||
               from < 0 || from >= nranks_) {
      reply(r, "cmd=getall_result rc=-1 msg=getall_needs_key_and_from");
    } else {
      std::string out = "cmd=getall_result rc=0";
      std::string values;
      int next = static_cast<int>(from);
      for (; next < nranks_ && values.size() < bootstrap::pmi1_wire::getall_reply_bytes;
           ++next) {
        auto it = kvs_.find(bootstrap::pmi1_wire::wire_key(next, *key, keylen_max));
        if (it == kvs_.end()) break;
        values += " v=";
        values += it->second;
      }
      if (next == from)
        reply(r, "cmd=getall_result rc=-1 msg=key_" + *key + "_of_rank_" +
                     std::to_string(from) + "_not_found");
      else
        reply(r, out + " next=" + std::to_string(next) + values);
    }
  } else if (*cmd == "barrier_in") {
    if (rs.in_barrier) {
      protocol_error(r, "entered a PMI barrier twice");
      return;
    }
    rs.in_barrier = true;
    ++in_barrier_;
    release_barrier_if_complete();
    // Whether a rank that left blocks it: only once some rank has left
    // (the scan is O(N); on every entry it would make a barrier O(N^2)).
    if (in_barrier_ != 0 && departed_ != 0) check_barrier();
  } else if (*cmd == "finalize") {
    if (!rs.finalized) ++departed_;
    rs.finalized = true;
    reply(r, "cmd=finalize_ack");
    check_barrier();
  } else if (*cmd == "abort") {
    long code = 1;
    if (const std::string* c = field("exitcode")) code = std::strtol(c->c_str(), nullptr, 10);
    const std::string* msg = field("error_msg");
    if (msg == nullptr) msg = field("message");
    std::fprintf(stderr, "lcrun: rank %d (pid %ld) called abort with exit code %ld: %s%s\n", r,
                 static_cast<long>(job_.pid(r)), code,
                 msg != nullptr ? percent_decode(*msg).c_str() : "(no message)",
                 job_.terminating() ? "" : "; terminating the job");
    job_.raise_status(code > 0 && code < 256 ? static_cast<int>(code) : 1);
    job_.terminate();
  } else {
    protocol_error(r, "sent the unsupported PMI command '" + printable(cmd->substr(0, 100)) + "'");
  }
}

void pmi_server::reply(int r, const std::string& line) {
  conversation& rs = conv_[r];
  if (rs.fd < 0) return;
  rs.out += line;
  rs.out += '\n';
  stats_.bytes_out += line.size() + 1;
  flush(r);
}

// Sends what the socket accepts. The sent prefix of `out` is dropped only
// once it is at least half of the buffer, so each byte is moved at most
// once on average (erasing after every send would be quadratic).
void pmi_server::flush(int r) {
  conversation& rs = conv_[r];
  while (rs.fd >= 0 && pending_replies(r) > 0) {
    ssize_t n = ::send(rs.fd, rs.out.data() + rs.out_sent, pending_replies(r),
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
  update_interest(r);
}

void pmi_server::close_rank(int r) {
  conversation& rs = conv_[r];
  if (rs.fd < 0) return;
  ::close(rs.fd);  // leaves the epoll set with it
  rs.fd = -1;
  rs.events = 0;
  --open_;
  ++departed_;
  rs.in.clear();
  rs.out.clear();
  rs.out_sent = 0;
  check_barrier();
}

void pmi_server::release_barrier_if_complete() {
  if (in_barrier_ == 0) return;
  // Ranks below barrier_scan_ were found in the barrier or failed, and stay
  // so until it completes: each entry resumes the scan where the last one
  // stopped (O(N) per barrier, not per entry).
  for (; barrier_scan_ < nranks_; ++barrier_scan_)
    if (!conv_[barrier_scan_].in_barrier && !job_.failed(barrier_scan_)) return;
  barrier_scan_ = 0;
  in_barrier_ = 0;
  ++stats_.barriers;
  for (int i = 0; i < nranks_; ++i) {
    if (!conv_[i].in_barrier) continue;
    conv_[i].in_barrier = false;
    reply(i, "cmd=barrier_out");
  }
}

// A barrier that some rank can no longer join would wait forever: end the
// job instead, naming the rank that left (a failed rank under --keep-going
// is left out of the barrier instead).
void pmi_server::check_barrier() {
  release_barrier_if_complete();
  if (in_barrier_ == 0 || job_.terminating()) return;
  for (int r = 0; r < nranks_; ++r) {
    const conversation& rs = conv_[r];
    if (rs.in_barrier || job_.failed(r)) continue;
    if (job_.keeps_going() && job_.running(r) && !rs.finalized) continue;  // decided when reaped
    const char* why = rs.finalized        ? "called PMI finalize"
                      : !job_.running(r) ? "exited"
                      : rs.fd < 0        ? "closed its PMI connection"
                                         : nullptr;
    if (why == nullptr) continue;
    std::fprintf(stderr,
                 "lcrun: rank %d (pid %ld) %s while other ranks wait in a PMI barrier; "
                 "terminating the job\n",
                 r, static_cast<long>(job_.pid(r)), why);
    job_.raise_status(1);
    job_.terminate();
    return;
  }
}

void pmi_server::protocol_error(int r, const std::string& what) {
  if (!job_.terminating())
    std::fprintf(stderr, "lcrun: rank %d (pid %ld) %s; terminating the job\n", r,
                 static_cast<long>(job_.pid(r)), what.c_str());
  job_.raise_status(1);
  close_rank(r);
  job_.terminate();
}

}  // namespace lci::lcrun
