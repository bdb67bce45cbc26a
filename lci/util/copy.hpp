// copy_bytes: memcpy for the message path, whose payloads are mostly a few
// bytes. Up to 16 bytes are copied inline with two (possibly overlapping)
// loads and stores of the widest size that fits; a call to the C library's
// memcpy costs more than the copy itself at those sizes. Longer copies go
// to memcpy. A source another process may write concurrently (a shared
// ring cell) is fine: each byte is read independently, nothing is derived
// from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lci {

// n bytes, sizeof(T) <= n <= 2 * sizeof(T): the first and the last
// sizeof(T), which overlap unless n is twice that.
template <class T>
[[gnu::always_inline]] inline void copy_ends(char* d, const char* s, size_t n) {
  T a, b;
  memcpy(&a, s, sizeof(T));
  memcpy(&b, s + n - sizeof(T), sizeof(T));
  memcpy(d, &a, sizeof(T));
  memcpy(d + n - sizeof(T), &b, sizeof(T));
}

[[gnu::always_inline]] inline void copy_bytes(void* dst, const void* src, size_t n) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  if (__builtin_expect(n > 16, 0)) {
    memcpy(d, s, n);
  } else if (n >= 8) {
    copy_ends<uint64_t>(d, s, n);
  } else if (n >= 4) {
    copy_ends<uint32_t>(d, s, n);
  } else if (n > 0) {
    const char a = s[0], m = s[n / 2], z = s[n - 1];
    d[0] = a;
    d[n / 2] = m;
    d[n - 1] = z;
  }
}

}  // namespace lci
