// The size of the pieces RDMA transfers are split into
// (lci::net::rdma_piece_size in lci/backend/net_types.hpp): the configured
// LCI_MAX_SINGLE_MESSAGE_SIZE within the backend's largest message.
#include <doctest/doctest.h>

#include <cstdint>

#include "lci/backend/net_types.hpp"

using lci::net::rdma_piece_size;

TEST_CASE("rdma piece: the configured size within the backend's maximum") {
  CHECK(rdma_piece_size(0x7FFFFFFF, SIZE_MAX) == 0x7FFFFFFF);          // default, ofi shm/tcp
  CHECK(rdma_piece_size(4097, SIZE_MAX) == 4097);                      // an odd small setting
  CHECK(rdma_piece_size(size_t{1} << 40, size_t{1} << 31) == size_t{1} << 31);  // verbs
  CHECK(rdma_piece_size(SIZE_MAX, 65537) == 65537);
  CHECK(rdma_piece_size(65537, 65537) == 65537);
  CHECK(rdma_piece_size(65536, 65537) == 65536);
}

TEST_CASE("rdma piece: never 0 (a transfer always advances)") {
  CHECK(rdma_piece_size(0, SIZE_MAX) == 1);
  CHECK(rdma_piece_size(1024, 0) == 1);
  CHECK(rdma_piece_size(1, 1) == 1);
}
