// The state dump: what a stuck job waits for (LCIX_dump_state, and the
// signal LCI_DUMP_SIGNAL, which lcrun sends before a timeout ends a job).
//
// dump_state prints, per device: the rendezvous and RDMA operations in
// flight (one line each, with the peer and what the operation waits for,
// e.g. "sendl id 17 to rank 3 tag 5 size 131072: waits for an RTR from
// rank 3"; an origin whose writes are under way has left the operation
// table and waits only for its own RDMA completions, which the transport's
// lines count), the receives posted and the messages waiting in the matching
// table, the backlog, the packet pool and each transport's state (the
// native transport's rings per peer, libfabric's counters); then the
// failed peers. Every line starts with "rank R" so that the dumps of many
// ranks can be merged, and is written with one call (a line of one rank
// is not cut by another rank's on a shared stderr).
//
// Threads: it reads state that other threads change. Each structure is read
// under its own lock, taken with a bounded try-lock (try_lock_bounded),
// never waited for: what could not be read is printed as "busy". Nothing
// is added to the data path. The runtime itself must stay up while a dump
// runs (LCI_finalize stops the signal's thread before tearing it down).
//
// The signal: dump_signal_start installs a handler that only writes a byte
// to a pipe (async-signal-safe) and starts one thread that reads the pipe
// and dumps to stderr; dump_signal_stop restores the previous handler (if
// LCI's is still installed) and joins the thread. Only when LCI_DUMP_SIGNAL
// names a signal. A handler the program installed before is chained: LCI's
// calls it after writing its byte (SIG_DFL and SIG_IGN are not acted on).
// A program that installs its own after LCI_initialize replaces LCI's and
// must call the one it replaced (sigaction's old action) to keep the dump.
#pragma once

#include <cstdio>

namespace lci {

// Writes the dump to `out`; false (nothing written) if LCI is not
// initialized.
bool dump_state(FILE* out);

// Installs the handler of `sig` (non-zero) and starts the dump thread;
// false, with a warning, if either fails.
bool dump_signal_start(int sig);
// Undoes dump_signal_start (nothing if it did not run).
void dump_signal_stop();

}  // namespace lci
