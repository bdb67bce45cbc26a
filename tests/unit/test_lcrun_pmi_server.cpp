// lcrun's PMI-1 server (tools/lcrun/pmi_server.hpp) without processes: each
// rank is one end of a socketpair that the test writes requests to and reads
// replies from; a fake job stands in for the supervisor and records the
// status and terminations the server asks for. Checks the exact replies,
// the key-value store, barriers, aborts, protocol errors and the bound on
// unread replies.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tests/unit/lcrun_test_text.hpp"
#include "tools/lcrun/pmi_server.hpp"

using lci::lcrun::pmi_server;

namespace {

class fake_job final : public lci::lcrun::pmi_job {
 public:
  explicit fake_job(int nranks) : running_(nranks, true), failed_(nranks, false) {}
  pid_t pid(int r) const override { return 100 + r; }
  bool running(int r) const override { return running_[r]; }
  bool failed(int r) const override { return failed_[r]; }
  bool keeps_going() const override { return keep_going; }
  bool terminating() const override { return terminating_; }
  void raise_status(int s) override { status = std::max(status, s); }
  void terminate() override {
    terminating_ = true;
    ++terminations;
  }

  std::vector<bool> running_;
  std::vector<bool> failed_;  // lcrun --keep-going: failed, left out of barriers
  bool keep_going = false;
  bool terminating_ = false;
  int status = 0;
  int terminations = 0;
};

// What f writes to stderr.
std::string stderr_of(const std::function<void()>& f) {
  std::fflush(stderr);
  std::FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  const int saved = ::dup(2);
  REQUIRE(saved >= 0);
  ::dup2(::fileno(tmp), 2);
  f();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  return lcrun_test::take_text(tmp);
}

// nranks conversations over socketpairs; client[r] is the rank's end.
struct harness {
  explicit harness(int nranks) : job(nranks), server(nranks, "kvs_test", job) {
    for (int r = 0; r < nranks; ++r) {
      int sv[2];
      REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
      ::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK);
      ::fcntl(sv[1], F_SETFL, ::fcntl(sv[1], F_GETFL) | O_NONBLOCK);
      server.attach(r, sv[0]);
      client.push_back(sv[1]);
    }
  }
  ~harness() {
    for (int fd : client)
      if (fd >= 0) ::close(fd);
  }

