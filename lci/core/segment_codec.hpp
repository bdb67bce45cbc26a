// The text form of a segment that LCI_segment_serialize writes and
// LCI_segment_deserialize reads back in another process:
//   "lci-seg1:<group>:<base>:<length>:<rkey>:<owner handle>:<virt>"
// with the group and virt in decimal and the 64-bit fields in hex. The
// parser accepts exactly that form (nothing after it) and any other input
// is refused, never trusted: the text comes from another process.
#pragma once

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace lci {

struct segment_text {
  int group = 0;
  uint64_t base = 0, length = 0, rkey = 0, handle = 0;
  bool virt = false;
};

// Room LCI_segment_serialize's caller provides (and the most it writes).
inline constexpr std::size_t segment_text_size = 256;

inline void format_segment(const segment_text& s, char* out) {
  std::snprintf(out, segment_text_size,
                "lci-seg1:%d:%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%d", s.group,
                s.base, s.length, s.rkey, s.handle, s.virt ? 1 : 0);
}

// False if `text` is not exactly a format_segment string.
inline bool parse_segment(const char* text, segment_text& out) {
  segment_text t;
  int virt = 0, consumed = 0;
  if (std::sscanf(text, "lci-seg1:%d:%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%d%n",
                  &t.group, &t.base, &t.length, &t.rkey, &t.handle, &virt, &consumed) != 6 ||
      text[consumed] != '\0')
    return false;
  t.virt = virt != 0;
  out = t;
  return true;
}

}  // namespace lci
