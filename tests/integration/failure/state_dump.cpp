// The state dump (LCIX_dump_state, LCI_DUMP_SIGNAL), one per --case
// (exactly 2 ranks):
//
//   pending  Rank 0 posts an LCI_recvl from rank 1 (tag 41) and an LCI_sendl
//            to rank 1 (tag 42) that rank 1 does not receive yet; rank 0's
//            dump must show the sendl waiting for an RTR from rank 1 and the
//            posted recvl from rank 1, rank 1's the RTS waiting for a
//            receive. Then rank 1 posts the matching receive and send, both
//            transfers complete with the right bytes, and the dumps show
//            nothing in flight. Before LCI_initialize and after LCI_finalize
//            the call returns LCI_ERR_FATAL; a debug build refuses NULL.
//            With LCI_DUMP_SIGNAL=USR1, raising it prints the dump to
//            stderr, and LCI_finalize stops the thread that prints it.
//   hang     Rank 0 waits for a recvl from rank 1 (tag 77) that is never
//            sent, rank 1's sendl to rank 0 (tag 78) is never received, and
//            both wait on: lcrun's LCRUN_TIMEOUT must end the job, after
//            asking both ranks for their dump (the test registration checks
//            lcrun's stderr).
//   stalled  Rank 1 sends rank 0 a medium message, then waits for an
//            answer, progressing; rank 0 "computes" without ever calling
//            LCI_progress again: lcrun's LCRUN_TIMEOUT asks for the dumps,
//            and rank 0's must say that no thread progresses its device
//            although a message waits in it (rank 1's must not).
//   hang --own-handler: the same, the program having installed a SIGUSR2
//            handler of its own before LCI_initialize: it must still run
//            ("the program's own SIGUSR2 handler ran") besides the dump.
//
// Every wait is bounded.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr size_t k_len = 131072;  // above LCI_MEDIUM_SIZE: a rendezvous

// LCIX_dump_state's text (also echoed to stdout, for the test's log).
std::string dump_text() {
  FILE* f = tmpfile();
  if (!f) die("tmpfile failed");
  OK(LCIX_dump_state(f));
  std::string text;
  rewind(f);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  fclose(f);
  fputs(text.c_str(), stdout);
  fflush(stdout);
  return text;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A line that starts with `start` and contains `rest` after it.
bool has_line(const std::string& text, const std::string& start, const std::string& rest) {
  size_t at = 0;
  while ((at = text.find(start, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      const size_t end = text.find('\n', at);
      if (text.substr(at, end - at).find(rest) != std::string::npos) return true;
    }
    at += start.size();
  }
  return false;
}

void case_pending() {
  const int me = LCI_RANK, peer = 1 - me;
  const std::string r0 = "rank 0 dev 0: ", r1 = "rank 1 dev 0: ";
  comp lc(LCI_COMPLETION_QUEUE);
  lbuf recv_buf(mem_kind::registered, k_len);
  lbuf send_buf(mem_kind::registered, k_len);
  fill(send_buf.data(), k_len, seed_of(me, 7));

  if (me == 0) {
    phase("rank 0 posts a recvl from rank 1 and a sendl rank 1 does not receive yet");
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, recv_buf.view(), 1, 41, lc.handle(), nullptr));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, send_buf.view(), 1, 42, lc.handle(), nullptr));
    const std::string d = dump_text();
    EXPECT(has_line(d, r0 + "sendl id ", " to rank 1 tag 42 size 131072: waits for an RTR from rank 1"),
           "no line for the sendl waiting for its RTR");
    EXPECT(has(d, r0 + "posted recvl from rank 1 tag 41 (endpoint 0): waits for a message from "
                       "rank 1\n"),
           "no line for the posted recvl");
    EXPECT(has(d, "rank 0: failed peers: none\n"), "no failed-peers line");
    EXPECT(has(d, "rank 0: end of LCI state dump\n"), "no end line");
    EXPECT(has_line(d, r0 + "packets: ", " free"), "no packet line");
  } else {
    phase("rank 1 waits until rank 0's RTS waits in its matching table");
    deadline dl(30);
    for (;;) {
      progress(dl, "rank 0's RTS");
      const std::string d = dump_text();
      if (has(d, r1 + "unexpected long (RTS) from rank 0 tag 42 (endpoint 0) size 131072: no "
                      "receive posted\n"))
        break;
      usleep(100000);
    }
  }
  OK(LCI_barrier());

  phase("both transfers complete once rank 1 posts its side");
  if (me == 1) {
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, recv_buf.view(), 0, 42, lc.handle(), nullptr));
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, send_buf.view(), 0, 41, lc.handle(), nullptr));
  }
  for (const LCI_request_t& r : lc.take(2, "the recvl and the sendl")) {
    EXPECT(r.flag == LCI_OK, "flag %d", static_cast<int>(r.flag));
    EXPECT(r.rank == peer, "rank %d", r.rank);
  }
  EXPECT(mismatch(recv_buf.data(), k_len, seed_of(peer, 7)) == SIZE_MAX,
         "received bytes differ");
  OK(LCI_barrier());
  const std::string d = dump_text();
  const std::string mine = me == 0 ? r0 : r1;
  EXPECT(has(d, mine + "rendezvous and RDMA operations in flight: 0\n"),
         "operations still in flight");
  EXPECT(!has(d, "waits for an RTR") && !has(d, "tag 41 (endpoint 0)") &&
             !has(d, "tag 42 (endpoint 0)"),
         "a finished operation is still listed");
