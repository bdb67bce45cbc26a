// The configuration table, its parse into lci::config, its printing, and
// the LCI_* globals of lci.h mirrored from it (see config.hpp).
#include "lci/core/config.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <strings.h>
#include <unistd.h>
#include <iterator>
#include <string>
#include <vector>

#include "lci.h"
#include "lci/core/config_values.hpp"
#include "lci/core/protocol.hpp"
#include "lci/util/crash_signals.hpp"
#include "lci/util/log.hpp"
#include "lci/util/signal_name.hpp"
#include "lci/wait/parking.hpp"

// ---- globals of lci.h -----------------------------------------------------
// Those that are not settings, then one per `mirrored` row of settings.def,
// initialized to its default (config_parse mirrors lci::g_config into them).
int LCI_NUM_PROCESSES = 1;
int LCI_RANK = 0;
int LCI_NUM_DEVICES = 0;
LCI_device_t LCI_UR_DEVICE = nullptr;
LCI_endpoint_t LCI_UR_ENDPOINT = nullptr;
LCI_comp_t LCI_UR_CQ = nullptr;

#define LCI_GLOBAL_mirrored(NAME, kind, deflt) \
  lci::setting_type<lci::setting_kind::kind> NAME = deflt;
#define LCI_GLOBAL_internal(NAME, kind, deflt)
#define LCI_SETTING(NAME, kind, category, member, deflt, limits, global, help) \
  LCI_GLOBAL_##global(NAME, kind, deflt)
#define LCI_SETTING_ALIAS(NAME, FIRST, help)
#include "lci/core/settings.def"
#undef LCI_SETTING
#undef LCI_SETTING_ALIAS
#undef LCI_GLOBAL_mirrored
#undef LCI_GLOBAL_internal

namespace lci {

namespace {

using kind = setting_kind;

// What a parsed number must also satisfy (the `limits` column of
// settings.def), and its text in the malformed-value message and the
// documentation.
struct limits {
  enum class form : uint8_t { any, at_least, between, power_of_two, multiple_of, one_of };
  form shape = form::any;
  long long a = 0, b = 0;  // at_least: a; between, power_of_two: a ... b; multiple_of: step a, minimum b
  long long values[4] = {};
  int count = 0;           // one_of: values[0 .. count)

  static constexpr limits any() { return {}; }
  static constexpr limits at_least(long long lo) { return {form::at_least, lo, 0, {}, 0}; }
  static constexpr limits between(long long lo, long long hi) { return {form::between, lo, hi, {}, 0}; }
  static constexpr limits power_of_two(long long lo, long long hi) {
    return {form::power_of_two, lo, hi, {}, 0};
  }
  static constexpr limits multiple_of(long long step, long long min) {
    return {form::multiple_of, step, min, {}, 0};
  }
  static constexpr limits one_of(long long x, long long y, long long z) {
    return {form::one_of, 0, 0, {x, y, z, 0}, 3};
  }

  bool admits(long long v) const {
    switch (shape) {
      case form::any: return true;
      case form::at_least: return v >= a;
      case form::between: return v >= a && v <= b;
      case form::power_of_two: return v >= a && v <= b && (v & (v - 1)) == 0;
      case form::multiple_of: return v % a == 0 && v >= b;
      case form::one_of:
        for (int i = 0; i < count; ++i)
          if (v == values[i]) return true;
        return false;
    }
    return false;
  }

