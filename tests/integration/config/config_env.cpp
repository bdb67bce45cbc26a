// The LCI_* environment variables set the globals of lci.h, read once by
// LCI_initialize. usage: config_env NAME=VALUE...  (each a global and the
// value it must have). Exits 0 if every global matches.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci.h"

namespace {
long long value_of(const std::string& name) {
  if (name == "LCI_MEDIUM_SIZE") return LCI_MEDIUM_SIZE;
  if (name == "LCI_PACKET_SIZE") return LCI_PACKET_SIZE;
  if (name == "LCI_SERVER_NUM_PKTS") return LCI_SERVER_NUM_PKTS;
  if (name == "LCI_DEFAULT_QUEUE_LENGTH") return LCI_DEFAULT_QUEUE_LENGTH;
  if (name == "LCI_MAX_QUEUE_LENGTH") return LCI_MAX_QUEUE_LENGTH;
  if (name == "LCI_MAX_ENDPOINTS") return LCI_MAX_ENDPOINTS;
  if (name == "LCI_MAX_TAG") return LCI_MAX_TAG;
  if (name == "LCI_DEFAULT_TABLE_LENGTH") return LCI_DEFAULT_TABLE_LENGTH;
  if (name == "LCI_MAX_SINGLE_MESSAGE_SIZE") return static_cast<long long>(LCI_MAX_SINGLE_MESSAGE_SIZE);
  if (name == "LCI_SERVER_MAX_RECVS") return LCI_SERVER_MAX_RECVS;
  if (name == "LCI_RDV_PROTOCOL") return LCI_RDV_PROTOCOL;
  if (name == "LCI_DEVICE_LOCK_MODE") return static_cast<long long>(LCI_DEVICE_LOCK_MODE);
  if (name == "LCI_BACKEND_TRY_LOCK_MODE") return static_cast<long long>(LCI_BACKEND_TRY_LOCK_MODE);
  if (name == "LCI_NUM_PROCESSES") return LCI_NUM_PROCESSES;
  if (name == "LCI_NUM_DEVICES") return LCI_NUM_DEVICES;
  if (name == "LCI_IOVEC_SIZE") return LCI_IOVEC_SIZE;
  fprintf(stderr, "config_env: unknown global %s\n", name.c_str());
  exit(2);
}
}  // namespace

int main(int argc, char** argv) {
  LCI_initialize();
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const char* eq = strchr(argv[i], '=');
    if (!eq) return 2;
    const std::string name(argv[i], static_cast<size_t>(eq - argv[i]));
    const long long want = atoll(eq + 1);
    const long long got = value_of(name);
    if (got != want) {
      fprintf(stderr, "rank %d: %s = %lld, expected %lld\n", LCI_RANK, name.c_str(), got, want);
      ++failures;
    }
  }
  if (LCI_get_iovec_piggy_back_size(1) < 1 ||
      LCI_get_iovec_piggy_back_size(LCI_IOVEC_SIZE) < 1 ||
      LCI_get_iovec_piggy_back_size(LCI_IOVEC_SIZE) > LCI_get_iovec_piggy_back_size(1)) {
    fprintf(stderr, "rank %d: piggy-back sizes are not >= 1 and non-increasing\n", LCI_RANK);
    ++failures;
  }
  LCI_finalize();
  if (!failures) printf("rank %d: config_env passed (%d globals)\n", LCI_RANK, argc - 1);
  return failures ? 1 : 0;
}