#ifdef LCI_DEBUG
  EXPECT(LCIX_dump_state(nullptr) == LCI_ERR_FATAL, "NULL out accepted by a debug build");
#endif
}

// With LCI_DUMP_SIGNAL=USR1 (the test registration sets it): the signal
// makes LCI's thread print the dump to stderr, which is caught in a file.
void check_dump_signal() {
  phase("the dump on LCI_DUMP_SIGNAL");
  char path[] = "/tmp/lci_state_dump_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) die("mkstemp failed");
  unlink(path);
  fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  raise(SIGUSR1);
  const std::string end = "rank " + std::to_string(LCI_RANK) + ": end of LCI state dump\n";
  std::string text;
  deadline dl(30);
  while (text.find(end) == std::string::npos && !dl.passed()) {
    usleep(20000);
    text.clear();
    char buf[4096];
    ssize_t n;
    off_t at = 0;
    while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
      text.append(buf, static_cast<size_t>(n));
      at += n;
    }
  }
  dup2(saved, 2);
  close(saved);
  close(fd);
  fputs(text.c_str(), stdout);
  EXPECT(text.find(end) != std::string::npos, "no dump on SIGUSR1 within 30 s");
  EXPECT(text.find("rank " + std::to_string(LCI_RANK) + " dev 0: rendezvous and RDMA operations "
                   "in flight: 0\n") != std::string::npos,
         "the signal's dump lacks the device's lines");
}

void case_hang() {
  comp lc(LCI_COMPLETION_QUEUE);
  lbuf recv_buf(mem_kind::registered, k_len);
  lbuf send_buf(mem_kind::registered, k_len);
  if (LCI_RANK == 0)
    RETRY(LCI_recvl(LCI_UR_ENDPOINT, recv_buf.view(), 1, 77, lc.handle(), nullptr));
  else
    RETRY(LCI_sendl(LCI_UR_ENDPOINT, send_buf.view(), 0, 78, lc.handle(), nullptr));
  OK(LCI_barrier());
  printf("rank %d: waiting for what never comes\n", LCI_RANK);
  fflush(stdout);
  phase("waiting for a message that is never sent");
  deadline dl(60);
  for (;;) progress(dl, "a message that is never sent");
}

void case_stalled() {
  comp lc(LCI_COMPLETION_QUEUE);
  OK(LCI_barrier());
  char msg[64] = "a message rank 0 never takes";
  if (LCI_RANK == 1) {
    // Rank 0 may still be in its last progress call of the barrier, which
    // would take a message that arrived right behind the barrier's: send
    // once it has surely left it.
    usleep(500000);
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, LCI_mbuffer_t{msg, sizeof(msg)}, 0, 79));
    printf("rank 1: sent; waiting for an answer that never comes\n");
    fflush(stdout);
    deadline dl(60);
    for (;;) progress(dl, "an answer that never comes");
  }
  printf("rank 0: computing, no LCI_progress\n");
  fflush(stdout);
  for (int i = 0; i < 600; ++i) usleep(100000);  // 60 s at most; lcrun ends it first
  die("rank 0: LCRUN_TIMEOUT did not end the job");
}

// The program's own SIGUSR2 handler (--own-handler): one line to stderr.
char g_own_line[96];
size_t g_own_length = 0;
extern "C" void own_handler(int) {
  const int saved = errno;
  ssize_t ignored = write(2, g_own_line, g_own_length);
  (void)ignored;
  errno = saved;
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 2 && strcmp(argv[1], "--case") == 0 ? argv[2] : "";
  if (argc > 3 && strcmp(argv[3], "--own-handler") == 0) {
    snprintf(g_own_line, sizeof(g_own_line), "pid %ld: the program's own SIGUSR2 handler ran\n",
             static_cast<long>(getpid()));
    g_own_length = strlen(g_own_line);
    struct sigaction sa {};
    sa.sa_handler = own_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR2, &sa, nullptr) != 0) die("sigaction failed");
  }
  const bool before = LCIX_dump_state(stdout) == LCI_ERR_FATAL;
  harness_init(120);
  EXPECT(before, "LCIX_dump_state before LCI_initialize did not return LCI_ERR_FATAL");
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");
  if (which == "pending") {
    case_pending();
    if (getenv("LCI_DUMP_SIGNAL")) check_dump_signal();
  }
  else if (which == "hang")
    case_hang();
  else if (which == "stalled")
    case_stalled();
  else
    die("usage: state_dump --case pending|hang|stalled");
  const int status = harness_finish(("state_dump " + which).c_str());
  if (LCIX_dump_state(stdout) != LCI_ERR_FATAL) {
    fprintf(stderr, "rank %d: LCIX_dump_state after LCI_finalize did not return LCI_ERR_FATAL\n",
            LCI_RANK);
    return 1;
  }
  return status;
}
