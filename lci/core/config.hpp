// Run-time configuration: every setting declared once, in one row of
// settings.def (name, kind, category, default, limits, lci.h global, help),
// from which this file's struct and config.cpp's table, parse, lci.h
// globals and printing are all generated.
//
// config_read() turns an environment (a lookup function, so that tests can
// pass a map) into one lci::config that holds every effective value and
// where it came from (default, environment, or derived from other values).
// It has no side effects; each malformed value is returned as the one-line
// message "environment variable X=\"...\" is malformed (expected ...)".
//
// config_parse() runs it once on the process environment inside
// LCI_initialize, makes a malformed value fatal (prefixed with
// "LCI_initialize: "), applies what acts at once (log level and file, wait
// policy), stores the result, which settings() returns and which stays
// constant until the next LCI_initialize, and mirrors it into the LCI_*
// globals of lci.h that LCI 1.7 programs read. After that nothing reads an
// LCI_* setting of the core again. The
// bootstrap's own variables (LCI_PMI, LCI_LCRUN, LCT_PMI_BACKEND) are read
// and checked by the bootstrap, a lower layer; the table lists them
// (category bootstrap) so that they are printed and documented in one place.
//
// Categories: `effective` settings change what LCI does; `derived` rows are
// computed from others and never read from the environment; `no_effect`
// settings are accepted (and checked) for compatibility with LCI 1.7 and
// change nothing in this implementation, the help says why; `bootstrap`
// settings belong to the bootstrap.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lci.h"
#include "lci/backend/net_types.hpp"
#include "lci/core/protocol.hpp"
#include "lci/util/log.hpp"

// Internal C++ entry points that tools and unit tests (separate
// executables) call into liblci, which is built with hidden visibility.
#ifndef LCI_INTERNAL_EXPORT
#define LCI_INTERNAL_EXPORT __attribute__((visibility("default")))
#endif

namespace lci {

// Sizes derived from the configuration (the wire's sizes, packet_header_size
// and max_endpoint_index, are protocol.hpp's).
inline constexpr int barrier_endpoint_index = 4095;  // LCI's private endpoint

enum class config_source : uint8_t { default_value, environment, derived };
enum class config_category : uint8_t { effective, derived, no_effect, bootstrap };

// "default", "environment", "derived"; "effective", "derived", "no_effect",
// "bootstrap".
LCI_INTERNAL_EXPORT const char* to_string(config_source s);
LCI_INTERNAL_EXPORT const char* to_string(config_category c);

// How a setting's text is parsed and printed (the `kind` column of
// settings.def); it also gives the member's C++ type (setting_type).
// `derived` rows are never read; `text` rows are taken as set (the
// bootstrap's are checked by the bootstrap).
enum class setting_kind : uint8_t {
  integer, size, boolean, rdv, try_lock_mode, device_lock_mode, log_level, text, wait_policy,
  backend, peer_failure, dump_signal, derived
};

template <setting_kind K> struct setting_type_of { using type = int; };
template <> struct setting_type_of<setting_kind::size> { using type = size_t; };
template <> struct setting_type_of<setting_kind::boolean> { using type = bool; };
// LCI_PEER_FAILURE: true for "continue", false for "abort".
template <> struct setting_type_of<setting_kind::peer_failure> { using type = bool; };
// LCI_DUMP_SIGNAL: the signal number, 0 for none (lci/util/signal_name.hpp).
template <> struct setting_type_of<setting_kind::dump_signal> { using type = int; };
template <> struct setting_type_of<setting_kind::rdv> { using type = LCI_rdv_protocol_t; };
template <> struct setting_type_of<setting_kind::try_lock_mode> { using type = uint64_t; };
template <> struct setting_type_of<setting_kind::device_lock_mode> { using type = uint64_t; };
template <> struct setting_type_of<setting_kind::log_level> { using type = log_level; };
template <> struct setting_type_of<setting_kind::text> { using type = std::string; };
template <> struct setting_type_of<setting_kind::backend> { using type = std::string; };
template <> struct setting_type_of<setting_kind::wait_policy> { using type = LCIX_wait_policy_t; };
template <setting_kind K> using setting_type = typename setting_type_of<K>::type;

// Every effective value, one member per row of settings.def, named there
// (LCI_PACKET_SIZE -> packet_size) and initialized to the row's default.
// config_read fills the derived members and `sources`; use
// config_defaults() for a complete configuration of an empty environment.
struct config {
#define LCI_SETTING(NAME, kind, category, member, deflt, limits, global, help) \
  setting_type<setting_kind::kind> member = deflt;
#define LCI_SETTING_ALIAS(NAME, FIRST, help)
#include "lci/core/settings.def"
#undef LCI_SETTING
#undef LCI_SETTING_ALIAS

