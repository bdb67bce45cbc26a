// The text of the PMI-1 wire protocol, shared by the client
// (lci/bootstrap/pmi1.cpp) and the server in lcrun
// (tools/lcrun/pmi_server.cpp): a line is "cmd=<name> key=value ..." split
// at spaces and tabs, each token at its first '=' (values may contain '=';
// a token without '=' has an empty value; the first of repeated keys
// counts). Abort messages travel percent-encoded. Every function accepts
// any input: these bytes come from another process.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace lci::bootstrap::pmi1_wire {

// 64-bit FNV-1a: a stable, dependency-free hash for shortening long keys.
inline std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The store's key for `key` put by `rank`: "lci.<rank>.<key>", or with the
// key replaced by "#<its hash>" where that would not fit keylen_max (which
// counts the servers' terminating NUL). The client (put, get) and lcrun's
// server (getall) name keys alike.
inline std::string wire_key(int rank, const std::string& key, std::size_t keylen_max) {
  std::string prefix = "lci." + std::to_string(rank) + ".";
  if (prefix.size() + key.size() < keylen_max) return prefix + key;
  char hashed[24];
  std::snprintf(hashed, sizeof hashed, "#%016llx", static_cast<unsigned long long>(fnv1a(key)));
  return prefix + hashed;
}

// lcrun's extension of PMI-1 (sent only to lcrun, LCI_LCRUN): "cmd=getall
// kvsname=K key=<key> from=<rank>" asks for the values of ranks from, from
// + 1, ... under key (named per rank as wire_key does); the reply
// "cmd=getall_result rc=0 next=<rank> v=<value> v=<value> ..." carries them
// in rank order up to rank next - 1, at most getall_reply_bytes of values,
// so that a rank reads every rank's value in a few requests instead of one
// per rank. rc=-1 with a msg when a rank has no such value.
inline constexpr std::size_t getall_reply_bytes = 32 * 1024;

// Strict decimal parse of a whole string; false on junk or overflow.
inline bool parse_int(const char* text, long& out) {
  if (text == nullptr || *text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

// One line split into its key=value tokens.
struct line {
  std::string text;
  std::vector<std::pair<std::string, std::string>> fields;

  const std::string* find(const char* key) const {
    for (const auto& f : fields)
      if (f.first == key) return &f.second;
    return nullptr;
  }
  std::string get_or(const char* key, const char* fallback) const {
    const std::string* v = find(key);
    return v ? *v : fallback;
  }
};

inline line parse_line(std::string text) {
  line r;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    std::size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t') ++end;
    if (end > pos) {
      std::string token = text.substr(pos, end - pos);
      std::size_t eq = token.find('=');
      if (eq == std::string::npos)
        r.fields.emplace_back(token, "");
      else
        r.fields.emplace_back(token.substr(0, eq), token.substr(eq + 1));
    }
    pos = end;
  }
  r.text = std::move(text);
  return r;
}

// The first 512 bytes of `message` with everything a PMI-1 value cannot
// carry (spaces, controls, '%', bytes above '~') as %XX.
inline std::string percent_encode(const std::string& message) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : message.substr(0, 512)) {
    if (c > ' ' && c <= '~' && c != '%') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// A character as lcrun prints text from a rank: control characters become
// spaces, so the text is one line and cannot drive a terminal.
inline char printable_char(char c) {
  return static_cast<unsigned char>(c) < ' ' || c == '\x7f' ? ' ' : c;
}
inline std::string printable(std::string s) {
  for (char& c : s) c = printable_char(c);
  return s;
}

// Undoes percent_encode, for printing: a '%' not followed by two hex digits
// stays as it is, and a control character, decoded or sent raw, becomes a
// space, so that a message prints as one line and cannot drive a terminal.
inline std::string percent_decode(const std::string& s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += printable_char(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out += printable_char(s[i]);
    }
  }
  return out;
}

}  // namespace lci::bootstrap::pmi1_wire
