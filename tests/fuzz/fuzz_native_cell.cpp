// Fuzzes the decoding of the native transport's cells (native_device::poll and
// the handlers of each kind, lci/backend/native/native.hpp): whatever a local
// peer writes into a ring must be taken or dropped without a write outside
// a posted receive buffer, a registration for remote access or a pending
// read's buffer, and every completion must name something this process
// posted.
//
// One device (rank 0 of 3, alone on its "host", data pipelined so that its
// own reads and writes to itself go through cells too) lives for the whole
// run. Each input is a list of records: a cell's fields, a byte of
// steering (aim the address into the registration or at an unregistered
// buffer, use its key, change the address after publishing) and up to 255 bytes of payload. Between cells the
// harness starts reads and writes of its own and posts receive buffers of
// several sizes, each followed by a guard area that must stay untouched.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "lci/backend/native/native.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using lci::fuzz::require;
using namespace lci::native;

namespace {

constexpr size_t k_payload = 512;  // the device's largest message
constexpr size_t k_guard = 64;
constexpr uint8_t k_guard_byte = 0xC3;
constexpr size_t k_region = 4096;
constexpr int k_rx = 8;

struct rx_buffer {
  std::vector<unsigned char> bytes;  // capacity, then the guard
  size_t capacity;
  bool posted = false;
};

struct world {
  native_device dev{0, 3, 0, options{64, k_payload, false}};
  std::vector<unsigned char> registered = std::vector<unsigned char>(k_region + k_guard, 0);
  std::vector<unsigned char> unregistered = std::vector<unsigned char>(k_region, 0x11);
  std::vector<unsigned char> read_into = std::vector<unsigned char>(k_payload + k_guard, 0);
  uint64_t key = 0x1234567890abcdefull;
  rx_buffer rx[k_rx];
  std::set<void*> op_ctxs;       // ctx of each own read or write in flight
  char op_tokens[1024];

  world() {
    dev.attach({"", "", ""}, {true, false, false});
    dev.attached();
    dev.record_registration(registered.data(), k_region, lci::net::mr_access::remote, key);
    memset(registered.data() + k_region, k_guard_byte, k_guard);
    memset(read_into.data() + k_payload, k_guard_byte, k_guard);
    static const size_t sizes[k_rx] = {16, 64, 100, 512, 512, 8, 300, 512};
    for (int i = 0; i < k_rx; ++i) {
      rx[i].capacity = sizes[i] < sizeof(void*) * 3 ? sizeof(void*) * 3 : sizes[i];
      rx[i].bytes.assign(rx[i].capacity + k_guard, 0);
      memset(rx[i].bytes.data() + rx[i].capacity, k_guard_byte, k_guard);
    }
  }

  void post_receives() {
    for (rx_buffer& b : rx)
      if (!b.posted) {
        dev.post_recv(b.bytes.data(), b.capacity, nullptr, &b);
        b.posted = true;
      }
  }

  void check_guards() {
    for (const rx_buffer& b : rx)
      for (size_t i = 0; i < k_guard; ++i) require(b.bytes[b.capacity + i] == k_guard_byte);
    for (size_t i = 0; i < k_guard; ++i) {
      require(registered[k_region + i] == k_guard_byte);
      require(read_into[k_payload + i] == k_guard_byte);
    }
    for (unsigned char c : unregistered) require(c == 0x11);
  }

  // Drains every completion; each must name something posted here.
  void drain() {
    completion out[16];
    for (int rounds = 0; rounds < 10000; ++rounds) {
      const int n = dev.poll(out, 16);
      for (int i = 0; i < n; ++i) {
        const completion& c = out[i];
        switch (c.kind) {
          case completion_kind::recv: {
            auto* b = static_cast<rx_buffer*>(c.ctx);
            require(b >= rx && b < rx + k_rx && b->posted);
            require(c.length <= b->capacity && c.src_rank == 0);
            b->posted = false;
            break;
          }
          case completion_kind::rma_done:
          case completion_kind::failed:
            require(op_ctxs.erase(c.ctx) == 1);
            break;
          case completion_kind::remote_write:
            require(c.src_rank == 0);
            break;
          case completion_kind::dropped:
            require(c.ctx != nullptr && strlen(static_cast<const char*>(c.ctx)) > 0);
            break;
          default:
            require(false);
        }
      }
      post_receives();
      if (n == 0 && dev.pending_replies() == 0) break;
    }
    check_guards();
  }

  void start_own_operation(uint8_t how, size_t length) {
    void* ctx = &op_tokens[op_ctxs.size() % sizeof op_tokens];
    if (op_ctxs.count(ctx)) return;
    length %= k_payload + 1;
    const uint64_t at = reinterpret_cast<uint64_t>(registered.data()) + (how % 64);
    if (at + length > reinterpret_cast<uint64_t>(registered.data()) + k_region) return;
    status st;
    if (how & 1)
      st = dev.post_read(0, read_into.data(), length, nullptr, at, key, ctx);
    else
      st = dev.post_write(0, unregistered.data(), length, nullptr, at, key, ctx, false);
    if (st == status::ok) op_ctxs.insert(ctx);
  }
};

world& the_world() {
  static world* w = new world;  // lives for the process, never destroyed
  return *w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  world& w = the_world();
  w.post_receives();
  size_t pos = 0;
  while (size - pos >= 40) {
    cell_fields f;
    const uint8_t* r = data + pos;
    f.kind = r[0] % 9;  // the kinds and two values past the last
    f.flags = r[1];
    f.src = r[2] < 200 ? r[2] % 4 - 1 : static_cast<int32_t>(r[2]) << 24;
    memcpy(&f.imm, r + 4, 4);
    uint32_t length;
    memcpy(&length, r + 8, 4);
    f.length = r[3] & 1 ? length : length % (k_payload + 64);
    memcpy(&f.address, r + 12, 8);
    memcpy(&f.key, r + 20, 8);
    memcpy(&f.op, r + 28, 8);
    const uint8_t steer = r[36];
    const size_t payload = r[37];
    const uint8_t own = r[38];
    pos += 40;
    if (steer & 1)
      f.address = reinterpret_cast<uint64_t>(w.registered.data()) + f.address % (k_region + 64);
    if (steer & 2) f.key = w.key;
    if (steer & 4) f.address = reinterpret_cast<uint64_t>(w.unregistered.data());
    const size_t n = payload < size - pos ? payload : size - pos;
    if (own & 1) w.start_own_operation(own >> 1, length);
    for (int tries = 0; !w.dev.forge(0, f, data + pos, n, (steer & 16) ? f.address ^ 8 : 0);
         ++tries) {
      require(tries < 100);
      w.drain();
    }
    pos += n;
    if (steer & 32) w.drain();
  }
  w.drain();
  // Own operations all come back (replies and acknowledgements from itself).
  for (int i = 0; i < 100 && !w.op_ctxs.empty(); ++i) w.drain();
  require(w.op_ctxs.empty());
  return 0;
}