  // Rank r sends text; the server reads and serves it. Returns stderr.
  std::string send(int r, const std::string& text) {
    REQUIRE(::send(client[r], text.data(), text.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(text.size()));
    return stderr_of([&] { server.receive(r); });
  }
  // The replies rank r has received so far.
  std::string replies(int r) {
    std::string text;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(client[r], buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
  }
  // One request, one reply.
  std::string ask(int r, const std::string& line) {
    CHECK(send(r, line + "\n").empty());
    return replies(r);
  }

  fake_job job;
  pmi_server server;
  std::vector<int> client;
};

}  // namespace

TEST_CASE("lcrun pmi_server: init and the job's facts") {
  harness h(3);
  CHECK(h.ask(0, "cmd=init pmi_version=1 pmi_subversion=1") ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  CHECK(h.ask(0, "cmd=init") == "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
  CHECK(h.ask(1, "cmd=init pmi_version=2 pmi_subversion=0") ==
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
  CHECK(h.ask(1, "cmd=get_maxes") == "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
  CHECK(h.ask(2, "cmd=get_my_kvsname") == "cmd=my_kvsname kvsname=kvs_test\n");
  CHECK(h.ask(2, "cmd=get_universe_size") == "cmd=universe_size size=3\n");
  CHECK(h.ask(0, "cmd=get_appnum") == "cmd=appnum appnum=0\n");
  CHECK(h.job.status == 0);
  CHECK(h.job.terminations == 0);
}

TEST_CASE("lcrun pmi_server: put and get") {
  harness h(2);
  CHECK(h.ask(0, "cmd=put kvsname=kvs_test key=addr0 value=ab=cd") ==
        "cmd=put_result rc=0 msg=success\n");
  CHECK(h.ask(1, "cmd=put key=addr1 value=") == "cmd=put_result rc=0 msg=success\n");
  CHECK(h.server.kvs().size() == 2);
  CHECK(h.server.kvs().at("addr0") == "ab=cd");
  CHECK(h.server.kvs().at("addr1").empty());
  // Any rank reads any key; a later put replaces the value.
  CHECK(h.ask(1, "cmd=get kvsname=kvs_test key=addr0") ==
        "cmd=get_result rc=0 msg=success value=ab=cd\n");
  CHECK(h.ask(1, "cmd=put key=addr0 value=new") == "cmd=put_result rc=0 msg=success\n");
  CHECK(h.ask(0, "cmd=get key=addr0") == "cmd=get_result rc=0 msg=success value=new\n");
  CHECK(h.ask(0, "cmd=get key=addr1") == "cmd=get_result rc=0 msg=success value=\n");
  CHECK(h.ask(0, "cmd=get key=none") == "cmd=get_result rc=-1 msg=key_none_not_found value=unknown\n");
  CHECK(h.ask(0, "cmd=get") == "cmd=get_result rc=-1 msg=key__not_found value=unknown\n");
  CHECK(h.job.status == 0);
}

TEST_CASE("lcrun pmi_server: rejected puts and gets") {
  harness h(1);
  CHECK(h.ask(0, "cmd=put kvsname=other key=a value=1") ==
        "cmd=put_result rc=-1 msg=unknown_kvsname\n");
  CHECK(h.ask(0, "cmd=put key=a") == "cmd=put_result rc=-1 msg=put_needs_key_and_value\n");
  CHECK(h.ask(0, "cmd=put value=1") == "cmd=put_result rc=-1 msg=put_needs_key_and_value\n");
  CHECK(h.ask(0, "cmd=put key= value=1") == "cmd=put_result rc=-1 msg=put_needs_key_and_value\n");
  const std::string key63(63, 'k'), value1023(1023, 'v');
  CHECK(h.ask(0, "cmd=put key=" + key63 + "k value=1") ==
        "cmd=put_result rc=-1 msg=key_or_value_too_long\n");
  CHECK(h.ask(0, "cmd=put key=a value=" + value1023 + "v") ==
        "cmd=put_result rc=-1 msg=key_or_value_too_long\n");
  CHECK(h.server.kvs().empty());
  CHECK(h.ask(0, "cmd=put key=" + key63 + " value=" + value1023) ==
        "cmd=put_result rc=0 msg=success\n");
  CHECK(h.server.kvs().at(key63) == value1023);
  CHECK(h.ask(0, "cmd=get kvsname=other key=" + key63) ==
        "cmd=get_result rc=-1 msg=unknown_kvsname value=unknown\n");
  CHECK(h.job.status == 0);
  CHECK(h.job.terminations == 0);
}

TEST_CASE("lcrun pmi_server: lines are framed by newlines") {
  harness h(1);
  // Several requests in one read, a CR before the newline, empty lines.
  CHECK(h.send(0, "cmd=get_appnum\r\n\n\r\ncmd=get_universe_size\ncmd=get_my").empty());
  CHECK(h.replies(0) == "cmd=appnum appnum=0\ncmd=universe_size size=1\n");
  // The rest of a line that arrived in pieces.
  CHECK(h.send(0, "_kvsname").empty());
  CHECK(h.replies(0).empty());
  CHECK(h.send(0, "\n").empty());
  CHECK(h.replies(0) == "cmd=my_kvsname kvsname=kvs_test\n");
  CHECK(h.job.status == 0);
}

TEST_CASE("lcrun pmi_server: a barrier ends when every rank entered it") {
  harness h(3);
  for (int round = 0; round < 2; ++round) {
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    CHECK(h.ask(2, "cmd=barrier_in").empty());
    CHECK(h.replies(1).empty());
    CHECK(h.ask(1, "cmd=barrier_in") == "cmd=barrier_out\n");
    CHECK(h.replies(0) == "cmd=barrier_out\n");
    CHECK(h.replies(2) == "cmd=barrier_out\n");
  }
  // Finalize outside a barrier is fine.
  CHECK(h.ask(0, "cmd=finalize") == "cmd=finalize_ack\n");
  CHECK(h.job.status == 0);
  CHECK(h.job.terminations == 0);
}

TEST_CASE("lcrun pmi_server: a barrier a rank can no longer enter ends the job") {
  SUBCASE("finalize") {
    harness h(2);
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    CHECK(h.send(1, "cmd=finalize\n") ==
          "lcrun: rank 1 (pid 101) called PMI finalize while other ranks wait in a PMI "
          "barrier; terminating the job\n");
    CHECK(h.replies(1) == "cmd=finalize_ack\n");
    CHECK(h.job.status == 1);
    CHECK(h.job.terminations == 1);
  }
  SUBCASE("exit") {
    harness h(3);
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    h.job.running_[2] = false;
    CHECK(stderr_of([&] { h.server.check_barrier(); }) ==
          "lcrun: rank 2 (pid 102) exited while other ranks wait in a PMI barrier; "
          "terminating the job\n");
    CHECK(h.job.status == 1);
    CHECK(h.job.terminations == 1);
  }
  SUBCASE("closed connection") {
    harness h(2);
    CHECK(h.ask(1, "cmd=barrier_in").empty());
    ::close(h.client[0]);
    h.client[0] = -1;
    CHECK(stderr_of([&] { h.server.receive(0); }) ==
          "lcrun: rank 0 (pid 100) closed its PMI connection while other ranks wait in a PMI "
          "barrier; terminating the job\n");
    CHECK(h.server.fd(0) == -1);
    CHECK(h.job.status == 1);
  }
  SUBCASE("nothing is reported once the job is being terminated") {
    harness h(2);
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    h.job.terminating_ = true;
    CHECK(h.send(1, "cmd=finalize\n").empty());
    CHECK(h.job.status == 0);
    CHECK(h.job.terminations == 0);
  }
}

TEST_CASE("lcrun pmi_server: under --keep-going a failed rank is left out of barriers") {
  SUBCASE("it fails while the others wait") {
    harness h(3);
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    CHECK(h.ask(2, "cmd=barrier_in").empty());
    h.job.running_[1] = false;
    h.job.failed_[1] = true;
    CHECK(stderr_of([&] { h.server.check_barrier(); }).empty());
    CHECK(h.replies(0) == "cmd=barrier_out\n");
    CHECK(h.replies(2) == "cmd=barrier_out\n");
    CHECK(h.job.terminations == 0);
  }
  SUBCASE("later barriers complete without it") {
    harness h(3);
    h.job.running_[2] = false;
    h.job.failed_[2] = true;
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    CHECK(h.ask(1, "cmd=barrier_in") == "cmd=barrier_out\n");
    CHECK(h.replies(0) == "cmd=barrier_out\n");
    CHECK(h.job.terminations == 0);
  }
  SUBCASE("a closed connection waits for the rank's exit status") {
    harness h(3);
    h.job.keep_going = true;
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    CHECK(h.ask(1, "cmd=barrier_in").empty());
    ::close(h.client[2]);
    h.client[2] = -1;
    CHECK(stderr_of([&] { h.server.receive(2); }).empty());  // still running: not decided
    CHECK(h.job.terminations == 0);
    h.job.running_[2] = false;
    h.job.failed_[2] = true;
    CHECK(stderr_of([&] { h.server.check_barrier(); }).empty());
    CHECK(h.replies(0) == "cmd=barrier_out\n");
    CHECK(h.replies(1) == "cmd=barrier_out\n");
    CHECK(h.job.terminations == 0);
  }
  SUBCASE("a living rank that exits still ends the job") {
    harness h(3);
    h.job.running_[2] = false;
    h.job.failed_[2] = true;
    CHECK(h.ask(0, "cmd=barrier_in").empty());
    h.job.running_[1] = false;
    CHECK(stderr_of([&] { h.server.check_barrier(); }) ==
          "lcrun: rank 1 (pid 101) exited while other ranks wait in a PMI barrier; "
          "terminating the job\n");
    CHECK(h.job.terminations == 1);
  }
}

TEST_CASE("lcrun pmi_server: a rank that closes its connection") {
  harness h(2);
  ::close(h.client[1]);
  h.client[1] = -1;
  CHECK(stderr_of([&] { h.server.receive(1); }).empty());  // no barrier waits on it
  CHECK(h.server.fd(1) == -1);
  CHECK(h.server.fd(0) >= 0);
  CHECK(h.job.status == 0);
  CHECK(h.job.terminations == 0);
}

TEST_CASE("lcrun pmi_server: abort") {
  SUBCASE("exit code and percent-encoded message") {
    harness h(2);
    CHECK(h.send(1, "cmd=abort exitcode=7 error_msg=disk%20full%0A%1B[31m\n") ==
          "lcrun: rank 1 (pid 101) called abort with exit code 7: disk full  [31m; "
          "terminating the job\n");
    CHECK(h.job.status == 7);
    CHECK(h.job.terminations == 1);
    CHECK(h.replies(1).empty());
  }
  SUBCASE("the message key, and a second abort") {
    harness h(2);
    CHECK(h.send(0, "cmd=abort exitcode=3 message=first\n") ==
          "lcrun: rank 0 (pid 100) called abort with exit code 3: first; terminating the job\n");
    CHECK(h.send(1, "cmd=abort exitcode=5\n") ==
          "lcrun: rank 1 (pid 101) called abort with exit code 5: (no message)\n");
    CHECK(h.job.status == 5);
  }
  SUBCASE("exit codes outside 1 to 255 count as 1") {
    for (const char* code : {"0", "256", "-4", "x"}) {
      harness h(1);
      CHECK(h.send(0, std::string("cmd=abort exitcode=") + code + "\n") ==
            "lcrun: rank 0 (pid 100) called abort with exit code " +
                std::to_string(std::strtol(code, nullptr, 10)) +
                ": (no message); terminating the job\n");
      CHECK(h.job.status == 1);
    }
    harness h(1);
    CHECK(h.send(0, "cmd=abort\n") ==
          "lcrun: rank 0 (pid 100) called abort with exit code 1: (no message); terminating the "
          "job\n");
    CHECK(h.job.status == 1);
  }
}

TEST_CASE("lcrun pmi_server: protocol errors close the rank and end the job") {
  SUBCASE("a line without cmd, printed without control characters") {
    harness h(2);
    CHECK(h.send(0, "hello\x1b[2J world\ncmd=get_appnum\n") ==
          "lcrun: rank 0 (pid 100) sent an unsupported PMI line 'hello [2J world'; terminating "
          "the job\n");
    CHECK(h.server.fd(0) == -1);
    CHECK(h.replies(0).empty());  // nothing after the bad line is served
    CHECK(h.job.status == 1);
    CHECK(h.job.terminations == 1);
    CHECK(h.server.fd(1) >= 0);
  }
  SUBCASE("an unsupported command") {
    harness h(1);
    CHECK(h.send(0, "cmd=spawn nprocs=2\n") ==
          "lcrun: rank 0 (pid 100) sent the unsupported PMI command 'spawn'; terminating the "
          "job\n");
    CHECK(h.server.fd(0) == -1);
    CHECK(h.job.status == 1);
  }
  SUBCASE("a barrier entered twice") {
    harness h(2);
    CHECK(h.send(0, "cmd=barrier_in\ncmd=barrier_in\n") ==
          "lcrun: rank 0 (pid 100) entered a PMI barrier twice; terminating the job\n");
    CHECK(h.server.fd(0) == -1);
    CHECK(h.job.status == 1);
  }
  SUBCASE("a line longer than max_line_length") {
    harness h(1);
    const std::string part(4096, 'x');
    std::string err;
    std::size_t sent = 0;
    for (int i = 0; i < 64 && h.server.fd(0) >= 0; ++i) {
      ssize_t n = ::send(h.client[0], part.data(), part.size(), MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<std::size_t>(n);
      err += stderr_of([&] { h.server.receive(0); });
    }
    CHECK(sent > pmi_server::max_line_length);
    CHECK(err == "lcrun: rank 0 (pid 100) sent a PMI line longer than 65536 bytes; terminating "
                 "the job\n");
    CHECK(h.server.fd(0) == -1);
    CHECK(h.job.status == 1);
  }
  SUBCASE("not reported once the job is being terminated") {
    harness h(1);
    h.job.terminating_ = true;
    CHECK(h.send(0, "bogus\n").empty());
    CHECK(h.server.fd(0) == -1);
    CHECK(h.job.status == 1);
  }
}

TEST_CASE("lcrun pmi_server: unread replies stop the reading of requests") {
  harness h(1);
  // A small socket buffer, so that the replies pile up in the server.
  const int small = 4096;
  REQUIRE(::setsockopt(h.server.fd(0), SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
  const std::string value(1023, 'v');
  REQUIRE(h.ask(0, "cmd=put key=k value=" + value) == "cmd=put_result rc=0 msg=success\n");
  const std::string reply = "cmd=get_result rc=0 msg=success value=" + value + "\n";
  // 2000 gets ask for about 2 MiB of replies that the rank does not read.
  constexpr int gets = 2000;
  std::string requests;
  for (int i = 0; i < gets; ++i) requests += "cmd=get key=k\n";
  REQUIRE(::send(h.client[0], requests.data(), requests.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(requests.size()));
  h.server.receive(0);
  const std::size_t pending = h.server.pending_replies(0);
  CHECK(pending >= pmi_server::max_pending_replies);
  // At most one read (16 KiB of requests) more than the bound.
  CHECK(pending < pmi_server::max_pending_replies + (16384 / 14 + 1) * reply.size());
  // Requests are left unread: what was answered is less than all of it.
  std::string got = h.replies(0);
  CHECK(got.size() + pending < gets * reply.size());
  // Once the rank reads, every request is answered, in order.
  for (int round = 0; round < 10000 && got.size() < gets * reply.size(); ++round) {
    got += h.replies(0);
    h.server.flush(0);
    h.server.receive(0);
  }
  got += h.replies(0);
  CHECK(got.size() == gets * reply.size());
  std::string expected;
  for (int i = 0; i < gets; ++i) expected += reply;
  CHECK(got == expected);
  CHECK(h.server.pending_replies(0) == 0);
  CHECK(h.job.status == 0);
}

TEST_CASE("lcrun pmi_server: serve() answers the ranks whose sockets are ready") {
  harness h(4);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  h.server.watch(pipe_fds[0]);
  // Nothing ready: serve() waits its timeout and reports nothing.
  CHECK_FALSE(h.server.serve(10));
  // Ranks 1 and 3 ask; a barrier of all four completes across calls.
  REQUIRE(::send(h.client[1], "cmd=get_appnum\n", 15, MSG_NOSIGNAL) == 15);
  REQUIRE(::send(h.client[3], "cmd=get_universe_size\n", 22, MSG_NOSIGNAL) == 22);
  for (int i = 0; i < 10; ++i) h.server.serve(10);
  CHECK(h.replies(1) == "cmd=appnum appnum=0\n");
  CHECK(h.replies(3) == "cmd=universe_size size=4\n");
  CHECK(h.replies(0).empty());
  for (int r = 0; r < 4; ++r) {
    REQUIRE(::send(h.client[r], "cmd=barrier_in\n", 15, MSG_NOSIGNAL) == 15);
    h.server.serve(10);
    if (r < 3) CHECK(h.replies(r).empty());  // not everyone entered yet
  }
  for (int i = 0; i < 10; ++i) h.server.serve(10);
  for (int r = 0; r < 4; ++r) CHECK(h.replies(r).find("cmd=barrier_out") != std::string::npos);
  // The watched descriptor is reported; a closed rank leaves the set.
  REQUIRE(::write(pipe_fds[1], "x", 1) == 1);
  CHECK(h.server.serve(100));
  CHECK(h.server.open_connections() == 4);
  ::close(h.client[2]);
  h.client[2] = -1;
  for (int i = 0; i < 10 && h.server.open_connections() == 4; ++i) h.server.serve(10);
  CHECK(h.server.open_connections() == 3);
  CHECK(h.server.fd(2) == -1);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}
