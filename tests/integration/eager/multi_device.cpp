// Several independent devices per process: endpoints on different devices
// carry their own traffic, progress on one device never delivers another's
// messages, and devices can be freed while others keep working.
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "harness.hpp"
#include "lci.h"

namespace {

constexpr int ndev = 3;

// Returns true if the send had to progress `dev` (which may then also have
// received this rank's incoming message on that device).
bool send_to_peer(LCI_endpoint_t ep, LCI_device_t dev, int peer, int value) {
  LCI_mbuffer_t m;
  m.address = &value;
  m.length = sizeof(value);
  bool progressed = false;
  while (LCI_sendm(ep, m, peer, 7) == LCI_ERR_RETRY) {
    LCI_progress(dev);
    progressed = true;
  }
  return progressed;
}
}  // namespace

int main() {
  LCI_initialize();
  const int peer = (LCI_RANK + 1) % LCI_NUM_PROCESSES;
  const int from = (LCI_RANK - 1 + LCI_NUM_PROCESSES) % LCI_NUM_PROCESSES;
  LCI_device_t dev[ndev];
  LCI_endpoint_t ep[ndev];
  LCI_comp_t sync[ndev];
  int got[ndev];
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_SYNC);
  for (int d = 0; d < ndev; ++d) {
    EXPECT(LCI_device_init(&dev[d]) == LCI_OK, "device_init %d", d);
    LCI_endpoint_init(&ep[d], dev[d], plist);
    LCI_sync_create(dev[d], 1, &sync[d]);
  }
  LCI_plist_free(&plist);
  EXPECT(LCI_NUM_DEVICES == ndev + 1, "LCI_NUM_DEVICES = %d", LCI_NUM_DEVICES);

  for (int d = 0; d < ndev; ++d) {
    got[d] = -1;
    LCI_mbuffer_t m;
    m.address = &got[d];
    m.length = sizeof(int);
    LCI_recvm(ep[d], m, from, 7, sync[d], nullptr);
  }
  LCI_barrier();
  bool progressed[ndev];
  for (int d = 0; d < ndev; ++d) progressed[d] = send_to_peer(ep[d], dev[d], peer, 1000 * LCI_RANK + d);

  // Only device 1 is progressed first: devices 0 and 2 must stay pending.
  LCI_request_t r;
  while (LCI_sync_test(sync[1], &r) == LCI_ERR_RETRY) LCI_progress(dev[1]);
  EXPECT(got[1] == 1000 * from + 1, "device 1 got %d", got[1]);
  EXPECT(r.rank == from && r.tag == 7 && r.data.mbuffer.length == sizeof(int), "request fields");
  for (int d : {0, 2}) {
    LCI_error_t rc = LCI_sync_test(sync[d], &r);
    EXPECT(progressed[d] || rc == LCI_ERR_RETRY, "device %d completed without progress", d);
    while (rc == LCI_ERR_RETRY) {
      LCI_progress(dev[d]);
      rc = LCI_sync_test(sync[d], &r);
    }
    EXPECT(got[d] == 1000 * from + d, "device %d got %d", d, got[d]);
  }

  // Free device 0; the others keep working.
  LCI_endpoint_free(&ep[0]);
  LCI_sync_free(&sync[0]);
  LCI_device_free(&dev[0]);
  EXPECT(dev[0] == nullptr, "device_free did not clear the handle");
  EXPECT(LCI_NUM_DEVICES == ndev, "LCI_NUM_DEVICES = %d after a free", LCI_NUM_DEVICES);
  for (int d = 1; d < ndev; ++d) {
    got[d] = -1;
    LCI_mbuffer_t m;
    m.address = &got[d];
    m.length = sizeof(int);
    LCI_recvm(ep[d], m, from, 7, sync[d], nullptr);
  }
  LCI_barrier();
  for (int d = 1; d < ndev; ++d) send_to_peer(ep[d], dev[d], peer, 5000 + d);
  for (int d = 1; d < ndev; ++d) {
    while (LCI_sync_test(sync[d], nullptr) == LCI_ERR_RETRY) LCI_progress(dev[d]);
    EXPECT(got[d] == 5000 + d, "second round on device %d got %d", d, got[d]);
  }
  for (int d = 1; d < ndev; ++d) {
    LCI_endpoint_free(&ep[d]);
    LCI_sync_free(&sync[d]);
    LCI_device_free(&dev[d]);
  }
  LCI_finalize();
  return lci_test::report("multi_device");
}