  // LCI_WAIT_POLICY was set (else LCIX_set_wait_policy's choice stays).
  bool wait_policy_given = false;

  // Where each row of the table got its value, in table order.
  std::vector<config_source> sources;

  // The source of the row named `name` (fatal for a name not in the table).
  LCI_INTERNAL_EXPORT config_source source_of(const std::string& name) const;
};

// One row of the table, formatted: what LCIX_config_print prints.
struct config_row {
  const char* name;
  std::string value;  // effective value as the variable would spell it
  config_source source;
  config_category category;
  const char* help;   // for no_effect rows: why it changes nothing
};

// One row of the table as documentation (docs/configuration.md, the unit
// tests): what kind of value it takes and which values are accepted.
struct setting_description {
  const char* name;
  const char* type;      // "integer", "size", "boolean", "word", "word list", "text"
  config_category category;
  std::string range;     // what a value must be ("" for derived rows)
  const char* help;
  const char* alias_of;  // the row whose value it sets too, or nullptr
};

// Looks up a variable; nullptr when it is unset ("" when set but empty).
using env_lookup = std::function<const char*(const char* name)>;

// The pure parse (see the top of this file). True and `out` filled, or false
// and `error` set ("environment variable X=\"v\" is malformed (expected ...)").
LCI_INTERNAL_EXPORT bool config_read(const env_lookup& env, config& out, std::string& error);
// The same, with every malformed value's message (one per variable, in
// table order; the string form joins them with newlines).
LCI_INTERNAL_EXPORT bool config_read(const env_lookup& env, config& out,
                                     std::vector<std::string>& errors);
LCI_INTERNAL_EXPORT bool config_read(const std::map<std::string, std::string>& env, config& out,
                                     std::string& error);
// Every setting at its default (an empty environment).
LCI_INTERNAL_EXPORT config config_defaults();
// The rows of the table for `c`, in table order.
LCI_INTERNAL_EXPORT std::vector<config_row> config_rows(const config& c);
// Every row of the table, in table order.
LCI_INTERNAL_EXPORT std::vector<setting_description> config_table();
// Whether the default of the row `name`, spelled as its variable would be,
// is read back as a value within the row's own range: "" when it is, else
// the message a variable set to it would get.
LCI_INTERNAL_EXPORT std::string config_check_default(const char* name);
// Prints every row: "NAME  value  source  # help", no-effect and bootstrap
// rows in sections of their own.
LCI_INTERNAL_EXPORT void config_print(const config& c, FILE* out);
// What LCIX_config_print prints: settings() once LCI_initialize has parsed
// the environment, else a side-effect-free parse of the environment now (a
// malformed value is printed as the line LCI_initialize would die with).
LCI_INTERNAL_EXPORT void config_print_current(FILE* out, bool initialized);

// The stored configuration, parsed by the last LCI_initialize (defaults
// before). Constant while LCI is initialized. settings() is for the library
// itself (inline, no call); current_config() the same for tools and tests.
extern config g_config;
inline const config& settings() { return g_config; }
LCI_INTERNAL_EXPORT const config& current_config();

// One warning per LCI_* variable of `envp` (a NULL-terminated environ
// array) that names no setting, with the closest name when one is near:
// "environment variable LCI_PACKT_SIZE is not an LCI setting and is ignored
// (did you mean LCI_PACKET_SIZE?); ...". LCI_DIR and LCI_ROOT (CMake's
// package hints) are not settings and not reported.
LCI_INTERNAL_EXPORT std::vector<std::string> config_unknown_variables(const char* const* envp);
// The backends' part of the configuration (they read nothing else).
net::settings backend_settings();

// Parses the process environment into settings() and the lci.h globals
// and applies log level, log file and wait policy. A malformed value (each
// one is printed) or a log file that cannot be opened ends the process
// with status 1; unknown LCI_* variables are warned about, once.
void config_parse();

}  // namespace lci
