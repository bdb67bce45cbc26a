// exit_helper MODE [args]: ranks that end in chosen ways, to test how lcrun
// reports and contains failures. Every wait is bounded (at most 60 s), so a
// launcher that fails to kill the survivors makes the test slow, never hung.
//
//   exit_rank           every rank exits with status = its rank; a SIGTERM
//                       makes it exit with the same status, so the job's
//                       worst status is size-1 whatever the exit order.
//   kill VICTIM         VICTIM raises SIGKILL, the others sleep.
//   exit VICTIM CODE    VICTIM calls _exit(CODE), the others sleep.
//   abort VICTIM CODE   VICTIM calls bootstrap::abort(CODE, msg), the others
//                       wait in a barrier.
//   leave VICTIM        VICTIM exits 0 at once, the others enter a barrier
//                       it will never join.
//   sleep               every rank prints "pid <pid>" to stdout and sleeps.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "lci/bootstrap/bootstrap.hpp"

namespace {

int term_status = 0;

extern "C" void exit_on_term(int) { ::_exit(term_status); }

void sleep_bounded() {
  for (int i = 0; i < 600; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::fprintf(stderr, "exit_helper: slept 60 s without being terminated\n");
  std::exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: exit_helper MODE [VICTIM [CODE]]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int victim = argc > 2 ? std::atoi(argv[2]) : 0;
  const int code = argc > 3 ? std::atoi(argv[3]) : 1;

  auto bs = lci::bootstrap::open();
  const int rank = bs->rank();
  if (mode == "exit_rank") {
    term_status = rank;
    ::signal(SIGTERM, exit_on_term);
    bs->barrier();
    std::fflush(stdout);
    ::_exit(rank);
  }
  if (mode == "leave") {
    if (rank == victim) ::_exit(0);
    bs->barrier();
    std::fprintf(stderr, "exit_helper: barrier completed without rank %d\n", victim);
    return 0;
  }
  // Every rank is up before the victim fails, so the test covers killing
  // ranks that are running, not ranks that have not started yet.
  bs->fence();
  if (mode == "sleep") {
    std::printf("pid %ld\n", static_cast<long>(::getpid()));
    std::fflush(stdout);
  }
  if (mode == "kill" && rank == victim) ::raise(SIGKILL);
  if (mode == "exit" && rank == victim) ::_exit(code);
  if (mode == "abort") {
    if (rank == victim) bs->abort(code, "exit_helper abort from rank " + std::to_string(rank));
    bs->barrier();
  }
  sleep_bounded();
}
