// The message counts of the teardown check (ofi_device::check_delivery) as
// PMI values. A rank publishes how many authenticated messages it sent to
// each peer; most ranks talk to few peers, so only the non-zero counts are
// written, as "rank:count," in lowercase hex, and the text is split into
// values of at most `limit` characters (PMI servers bound a value: lcrun's
// to 512). The first value starts with the number of values and ';'.
//
// The values come from another process: decoding accepts only that format,
// ranks below `nranks`, counts of at most 16 digits and a value count that
// the entries could need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lci::ofi {

namespace detail {
// A lowercase hex digit's value, or -1.
inline int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}
}  // namespace detail

inline constexpr size_t sent_value_chars = 480;

inline std::vector<std::string> encode_sent_counts(const std::vector<uint64_t>& sent,
                                                   size_t limit = sent_value_chars) {
  auto hex = [](uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
    return std::string(buf);
  };
  std::vector<std::string> values(1);
  for (size_t r = 0; r < sent.size(); ++r) {
    if (sent[r] == 0) continue;
    const std::string entry = hex(r) + ":" + hex(sent[r]) + ",";
    // The first value keeps room for its prefix (at most 8 digits and ';').
    const size_t room = values.size() == 1 ? limit - 9 : limit;
    if (values.back().size() + entry.size() > room) values.emplace_back();
    values.back() += entry;
  }
  values[0] = hex(values.size()) + ";" + values[0];
  return values;
}

// The number of values announced by the first one, or 0 when it is
// malformed or more than the entries of `nranks` ranks could need.
inline size_t sent_count_values(const std::string& first, int nranks,
                                size_t limit = sent_value_chars) {
  const size_t semi = first.find(';');
  if (semi == std::string::npos || semi == 0 || semi > 8) return 0;
  size_t n = 0;
  for (size_t i = 0; i < semi; ++i) {
    const int d = detail::hex_digit(first[i]);
    if (d < 0) return 0;
    n = n * 16 + static_cast<size_t>(d);
  }
  // An entry takes at most 8 + 1 + 16 + 1 characters, and a value is
  // closed only when the next entry does not fit.
  const size_t most = static_cast<size_t>(nranks) * 26 / (limit - 35) + 1;
  return n >= 1 && n <= most ? n : 0;
}

// The count sent to `self` in `values` (the first with its prefix), 0 if
// none is listed. False when a value is malformed.
inline bool sent_count_to(const std::vector<std::string>& values, int nranks, int self,
                          uint64_t* count) {
  *count = 0;
  for (size_t v = 0; v < values.size(); ++v) {
    const std::string& s = values[v];
    size_t i = 0;
    if (v == 0) {
      i = s.find(';');
      if (i == std::string::npos) return false;
      ++i;
    }
    while (i < s.size()) {
      uint64_t field[2] = {0, 0};
      for (int f = 0; f < 2; ++f) {
        const char end = f == 0 ? ':' : ',';
        size_t digits = 0;
        for (; i < s.size() && s[i] != end; ++i, ++digits) {
          const int d = detail::hex_digit(s[i]);
          if (d < 0 || digits == 16) return false;
          field[f] = field[f] * 16 + static_cast<uint64_t>(d);
        }
        if (i == s.size() || digits == 0) return false;
        ++i;  // the ':' or ','
      }
      if (field[0] >= static_cast<uint64_t>(nranks)) return false;
      if (field[0] == static_cast<uint64_t>(self)) *count = field[1];
    }
  }
  return true;
}

}  // namespace lci::ofi