  // "at least 8", "1 ... 4094", "a power of two, 16 ... 65536",
  // "a multiple of 64 of at least 4160", "0, 4 or 8"; "" for any.
  std::string expected() const {
    const auto n = [](long long v) { return std::to_string(v); };
    switch (shape) {
      case form::any: return "";
      case form::at_least: return "at least " + n(a);
      case form::between: return n(a) + " ... " + n(b);
      case form::power_of_two: return "a power of two, " + n(a) + " ... " + n(b);
      case form::multiple_of: return "a multiple of " + n(a) + " of at least " + n(b);
      case form::one_of: {
        std::string s;
        for (int i = 0; i < count; ++i)
          s += (i == 0 ? "" : i + 1 == count ? " or " : ", ") + n(values[i]);
        return s;
      }
    }
    return "";
  }
};

#define LCI_ANY limits::any()
#define LCI_AT_LEAST(lo) limits::at_least(lo)
#define LCI_BETWEEN(lo, hi) limits::between(lo, hi)
#define LCI_POWER_OF_TWO(lo, hi) limits::power_of_two(lo, hi)
#define LCI_MULTIPLE_OF(step, min) limits::multiple_of(step, min)
#define LCI_ONE_OF(x, y, z) limits::one_of(x, y, z)

struct entry {
  const char* name;
  kind type;
  config_category category;
  void* (*field)(config&);  // the member it sets
  limits range;
  const char* help;         // for no_effect rows: why nothing changes
  const char* alias_of;     // nullptr, or the first row of the same member
};

#define LCI_FIELD(member) [](config& c) -> void* { return &c.member; }

// The rows of settings.def, in print order. An alias row is completed from
// its first row by table() below.
const entry rows_declared[] = {
#define LCI_SETTING(NAME, kind_, category_, member, deflt, limits_, global, help) \
  {#NAME, kind::kind_, config_category::category_, LCI_FIELD(member), limits_, help, nullptr},
#define LCI_SETTING_ALIAS(NAME, FIRST, help) \
  {#NAME, kind::derived, config_category::effective, nullptr, limits::any(), help, #FIRST},
#include "lci/core/settings.def"
#undef LCI_SETTING
#undef LCI_SETTING_ALIAS
};

#undef LCI_FIELD
#undef LCI_ANY
#undef LCI_AT_LEAST
#undef LCI_BETWEEN
#undef LCI_POWER_OF_TWO
#undef LCI_MULTIPLE_OF
#undef LCI_ONE_OF

// The table, each alias taking kind, category, member and limits of its first row.
const std::vector<entry>& table() {
  static const std::vector<entry> rows = [] {
    std::vector<entry> t(std::begin(rows_declared), std::end(rows_declared));
    for (entry& e : t) {
      if (!e.alias_of) continue;
      for (const entry& f : t)
        if (!f.alias_of && !strcmp(f.name, e.alias_of)) {
          e.type = f.type;
          e.category = f.category;
          e.field = f.field;
          e.range = f.range;
        }
    }
    return t;
  }();
  return rows;
}

// The words each kind accepts, as the malformed-value message names them.
constexpr const char* rdv_words = "write or writeimm";
constexpr const char* boolean_words = "0 or 1, on or off, true or false, yes or no";
constexpr const char* try_lock_words = "a comma list of none,send,recv,poll,global,global_b";
constexpr const char* device_lock_words_text = "none, block or try";
constexpr const char* log_level_words = "error, warn, diag, info, debug or trace";
constexpr const char* backend_words = "ofi or ibv";
constexpr const char* wait_policy_words = "threads, spin, fibers or tbb";
constexpr const char* peer_failure_words = "abort or continue";
constexpr const char* dump_signal_words = "none, USR1, USR2, RTMIN+n or the number of one of those";

const char* type_name(kind k) {
  switch (k) {
    case kind::integer:
    case kind::derived: return "integer";
    case kind::size: return "size";
    case kind::boolean: return "boolean";
    case kind::try_lock_mode: return "word list";
    case kind::rdv:
    case kind::device_lock_mode:
    case kind::log_level:
    case kind::backend:
    case kind::peer_failure:
    case kind::dump_signal:
    case kind::wait_policy: return "word";
    case kind::text: return "text";
  }
  return "?";
}

// What a value of row `e` must be, for the documentation.
std::string range_text(const entry& e) {
  if (e.range.shape != limits::form::any) return e.range.expected();
  switch (e.type) {
    case kind::integer: return "any int";
    case kind::size: return "at least 1";
    case kind::boolean: return boolean_words;
    case kind::rdv: return rdv_words;
    case kind::try_lock_mode: return try_lock_words;
    case kind::device_lock_mode: return device_lock_words_text;
    case kind::log_level: return log_level_words;
    case kind::backend: return backend_words;
    case kind::wait_policy: return wait_policy_words;
    case kind::peer_failure: return peer_failure_words;
    case kind::dump_signal: return dump_signal_words;
    case kind::text:
      return e.category == config_category::bootstrap ? "text, checked by the bootstrap" : "any text";
    case kind::derived: return "";
  }
  return "";
}

// A malformed value, as config_read reports it.
struct malformed {
  std::string message;
};

[[noreturn]] void bad_value(const char* name, const char* value, const char* expected) {
  throw malformed{std::string("environment variable ") + name + "=\"" + value +
                  "\" is malformed (expected " + expected + ")"};
}

// A number of row `e` (integer or size kind): decimal, with an optional
// K, M or G suffix (x 1024, 1024^2, 1024^3), within what the member holds.
// A refusal names the row's own range, as the limit check would.
long long parse_number(const entry& e, const char* value, long long lo, long long hi) {
  long long v = 0;
  if (!parse_scaled(value, lo, hi, v)) {
    const std::string range = e.range.shape != limits::form::any ? e.range.expected()
                              : e.type == kind::size ? std::string("at least 1")
                                                     : std::string();
    bad_value(e.name, value,
              (range + (range.empty() ? "" : ": ") + "a whole number, which may end in K, M or G")
                  .c_str());
  }
  return v;
}

// Booleans: 0 or 1, and the words on/off, true/false, yes/no in any case.
bool parse_boolean(const entry& e, const char* value) {
  static const char* const yes[] = {"1", "on", "true", "yes"};
  static const char* const no[] = {"0", "off", "false", "no"};
  for (const char* w : yes)
    if (!strcasecmp(value, w)) return true;
  for (const char* w : no)
    if (!strcasecmp(value, w)) return false;
  bad_value(e.name, value, boolean_words);
}

const char* const log_level_names[] = {"error", "warn", "diag", "info", "debug", "trace"};

const struct {
  const char* word;
  LCIX_wait_policy_t policy;
} wait_words[] = {{"threads", LCIX_WAIT_THREADS},
                  {"spin", LCIX_WAIT_SPIN},
                  {"fibers", LCIX_WAIT_FIBERS},
                  {"tbb", LCIX_WAIT_TBB}};

const struct {
  const char* word;
  uint64_t mode;
} device_lock_words[] = {{"none", LCI_DEVICE_LOCK_MODE_NONE},
                         {"block", LCI_DEVICE_LOCK_MODE_BLOCK},
                         {"try", LCI_DEVICE_LOCK_MODE_TRY}};

std::string lower(const char* text) {
  std::string s(text);
  for (char& ch : s) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  return s;
}

void apply(const entry& e, config& c, const char* value) {
  void* target = e.field(c);
  switch (e.type) {
    case kind::integer:
      *static_cast<int*>(target) = static_cast<int>(parse_number(e, value, INT_MIN, INT_MAX));
      return;
    case kind::size:
      *static_cast<size_t*>(target) = static_cast<size_t>(parse_number(e, value, 1, LLONG_MAX));
      return;
    case kind::boolean:
      *static_cast<bool*>(target) = parse_boolean(e, value);
      return;
    case kind::rdv:
      if (!strcasecmp(value, "write")) *static_cast<LCI_rdv_protocol_t*>(target) = LCI_RDV_WRITE;
      else if (!strcasecmp(value, "writeimm")) *static_cast<LCI_rdv_protocol_t*>(target) = LCI_RDV_WRITEIMM;
      else bad_value(e.name, value, rdv_words);
      return;
    case kind::try_lock_mode:
      if (!parse_try_lock_mode(lower(value).c_str(), *static_cast<uint64_t*>(target)))
        bad_value(e.name, value, try_lock_words);
      return;
    case kind::device_lock_mode:
      for (auto& w : device_lock_words)
        if (!strcasecmp(value, w.word)) { *static_cast<uint64_t*>(target) = w.mode; return; }
      bad_value(e.name, value, device_lock_words_text);
    case kind::log_level:
      for (int i = 0; i < 6; ++i)
        if (!strcasecmp(value, log_level_names[i])) { *static_cast<log_level*>(target) = static_cast<log_level>(i); return; }
      bad_value(e.name, value, log_level_words);
    case kind::text:
      *static_cast<std::string*>(target) = value;
      return;
    case kind::backend:
      if (strcasecmp(value, "ofi") && strcasecmp(value, "ibv")) bad_value(e.name, value, backend_words);
      *static_cast<std::string*>(target) = lower(value);
      return;
    case kind::peer_failure:
      if (!strcasecmp(value, "abort")) *static_cast<bool*>(target) = false;
      else if (!strcasecmp(value, "continue")) *static_cast<bool*>(target) = true;
      else bad_value(e.name, value, peer_failure_words);
      return;
    case kind::dump_signal:
      if (!parse_dump_signal(value, *static_cast<int*>(target)))
        bad_value(e.name, value, dump_signal_words);
      return;
    case kind::wait_policy:
      for (auto& w : wait_words)
        if (!strcasecmp(value, w.word)) { c.wait_policy = w.policy; c.wait_policy_given = true; return; }
      bad_value(e.name, value, wait_policy_words);
    case kind::derived:
      return;
  }
}

size_t index_of(const char* name) {
  const std::vector<entry>& t = table();
  for (size_t i = 0; i < t.size(); ++i)
    if (!strcmp(t[i].name, name)) return i;
  fatal("lci::config: no setting named %s", name);
}

// The number a limit applies to (integer and size rows).
long long number_of(const entry& e, config& c) {
  if (e.type == kind::size) return static_cast<long long>(*static_cast<size_t*>(e.field(c)));
  return *static_cast<int*>(e.field(c));
}

// The value a limit check names: the variable's text when it was set, else
// the number in force.
std::string value_text(const env_lookup& env, const char* name, long long number) {
  if (const char* v = env(name)) return v;
  return std::to_string(number);
}

// `c` starts at the defaults (the member initializers of settings.def).
// Every malformed value is reported, one message per variable, in table
// order: the value of a row that does not parse stays at its default and
// its limits are not checked again.
void read_table(const env_lookup& env, config& c, std::vector<std::string>& errors) {
  std::vector<bool> refused(table().size(), false);
  const std::vector<entry>& t = table();
  c.sources.assign(t.size(), config_source::default_value);
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].type == kind::derived) c.sources[i] = config_source::derived;
  for (size_t i = 0; i < t.size(); ++i) {
    const entry& e = t[i];
    if (e.type == kind::derived) continue;
    const char* value = env(e.name);
    if (!value) continue;
    try {
      apply(e, c, value);
    } catch (const malformed& m) {
      errors.push_back(m.message);
      refused[i] = true;
      continue;
    }
    // Every name of the member (LCI_IBV_GID_IDX, LCI_IBV_GID_INDEX) now
    // reports the environment; the last one set wins.
    for (size_t j = 0; j < t.size(); ++j)
      if (j == i || t[j].field(c) == e.field(c)) c.sources[j] = config_source::environment;
  }
  // Every row's limits, in table order, once every value has parsed.
  for (size_t i = 0; i < t.size(); ++i) {
    const entry& e = t[i];
    if (e.alias_of || refused[i] || e.range.shape == limits::form::any) continue;
    const long long v = number_of(e, c);
    if (!e.range.admits(v)) {
      try {
        bad_value(e.name, value_text(env, e.name, v).c_str(), e.range.expected().c_str());
      } catch (const malformed& m) {
        errors.push_back(m.message);
      }
    }
  }
}

// The derived rows and the rules between settings (their limits are checked).
void derive(config& c) {
  auto source = [&c](const char* name) -> config_source& { return c.sources[index_of(name)]; };
  // LCI_UCX_PROGRESS_FOCUSED implies the try-lock mode, as in LCI 1.7.9.
  if (c.ucx_progress_focused && !c.ucx_use_try_lock) {
    c.ucx_use_try_lock = true;
    source("LCI_UCX_USE_TRY_LOCK") = config_source::derived;
  }
  c.medium_size = c.packet_size - packet_header_size;
  // The queue lengths follow the pool size unless set (2 x at least 8: in
  // LCI_DEFAULT_QUEUE_LENGTH's range).
  if (source("LCI_DEFAULT_QUEUE_LENGTH") != config_source::environment) {
    c.default_queue_length = 2 * c.server_num_pkts;
    source("LCI_DEFAULT_QUEUE_LENGTH") = config_source::derived;
  }
  if (source("LCI_MAX_QUEUE_LENGTH") != config_source::environment ||
      c.max_queue_length < c.default_queue_length) {
    c.max_queue_length = c.default_queue_length;
    source("LCI_MAX_QUEUE_LENGTH") = config_source::derived;
  }
  c.max_tag = 65535;
  c.max_sync_length = INT_MAX;
  // Every message of the iovec protocol (iovec_header_size bytes of header,
  // iovec_buffer_size per long buffer) must fit in a medium packet beside at
  // least one byte of piggy-back data; see LCI_get_iovec_piggy_back_size.
  c.iovec_size = (c.medium_size - static_cast<int>(iovec_header_size) - 1) /
                 static_cast<int>(iovec_buffer_size);
  if (c.iovec_size > 256) c.iovec_size = 256;
}

const char* word_of(LCIX_wait_policy_t p) {
  for (auto& w : wait_words)
    if (w.policy == p) return w.word;
  return "?";
}

std::string format(const entry& e, const config& c) {
  config& m = const_cast<config&>(c);  // the accessors are shared with the parse
  const void* v = e.field(m);
  switch (e.type) {
    case kind::integer:
    case kind::derived: return std::to_string(*static_cast<const int*>(v));
    case kind::size: return std::to_string(*static_cast<const size_t*>(v));
    case kind::boolean: return *static_cast<const bool*>(v) ? "1" : "0";
    case kind::peer_failure: return *static_cast<const bool*>(v) ? "continue" : "abort";
    case kind::dump_signal: return dump_signal_name(*static_cast<const int*>(v));
    case kind::rdv: return *static_cast<const LCI_rdv_protocol_t*>(v) == LCI_RDV_WRITE ? "write" : "writeimm";
    case kind::try_lock_mode: {
      static const struct { const char* word; uint64_t bit; } bits[] = {
          {"send", LCI_BACKEND_TRY_LOCK_SEND}, {"recv", LCI_BACKEND_TRY_LOCK_RECV},
          {"poll", LCI_BACKEND_TRY_LOCK_POLL}, {"global", LCI_BACKEND_TRY_LOCK_GLOBAL},
          {"global_b", LCI_BACKEND_LOCK_GLOBAL}};
      const uint64_t mode = *static_cast<const uint64_t*>(v);
      std::string s;
      for (auto& b : bits)
        if (mode & b.bit) s += (s.empty() ? "" : ",") + std::string(b.word);
      return s.empty() ? "none" : s;
    }
    case kind::device_lock_mode:
      for (auto& w : device_lock_words)
        if (w.mode == *static_cast<const uint64_t*>(v)) return w.word;
      return std::to_string(*static_cast<const uint64_t*>(v));
    case kind::log_level: return log_level_names[static_cast<int>(*static_cast<const log_level*>(v))];
    case kind::text:
    case kind::backend: {
      const std::string& s = *static_cast<const std::string*>(v);
      return s.empty() ? "(unset)" : s;
    }
    case kind::wait_policy:
      // Unset: the policy in force (LCIX_set_wait_policy's, threads by default).
      return word_of(c.wait_policy_given ? c.wait_policy : wait_policy());
  }
  return "?";
}

}  // namespace

config g_config = config_defaults();

const char* to_string(config_source s) {
  switch (s) {
    case config_source::default_value: return "default";
    case config_source::environment: return "environment";
    case config_source::derived: return "derived";
  }
  return "?";
}

const char* to_string(config_category c) {
  switch (c) {
    case config_category::effective: return "effective";
    case config_category::derived: return "derived";
    case config_category::no_effect: return "no_effect";
    case config_category::bootstrap: return "bootstrap";
  }
  return "?";
}

config_source config::source_of(const std::string& name) const {
  const size_t i = index_of(name.c_str());
  return i < sources.size() ? sources[i] : config_source::default_value;
}

bool config_read(const env_lookup& env, config& out, std::vector<std::string>& errors) {
  config c;
  errors.clear();
  read_table(env, c, errors);
  if (!errors.empty()) return false;
  derive(c);
  out = std::move(c);
  return true;
}

bool config_read(const env_lookup& env, config& out, std::string& error) {
  std::vector<std::string> errors;
  if (config_read(env, out, errors)) return true;
  error.clear();
  for (const std::string& m : errors) error += (error.empty() ? "" : "\n") + m;
  return false;
}

bool config_read(const std::map<std::string, std::string>& env, config& out, std::string& error) {
  return config_read(
      [&env](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      out, error);
}

config config_defaults() {
  config c;
  std::string error;
  config_read([](const char*) -> const char* { return nullptr; }, c, error);
  return c;
}

std::vector<config_row> config_rows(const config& c) {
  const std::vector<entry>& t = table();
  std::vector<config_row> rows;
  rows.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const entry& e = t[i];
    rows.push_back({e.name, format(e, c),
                    i < c.sources.size() ? c.sources[i] : config_source::default_value,
                    e.category, e.help});
  }
  return rows;
}

std::vector<setting_description> config_table() {
  std::vector<setting_description> rows;
  for (const entry& e : table())
    rows.push_back({e.name, type_name(e.type), e.category, range_text(e), e.help, e.alias_of});
  return rows;
}

std::string config_check_default(const char* name) {
  const entry& e = table()[index_of(name)];
  if (e.type == kind::derived || e.type == kind::text) return "";  // nothing to read back
  config d;  // the defaults
  if (e.type == kind::backend && d.backend_request.empty()) return "";  // unset: automatic
  d.wait_policy_given = true;  // format the member, not the policy in force
  const std::string text = format(e, d);
  config c;
  try {
    apply(e, c, text.c_str());
    if (!e.range.admits(e.type == kind::integer || e.type == kind::size ? number_of(e, c) : 0))
      bad_value(e.name, text.c_str(), e.range.expected().c_str());
  } catch (const malformed& m) {
    return m.message;
  }
  return "";
}

void config_print(const config& c, FILE* out) {
  const std::vector<config_row> rows = config_rows(c);
  auto section = [&](const char* title, bool (*wanted)(config_category)) {
    fprintf(out, "# %s\n", title);
    for (const config_row& r : rows)
      if (wanted(r.category))
        fprintf(out, "%-36s %-12s %-11s # %s\n", r.name, r.value.c_str(), to_string(r.source),
                r.help);
  };
  section("LCI settings: name, effective value, source (default, environment, derived)",
          [](config_category k) { return k == config_category::effective || k == config_category::derived; });
  section("Read by the bootstrap when it starts (checked there)",
          [](config_category k) { return k == config_category::bootstrap; });
  section("Accepted for compatibility with LCI 1.7, no effect here (after #: why)",
          [](config_category k) { return k == config_category::no_effect; });
}

void config_print_current(FILE* out, bool initialized) {
  if (initialized) {
    config_print(g_config, out);
    return;
  }
  config c;
  std::vector<std::string> errors;
  if (!config_read([](const char* name) -> const char* { return getenv(name); }, c, errors)) {
    for (const std::string& m : errors) fprintf(out, "# LCI_initialize would stop: %s\n", m.c_str());
    return;
  }
  config_print(c, out);
}

const config& current_config() { return g_config; }

namespace {

// Edits (insertions, deletions, substitutions) that turn a into b.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> config_unknown_variables(const char* const* envp) {
  std::vector<std::string> out;
  if (!envp) return out;
  const std::vector<entry>& t = table();
  for (const char* const* p = envp; *p; ++p) {
    const char* eq = strchr(*p, '=');
    const std::string name(*p, eq ? static_cast<size_t>(eq - *p) : strlen(*p));
    if (name.compare(0, 4, "LCI_") != 0) continue;
    // CMake's package hints, not settings.
    if (name == "LCI_DIR" || name == "LCI_ROOT") continue;
    const entry* closest = nullptr;
    size_t best = SIZE_MAX;
    for (const entry& e : t) {
      const size_t d = edit_distance(name, e.name);
      if (d < best) best = d, closest = &e;
    }
    if (best == 0) continue;
    std::string m = "environment variable " + name + " is not an LCI setting and is ignored";
    if (closest && best <= 3) m += std::string(" (did you mean ") + closest->name + "?)";
    out.push_back(m + "; lci_info lists every setting");
  }
  return out;
}

net::settings backend_settings() {
  const config& c = settings();
  net::settings s;
  s.backend_request = c.backend_request;
  s.ibv_device = c.ibv_device;
  s.ibv_port = c.ibv_port;
  s.ibv_gid_index = c.ibv_gid_index;
  s.ibv_use_odp = c.ibv_use_odp != 0;
  s.ibv_on_demand = c.ibv_on_demand;
  s.ofi_cq_data_size = c.ofi_cq_data_size;
  s.ofi_rma_messages = c.ofi_rma_messages;
  s.ofi_heartbeat_grace_s = c.ofi_heartbeat_grace;
  s.native_on = c.shm;
  s.native_cma = c.shm_cma;
  s.native_ring_cells = static_cast<uint64_t>(c.shm_ring_size);
  s.native_map_all = c.shm_map_all;
  return s;
}

void config_parse() {
  // A crash stays a crash (PSM's handlers, lci/util/crash_signals.hpp).
  restore_crash_signals();
  config c;
  std::vector<std::string> errors;
  if (!config_read([](const char* name) -> const char* { return getenv(name); }, c, errors)) {
    // One line per malformed variable, then the exit (no core: nothing
    // went wrong inside the library).
    for (size_t i = 0; i + 1 < errors.size(); ++i)
      log_message(log_level::error, "LCI_initialize: %s", errors[i].c_str());
    fatal_exit(1, "LCI_initialize: %s", errors.back().c_str());
  }
  g_config = std::move(c);
  const config& s = g_config;

  log_set_level(s.log_threshold);
  if (!log_set_outfile(s.log_outfile.c_str()))
    fatal_exit(1, "LCI_initialize: environment variable LCI_LOG_OUTFILE=\"%s\": the file cannot "
               "be opened for appending (%s)", s.log_outfile.c_str(), strerror(errno));
  // Misspelt names, once per process (after the log file is in place).
  static std::atomic<bool> unknown_checked{false};
  if (!unknown_checked.exchange(true))
    for (const std::string& m : config_unknown_variables(environ))
      log_message(log_level::warn, "%s", m.c_str());
  if (s.wait_policy_given) wait_policy_set(s.wait_policy);

  // The globals of lci.h, for LCI 1.7 programs: each `mirrored` row.
#define LCI_MIRROR_mirrored(NAME, member) ::NAME = s.member;
#define LCI_MIRROR_internal(NAME, member)
#define LCI_SETTING(NAME, kind, category, member, deflt, limits, global, help) \
  LCI_MIRROR_##global(NAME, member)
#define LCI_SETTING_ALIAS(NAME, FIRST, help)
#include "lci/core/settings.def"
#undef LCI_SETTING
#undef LCI_SETTING_ALIAS
#undef LCI_MIRROR_mirrored
#undef LCI_MIRROR_internal
}

}  // namespace lci
