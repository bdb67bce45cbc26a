// A ring of medium messages, timed with LCT_now through lci.h alone (as
// LCI 1.7.9's lci.h includes lct.h), every byte checked.
#include <lci.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  LCI_initialize();
  LCT_time_t start = LCT_now();
  int peer = (LCI_RANK + 1) % LCI_NUM_PROCESSES;
  int from = (LCI_RANK + LCI_NUM_PROCESSES - 1) % LCI_NUM_PROCESSES;
  std::vector<char> out(1000), in(1000);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(LCI_RANK * 31 + i);
  LCI_mbuffer_t rbuf{in.data(), in.size()};
  LCI_recvm(LCI_UR_ENDPOINT, rbuf, from, 7, LCI_UR_CQ, nullptr);
  LCI_barrier();
  LCI_mbuffer_t sbuf{out.data(), out.size()};
  while (LCI_sendm(LCI_UR_ENDPOINT, sbuf, peer, 7) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  LCI_request_t r;
  while (LCI_queue_pop(LCI_UR_CQ, &r) == LCI_ERR_RETRY) LCI_progress(LCI_UR_DEVICE);
  bool ok = r.flag == LCI_OK && r.rank == from && r.tag == 7 && r.data.mbuffer.length == in.size();
  for (size_t i = 0; ok && i < in.size(); ++i) ok = in[i] == static_cast<char>(from * 31 + i);
  double us = LCT_time_to_us(LCT_now() - start);
  ok = ok && us >= 0.0;
  LCI_finalize();
  std::printf("rank %d: consumer_cxx %s\n", LCI_RANK, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
