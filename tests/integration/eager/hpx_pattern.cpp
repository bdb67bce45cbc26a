// HPX's LCI parcelport at small scale, with its default settings: two
// devices (LCI_UR_DEVICE and one LCI_device_init), each with a header
// endpoint (tag matching, default completion: one queue shared by the
// devices, LCI_SERVER_NUM_PKTS * ndevices long) and a follow-up endpoint;
// --prepost receives LCI_recvmn(LCI_RANK_ANY, tag 0) posted per device
// before any traffic (HPX's prepost_recv_num), each completed one posted
// again. Then every rank sends --messages headers per device
// (LCI_mbuffer_alloc + LCI_sendmn, retried with progress as HPX does) to
// every other rank, and a follow-up LCI_sendm for each one received.
// Everything must complete with the default pool sizes.
//
// --case exhaust: one rank takes every packet of a device with
// LCI_mbuffer_alloc and keeps asking: the library must warn, once, naming
// LCI_SERVER_NUM_PKTS (the test's PASS_REGULAR_EXPRESSION).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "lci.h"

namespace {

constexpr int ndevices = 2;

struct device_set {
  LCI_device_t device;
  LCI_endpoint_t endpoint_new;
  LCI_endpoint_t endpoint_followup;
};

void progress_all(device_set* devs) {
  for (int d = 0; d < ndevices; ++d) LCI_progress(devs[d].device);
}

int run_traffic(int prepost, int messages) {
  lci_test::harness_init(120);
  const int nranks = LCI_NUM_PROCESSES;
  LCI_comp_t header_cq;
  OK(LCI_queue_createx(LCI_UR_DEVICE, static_cast<size_t>(LCI_SERVER_NUM_PKTS) * ndevices,
                       &header_cq));
  LCI_comp_t followup_cq;
  OK(LCI_queue_create(LCI_UR_DEVICE, &followup_cq));
  device_set devs[ndevices];
  for (int i = 0; i < ndevices; ++i) {
    if (i == 0)
      devs[i].device = LCI_UR_DEVICE;
    else
      OK(LCI_device_init(&devs[i].device));
    LCI_plist_t plist;
    LCI_plist_create(&plist);
    LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_QUEUE);
    LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE);
    OK(LCI_endpoint_init(&devs[i].endpoint_followup, devs[i].device, plist));
    LCI_plist_set_default_comp(plist, header_cq);
    LCI_plist_set_match_type(plist, LCI_MATCH_TAG);
    OK(LCI_endpoint_init(&devs[i].endpoint_new, devs[i].device, plist));
    LCI_plist_free(&plist);
  }
  lci_test::phase("preposting %d receives on each of %d devices", prepost, ndevices);
  for (int i = 0; i < ndevices; ++i)
    for (int j = 0; j < prepost; ++j)
      OK(LCI_recvmn(devs[i].endpoint_new, LCI_RANK_ANY, 0, header_cq,
                    reinterpret_cast<void*>(static_cast<intptr_t>(i))));
  LCI_barrier();

  const long expected = static_cast<long>(messages) * ndevices * (nranks - 1);
  long headers = 0, followups = 0, sent = 0;
  std::vector<int> answers;  // follow-up payloads: stable until the end
  answers.reserve(static_cast<size_t>(expected));
  lci_test::deadline d(100);
  lci_test::phase("traffic: %d headers per device to each of %d peers", messages, nranks - 1);
  int next_peer = 1, next_dev = 0, round = 0;
  while (headers < expected || followups < expected) {
    d.check("the HPX-pattern traffic");
    if (sent < expected) {
      const int peer = (LCI_RANK + next_peer) % nranks;
      device_set& dv = devs[next_dev];
      LCI_mbuffer_t m;
      if (LCI_mbuffer_alloc(dv.device, &m) == LCI_OK) {
        const int value = LCI_RANK * 1000000 + round;
        std::memcpy(m.address, &value, sizeof value);
        m.length = sizeof value;
        // The answer's receive first, on the same device's follow-up endpoint.
        OK(LCI_recvmn(dv.endpoint_followup, peer, 1, followup_cq, nullptr));
        LCI_error_t rc;
        while ((rc = LCI_sendmn(dv.endpoint_new, m, peer, 0)) == LCI_ERR_RETRY) {
          d.check("a header send");
          progress_all(devs);
        }
        OK(rc);
        ++sent;
        if (++next_peer == nranks) {
          next_peer = 1;
          if (++next_dev == ndevices) {
            next_dev = 0;
            ++round;
          }
        }
      }
    }
    LCI_request_t r;
    while (LCI_queue_pop(header_cq, &r) == LCI_OK) {
      const int i = static_cast<int>(reinterpret_cast<intptr_t>(r.user_context));
      EXPECT(r.type == LCI_MEDIUM && r.data.mbuffer.length == sizeof(int), "header type %d",
             static_cast<int>(r.type));
      int value = 0;
      std::memcpy(&value, r.data.mbuffer.address, sizeof value);
      EXPECT(value / 1000000 == r.rank, "header from %d says %d", r.rank, value);
      LCI_mbuffer_free(r.data.mbuffer);
      ++headers;
      // As HPX: post the next header receive, and answer on the follow-up endpoint.
      RETRY(LCI_recvmn(devs[i].endpoint_new, LCI_RANK_ANY, 0, header_cq,
                       reinterpret_cast<void*>(static_cast<intptr_t>(i))));
      answers.push_back(value);
      LCI_mbuffer_t a;
      a.address = &answers.back();
      a.length = sizeof(int);
      LCI_error_t rc;
      while ((rc = LCI_sendm(devs[i].endpoint_followup, a, r.rank, 1)) == LCI_ERR_RETRY) {
        d.check("a follow-up send");
        progress_all(devs);
      }
      OK(rc);
    }
    while (LCI_queue_pop(followup_cq, &r) == LCI_OK) {
      int value = -1;
      std::memcpy(&value, r.data.mbuffer.address, sizeof value);
      EXPECT(value / 1000000 == LCI_RANK, "follow-up answers %d, not a header of rank %d",
             value, LCI_RANK);
      LCI_mbuffer_free(r.data.mbuffer);
      ++followups;
    }
    progress_all(devs);
  }
  EXPECT(headers == expected && followups == expected, "%ld headers, %ld follow-ups of %ld",
         headers, followups, expected);
  LCI_barrier();
  for (int i = 1; i < ndevices; ++i) {
    LCI_endpoint_free(&devs[i].endpoint_new);
    LCI_endpoint_free(&devs[i].endpoint_followup);
  }
  return lci_test::harness_finish("hpx_pattern");
}

