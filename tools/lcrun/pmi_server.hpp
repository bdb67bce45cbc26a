// lcrun's PMI-1 server: one conversation per rank over a stream socket,
// the job's key-value store and its barriers. Lines are parsed, and abort
// messages decoded, by the wire code shared with LCI's client
// (lci/bootstrap/pmi1_wire.hpp).
//
// The server owns each rank's socket from attach() on and closes it at EOF,
// on an error, on a protocol error or when destroyed. It starts and signals
// no process: what it decides about the job (a status, the end of the job)
// goes through the pmi_job interface, which also tells it whether a rank
// still runs. Everything runs on the one thread of lcrun's poll loop.
//
// Invariants:
//   - lcrun's memory per rank is bounded: the server stops reading a rank's
//     requests while max_pending_replies bytes of replies wait for the rank
//     to read them, and a line longer than max_line_length is a protocol
//     error;
//   - a barrier completes when every rank has entered it (under --keep-going,
//     every rank that has not failed: a failed rank never blocks one); once some rank
//     can no longer enter it (it called finalize, exited or closed its
//     connection) while others wait, the job ends with status 1 instead of
//     waiting forever;
//   - a broken PMI conversation (unsupported line or command, a barrier
//     entered twice, an overlong line) ends the job with status 1; an abort
//     ends it with its exit code (1 when that is not 1 to 255).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lci::lcrun {

// What the server needs from the job that runs the ranks.
class pmi_job {
 public:
  virtual pid_t pid(int rank) const = 0;     // for messages
  virtual bool running(int rank) const = 0;  // forked and not yet reaped
  // Failed and left out of barriers (lcrun --keep-going), never to return.
  virtual bool failed(int rank) const = 0;
  // lcrun --keep-going: a rank that closed its connection may be a failed
  // one not reaped yet, so a barrier waits for its exit status.
  virtual bool keeps_going() const = 0;
  virtual bool terminating() const = 0;      // the job is being ended
  virtual void raise_status(int status) = 0;  // the exit status becomes at least status
  virtual void terminate() = 0;              // ends the job; may be called again

 protected:
  ~pmi_job() = default;
};

class pmi_server {
 public:
  // A PMI line longer than this is a broken client; values are at most 1 KiB.
  static constexpr std::size_t max_line_length = 64 * 1024;
  // The server stops reading a rank's requests while this many bytes of
  // replies wait for the rank to read them: a rank that sends without
  // reading then blocks on its own socket instead of growing lcrun's
  // memory. One read (16 KiB of requests) can still add about 1.1 MiB of
  // replies (a get of a 1 KiB value per 16-byte request), so a rank holds
  // at most about 2.1 MiB.
  static constexpr std::size_t max_pending_replies = 1024 * 1024;
  // The same limits as MPICH's Hydra, so a program that runs under lcrun
  // also runs under mpiexec.
  static constexpr int kvsname_max = 256;
  static constexpr std::size_t keylen_max = 64;
  static constexpr std::size_t vallen_max = 1024;

  // nranks conversations, none attached yet; kvsname is the one name of the
  // job's key-value store.
  pmi_server(int nranks, std::string kvsname, pmi_job& job);
  pmi_server(const pmi_server&) = delete;
  pmi_server& operator=(const pmi_server&) = delete;
  ~pmi_server();  // closes the sockets still open

  // Rank r talks over fd (a nonblocking stream socket) from now on; the
  // server owns fd.
  void attach(int r, int fd);
  // Rank r's socket; -1 before attach() and once closed.
  int fd(int r) const { return conv_[r].fd; }
  // Bytes of replies rank r has not yet accepted.
  std::size_t pending_replies(int r) const {
    return conv_[r].out.size() - conv_[r].out_sent;
  }

  // lcrun's event loop: waits up to timeout_ms (epoll, so that a request
  // costs the same whatever the number of ranks) and serves every rank
  // whose socket is ready: replies flushed, requests read and served.
  // Returns whether the descriptor given to watch() became readable.
  bool serve(int timeout_ms);
  // One more descriptor serve() waits on (lcrun's signal pipe).
  void watch(int fd);
  // Ranks whose socket is still open.
  int open_connections() const { return open_; }

  // Reads what the socket of rank r holds and serves complete lines; stops
  // at EAGAIN, EOF (closes the socket), an error, or once the rank has
  // max_pending_replies bytes of replies to read (the caller polls it for
  // input again when they have drained).
  void receive(int r);
  // Sends the replies the socket of rank r accepts.
  void flush(int r);
  // Serves one request line (without its newline) from rank r.
  void handle(int r, const std::string& line);
  // Ends the job when a pending barrier can no longer complete; called
  // whenever a rank may have left (finalize, exit, closed connection).
  void check_barrier();
  // Completes the current barrier if every rank that has not failed is in it.
  void release_barrier_if_complete();

  const std::map<std::string, std::string>& kvs() const { return kvs_; }

  // What the job asked of the server (LCRUN_STATS=1 prints it): requests
  // by command, barriers completed, bytes read and written, and the time
  // spent serving requests (parsing, the store, replies).
  struct stats {
    uint64_t puts = 0, gets = 0, getalls = 0, barrier_ins = 0, other = 0;
    uint64_t barriers = 0;
    uint64_t bytes_in = 0, bytes_out = 0;
    double serve_s = 0;
  };
  const stats& statistics() const { return stats_; }

 private:
  struct conversation {
    int fd = -1;          // lcrun's end of the socket; -1 once closed
    std::string in;       // bytes received past the last complete line
    std::string out;      // replies; out[out_sent, size) not yet accepted by the socket
    std::size_t out_sent = 0;
    bool finalized = false;
    bool in_barrier = false;
    uint32_t events = 0;  // what the epoll set waits for on fd
  };

  void receive_lines(int r);  // receive() without the epoll update
  void reply(int r, const std::string& line);
  // Makes the epoll set wait for input unless the rank's replies back up,
  // and for room while replies wait.
  void update_interest(int r);
  void close_rank(int r);
  void protocol_error(int r, const std::string& what);

  pmi_job& job_;
  const int nranks_;
  const std::string kvsname_;
  std::vector<conversation> conv_;
  std::map<std::string, std::string> kvs_;
  int in_barrier_ = 0;  // ranks waiting in the current barrier
  int barrier_scan_ = 0;  // see release_barrier_if_complete
  int departed_ = 0;      // finalize requests and closed connections so far
  int open_ = 0;          // ranks attached and not closed
  int epoll_fd_ = -1;
  stats stats_;
};

}  // namespace lci::lcrun
