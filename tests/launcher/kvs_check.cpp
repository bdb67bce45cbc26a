// kvs_check N [name [get_missing]]: opens the bootstrap and checks that it is
// rank r of N (and, given `name`, that the bootstrap reports that name:
// lcrun, pmi1, pmix, local), that every rank sees every other rank's values
// after a fence, and that barriers return. Exits 0 on success, 1 with a
// message naming the mismatch otherwise. With get_missing, every rank then
// asks its right neighbour for a key nobody put, which must end the job with
// a message naming the key (the test checks that; reaching the end is a
// failure). Run through lcrun at several N, through mpiexec.hydra and Open
// MPI's mpirun (PMIx), and by hand (N=1).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lci/bootstrap/bootstrap.hpp"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "kvs_check: FAILED: %s\n", what.c_str());
  ++failures;
}

std::string value_of(int rank, int round) {
  // '=' and ':' are legal in values; the length makes it more than one read
  // on a slow pipe.
  return "r" + std::to_string(rank) + "=round" + std::to_string(round) + ":" +
         std::string(100 + rank % 7, static_cast<char>('a' + rank % 26));
}

// 63 characters: the longest key the interface allows, which with the
// per-rank prefix exceeds the PMI-1 key limit of Hydra and lcrun.
const std::string long_key(63, 'k');

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kvs_check N [expected-bootstrap-name [get_missing]]\n");
    return 2;
  }
  const bool get_missing = argc >= 4 && std::string(argv[3]) == "get_missing";
  const int expected_size = std::atoi(argv[1]);
  auto bs = lci::bootstrap::open();
  const int rank = bs->rank();
  const int size = bs->size();
  expect(size == expected_size,
         "size is " + std::to_string(size) + ", expected " + std::to_string(expected_size));
  expect(rank >= 0 && rank < size, "rank " + std::to_string(rank) + " out of range");
  if (argc >= 3)
    expect(std::string(bs->name()) == argv[2],
           std::string("bootstrap is '") + bs->name() + "', expected '" + argv[2] + "'");

  for (int round = 0; round < 2; ++round) {
    const std::string key = "addr" + std::to_string(round);
    bs->put(key, value_of(rank, round));
    bs->put(long_key, "long" + std::to_string(rank) + "." + std::to_string(round));
    bs->fence();
    for (int peer = 0; peer < size; ++peer) {
      std::string got = bs->get(peer, key);
      expect(got == value_of(peer, round), "round " + std::to_string(round) + ": rank " +
                                               std::to_string(peer) + " key " + key +
                                               " gave '" + got + "'");
      got = bs->get(peer, long_key);
      expect(got == "long" + std::to_string(peer) + "." + std::to_string(round),
             "round " + std::to_string(round) + ": long key of rank " + std::to_string(peer) +
                 " gave '" + got + "'");
    }
    // The next round overwrites long_key: no rank may put it before every
    // rank has read this round's value.
    bs->barrier();
  }
  // Every rank's value at once (get_all: lcrun's getall extension, one get
  // per rank elsewhere): a short key, a key of 57 characters (hashed on the
  // wire for ranks from 10 on, whose prefix "lci.NN." is one longer), and
  // values of 500 characters, so that from 66 ranks on lcrun answers in
  // more than one reply.
  const std::string big_key = "big_" + std::string(53, 'k');
  bs->put("small", value_of(rank, 7));
  bs->put(big_key, std::string(500, static_cast<char>('A' + rank % 26)) + std::to_string(rank));
  bs->fence();
  const std::vector<std::string> small = bs->get_all("small");
  const std::vector<std::string> big = bs->get_all(big_key);
  expect(small.size() == static_cast<size_t>(size) && big.size() == static_cast<size_t>(size),
         "get_all returned " + std::to_string(small.size()) + " and " +
             std::to_string(big.size()) + " values");
  for (int peer = 0; peer < size && peer < static_cast<int>(small.size()) &&
                     peer < static_cast<int>(big.size());
       ++peer) {
    expect(small[static_cast<size_t>(peer)] == value_of(peer, 7),
           "get_all: rank " + std::to_string(peer) + "'s small value");
    expect(big[static_cast<size_t>(peer)] ==
               std::string(500, static_cast<char>('A' + peer % 26)) + std::to_string(peer),
           "get_all: rank " + std::to_string(peer) + "'s big value");
  }
  for (int i = 0; i < 5; ++i) bs->barrier();

  if (failures != 0) return 1;
  if (get_missing) {
    const std::string got = bs->get((rank + 1) % size, "never_put");
    std::fprintf(stderr, "kvs_check: FAILED: get of a key nobody put returned '%s'\n",
                 got.c_str());
    return 1;
  }
  std::printf("kvs_check: rank %d of %d (%s) ok\n", rank, size, bs->name());
  return 0;
}