int run_exhaust() {
  lci_test::harness_init(60);
  LCI_device_t dev;
  OK(LCI_device_init(&dev));
  std::vector<LCI_mbuffer_t> held;
  LCI_mbuffer_t m;
  while (LCI_mbuffer_alloc(dev, &m) == LCI_OK) held.push_back(m);
  EXPECT(!held.empty() && held.size() < static_cast<size_t>(LCI_SERVER_NUM_PKTS),
         "took %zu packets of %d", held.size(), LCI_SERVER_NUM_PKTS);
  // As HPX's `while (LCI_mbuffer_alloc(...) != LCI_OK)` loop would, for a while.
  for (int i = 0; i < 3000; ++i) {
    EXPECT(LCI_mbuffer_alloc(dev, &m) == LCI_ERR_RETRY, "alloc %d from an empty pool", i);
    LCI_progress(dev);
  }
  for (auto& b : held) LCI_mbuffer_free(b);
  OK(LCI_mbuffer_alloc(dev, &m));
  LCI_mbuffer_free(m);
  LCI_device_free(&dev);
  return lci_test::harness_finish("hpx_pattern_exhaust");
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "traffic";
  int prepost = 1, messages = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--case") == 0) which = argv[i + 1];
    if (std::strcmp(argv[i], "--prepost") == 0) prepost = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--messages") == 0) messages = std::atoi(argv[i + 1]);
  }
  return which == "exhaust" ? run_exhaust() : run_traffic(prepost, messages);
}
