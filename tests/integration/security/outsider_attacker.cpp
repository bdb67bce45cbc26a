// The outsider of the outsider test (outsider.sh): a process that is not
// part of the job (another user id where the test can arrange it) opens its
// own libfabric tcp endpoint, connects to a rank's port and tries what the
// wire format would allow a forger: messages of every kind with claimed
// ranks (0, 1, huge) in the high half of the immediate data, put_to headers
// naming an unregistered and a registered buffer, forged completion
// handles, rendezvous and control messages, truncated and oversized
// messages, garbage; and RDMA reads and writes at those buffers with
// guessed keys (0 ... 63 and random ones).
//
// It succeeds (exit 0) when no RDMA operation of its own completed without
// error: a completed read would have leaked the rank's memory, a completed
// write would have changed it (the job checks its bytes as well). The
// messages cannot be checked from here; the job counts them as dropped.
//
// Usage: outsider_attacker <ip> <port> <secret> <target> <handle>
//   (addresses and handle in decimal, as the job wrote them)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <sys/uio.h>

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

  void open(const char* ip, int port) {
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

  // One RDMA read or write with a guessed key; counts how it ended.
  void try_rma(int what, uint64_t address, uint64_t key) {
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
      return;
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
    else
      ++rma_errors;
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

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: outsider_attacker <ip> <port> <secret> <target> <handle>\n");
    return 2;
  }
  const uint64_t secret = strtoull(argv[3], nullptr, 10);
  const uint64_t target = strtoull(argv[4], nullptr, 10);
  const uint64_t handle = strtoull(argv[5], nullptr, 10);
  attacker a;
  a.open(argv[1], atoi(argv[2]));
  std::mt19937_64 rng(12345);

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
  if (a.rma_completed) {
    printf("attacker: FAILED: an RDMA operation with a guessed key completed\n");
    return 1;
  }
  printf("attacker: no RDMA operation with a guessed key completed\n");
  return 0;
}
