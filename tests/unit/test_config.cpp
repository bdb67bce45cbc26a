// Unit tests of the configuration table (lci/core/config.hpp) without a
// runtime: config_read over an environment given as a map. Good values of
// every kind, each kind of malformed value with its exact message (the text
// LCI_initialize dies with after "LCI_initialize: "), the derived values,
// where each value came from, the no-effect and bootstrap categories, and
// the printed table.
#include <doctest/doctest.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lci/core/config.hpp"
#include "lci/util/signal_name.hpp"

using lci::config;
using lci::config_category;
using lci::config_source;

namespace {

using env_map = std::map<std::string, std::string>;

config read_ok(const env_map& env) {
  config c;
  std::string error;
  const bool ok = lci::config_read(env, c, error);
  INFO("error: " << error);
  REQUIRE(ok);
  CHECK(error.empty());
  return c;
}

std::string read_error(const env_map& env) {
  config c;
  std::string error;
  CHECK_FALSE(lci::config_read(env, c, error));
  return error;
}

const lci::config_row& row(const std::vector<lci::config_row>& rows, const std::string& name) {
  for (const auto& r : rows)
    if (name == r.name) return r;
  FAIL("no row " << name);
  return rows.front();
}

std::string printed(const config& c) {
  char* buf = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buf, &size);
  REQUIRE(f != nullptr);
  lci::config_print(c, f);
  fclose(f);
  std::string s(buf, size);
  free(buf);
  return s;
}

}  // namespace

TEST_CASE("defaults") {
  const config c = read_ok({});
  CHECK(c.log_threshold == lci::log_level::warn);
  CHECK(c.packet_size == LCI_PACKET_SIZE_DEFAULT);
  CHECK(c.medium_size == LCI_PACKET_SIZE_DEFAULT - 64);
  CHECK(c.server_num_pkts == LCI_SERVER_NUM_PKTS_DEFAULT);
  CHECK(c.default_queue_length == 2 * LCI_SERVER_NUM_PKTS_DEFAULT);
  CHECK(c.max_queue_length == c.default_queue_length);
  CHECK(c.max_endpoints == 1024);
  CHECK(c.default_table_length == 65536);
  CHECK(c.max_single_message_size == static_cast<size_t>(LCI_MAX_SINGLE_MESSAGE_SIZE_DEFAULT));
  CHECK(c.reg_cache_max_entries == 4096);
  CHECK(c.ofi_cq_data_size == 0);
  CHECK(c.backend_request.empty());
  CHECK(c.ibv_gid_index == -1);
  CHECK(c.rdv_protocol == LCI_RDV_WRITEIMM);
  CHECK_FALSE(c.wait_policy_given);
  CHECK(c.max_tag == 65535);
  CHECK(c.max_sync_length == INT_MAX);
  CHECK(c.iovec_size == 256);
  CHECK(c.ibv_enable_td);
  CHECK(c.use_global_packet_pool);
  CHECK(c.pmi.empty());
  // config_defaults() is the same as an empty environment.
  const config d = lci::config_defaults();
  CHECK(d.packet_size == c.packet_size);
  CHECK(d.default_queue_length == c.default_queue_length);
  CHECK(d.sources == c.sources);
}

TEST_CASE("good values of every kind") {
  const config c = read_ok({{"LCI_LOG_LEVEL", "info"},
                            {"LCI_LOG_OUTFILE", "stdout"},
                            {"LCI_PACKET_SIZE", "8256"},
                            {"LCI_SERVER_NUM_PKTS", "512"},
                            {"LCI_MAX_QUEUE_LENGTH", "4096"},
                            {"LCI_MAX_ENDPOINTS", "16"},
                            {"LCI_MAX_SINGLE_MESSAGE_SIZE", "1002"},
                            {"LCI_IBV_ENABLE_TD", "0"},
                            {"LCI_RDV_PROTOCOL", "write"},
                            {"LCI_BACKEND_TRY_LOCK_MODE", "send,poll"},
                            {"LCI_DEVICE_LOCK_MODE", "try"},
                            {"LCI_BACKEND", "ofi"},
                            {"LCI_IBV_DEVICE", "mlx5_0"},
                            {"LCI_WAIT_POLICY", "spin"},
                            {"LCI_OFI_CQ_DATA_SIZE", "4"},
                            {"LCI_PMI", "local"}});
  CHECK(c.log_threshold == lci::log_level::info);
  CHECK(c.log_outfile == "stdout");
  CHECK(c.packet_size == 8256);
  CHECK(c.medium_size == 8192);
  CHECK(c.server_num_pkts == 512);
  CHECK(c.default_queue_length == 1024);
  CHECK(c.max_queue_length == 4096);
  CHECK(c.max_endpoints == 16);
  CHECK(c.max_single_message_size == 1002);
  CHECK_FALSE(c.ibv_enable_td);
  CHECK(c.rdv_protocol == LCI_RDV_WRITE);
  CHECK(c.backend_try_lock_mode == (LCI_BACKEND_TRY_LOCK_SEND | LCI_BACKEND_TRY_LOCK_POLL));
  CHECK(c.device_lock_mode == LCI_DEVICE_LOCK_MODE_TRY);
  CHECK(c.backend_request == "ofi");
  CHECK(c.ibv_device == "mlx5_0");
  CHECK(c.wait_policy_given);
  CHECK(c.wait_policy == LCIX_WAIT_SPIN);
  CHECK(c.ofi_cq_data_size == 4);
  CHECK(c.pmi == "local");

  const auto rows = lci::config_rows(c);
  CHECK(row(rows, "LCI_RDV_PROTOCOL").value == "write");
  CHECK(row(rows, "LCI_BACKEND_TRY_LOCK_MODE").value == "send,poll");
  CHECK(row(rows, "LCI_DEVICE_LOCK_MODE").value == "try");
  CHECK(row(rows, "LCI_LOG_LEVEL").value == "info");
  CHECK(row(rows, "LCI_WAIT_POLICY").value == "spin");
  CHECK(row(rows, "LCI_IBV_ENABLE_TD").value == "0");
  CHECK(row(rows, "LCI_MEDIUM_SIZE").value == "8192");
  CHECK(row(rows, "LCI_BACKEND").value == "ofi");
  CHECK(row(rows, "LCI_IBV_PORT").value == "0");
}

TEST_CASE("malformed values: one message per kind, exactly") {
  const std::string pre = "environment variable ";
  const std::string number = "a whole number, which may end in K, M or G)";
  CHECK(read_error({{"LCI_PACKET_SIZE", "12abc"}}) ==
        pre + "LCI_PACKET_SIZE=\"12abc\" is malformed (expected a multiple of 64 of at least "
              "4160: " + number);
  CHECK(read_error({{"LCI_SERVER_NUM_PKTS", ""}}) ==
        pre + "LCI_SERVER_NUM_PKTS=\"\" is malformed (expected at least 8: " + number);
  CHECK(read_error({{"LCI_MAX_ENDPOINTS", "99999999999"}}) ==
        pre + "LCI_MAX_ENDPOINTS=\"99999999999\" is malformed (expected 1 ... 4094: " + number);
  CHECK(read_error({{"LCI_TOUCH_LBUFFER", "x"}}) ==
        pre + "LCI_TOUCH_LBUFFER=\"x\" is malformed (expected at least 0: " + number);
  CHECK(read_error({{"LCI_MAX_SINGLE_MESSAGE_SIZE", "0"}}) ==
        pre + "LCI_MAX_SINGLE_MESSAGE_SIZE=\"0\" is malformed (expected at least 1: " + number);
  CHECK(read_error({{"LCI_IBV_ENABLE_TD", "maybe"}}) ==
        pre + "LCI_IBV_ENABLE_TD=\"maybe\" is malformed (expected 0 or 1, on or off, true or "
              "false, yes or no)");
  CHECK(read_error({{"LCI_PRINT_PROFILE", "2"}}) ==
        pre + "LCI_PRINT_PROFILE=\"2\" is malformed (expected 0 or 1, on or off, true or false, "
              "yes or no)");
  CHECK(read_error({{"LCI_RDV_PROTOCOL", "fast"}}) ==
        pre + "LCI_RDV_PROTOCOL=\"fast\" is malformed (expected write or writeimm)");
  CHECK(read_error({{"LCI_BACKEND_TRY_LOCK_MODE", "send,,poll"}}) ==
        pre + "LCI_BACKEND_TRY_LOCK_MODE=\"send,,poll\" is malformed (expected a comma list of "
              "none,send,recv,poll,global,global_b)");
  CHECK(read_error({{"LCI_DEVICE_LOCK_MODE", "spin"}}) ==
        pre + "LCI_DEVICE_LOCK_MODE=\"spin\" is malformed (expected none, block or try)");
  CHECK(read_error({{"LCI_LOG_LEVEL", "loud"}}) ==
        pre + "LCI_LOG_LEVEL=\"loud\" is malformed (expected error, warn, diag, info, debug or trace)");
  CHECK(read_error({{"LCI_WAIT_POLICY", "fast"}}) ==
        pre + "LCI_WAIT_POLICY=\"fast\" is malformed (expected threads, spin, fibers or tbb)");
  CHECK(read_error({{"LCI_BACKEND", "bogus"}}) ==
        pre + "LCI_BACKEND=\"bogus\" is malformed (expected ofi or ibv)");
}

TEST_CASE("LCI_DUMP_SIGNAL: signal names, numbers and refusals") {
  int sig = -1;
  for (const char* none : {"none", "NONE", "off", "0"}) {
    sig = -1;
    CHECK(lci::parse_dump_signal(none, sig));
    CHECK(sig == 0);
  }
  const struct {
    const char* text;
    int sig;
  } good[] = {{"USR1", SIGUSR1},       {"usr2", SIGUSR2},          {"SIGUSR2", SIGUSR2},
              {"sigusr1", SIGUSR1},    {"RTMIN+0", SIGRTMIN},      {"SIGRTMIN+3", SIGRTMIN + 3},
              {"10", SIGUSR1},         {"12", SIGUSR2}};
  for (const auto& g : good) {
    INFO(g.text);
    sig = -1;
    CHECK(lci::parse_dump_signal(g.text, sig));
    CHECK(sig == g.sig);
  }
  // Signals a library must not take, junk, and nothing.
  for (const char* bad : {"", "INT", "SIGTERM", "9", "15", "11", "-1", "USR3", "USR1x", " USR1",
                          "RTMIN+", "RTMIN+-1", "RTMIN+999", "12abc"}) {
    INFO(bad);
    sig = 42;
    CHECK_FALSE(lci::parse_dump_signal(bad, sig));
    CHECK(sig == 42);
  }
  CHECK_FALSE(lci::parse_dump_signal(nullptr, sig));
  // Printed names read back as the same signal.
  for (int s : {0, SIGUSR1, SIGUSR2, SIGRTMIN, SIGRTMAX}) {
    INFO(s);
    sig = -1;
    CHECK(lci::parse_dump_signal(lci::dump_signal_name(s).c_str(), sig));
    CHECK(sig == s);
  }
  CHECK(lci::dump_signal_name(SIGUSR2) == "USR2");
  CHECK(lci::dump_signal_name(SIGRTMIN + 2) == "RTMIN+2");
  // Through the table: the default, a value, and the message of a bad one.
  CHECK(read_ok({}).dump_signal == 0);
  CHECK(read_ok({{"LCI_DUMP_SIGNAL", "USR1"}}).dump_signal == SIGUSR1);
  CHECK(row(lci::config_rows(read_ok({{"LCI_DUMP_SIGNAL", "sigusr2"}})), "LCI_DUMP_SIGNAL").value ==
        "USR2");
  CHECK(read_error({{"LCI_DUMP_SIGNAL", "TERM"}}) ==
        "environment variable LCI_DUMP_SIGNAL=\"TERM\" is malformed (expected none, USR1, USR2, "
        "RTMIN+n or the number of one of those)");
}

TEST_CASE("malformed values: the limits checked after the parse") {
  const std::string pre = "environment variable ";
  CHECK(read_error({{"LCI_PACKET_SIZE", "4000"}}) ==
        pre + "LCI_PACKET_SIZE=\"4000\" is malformed (expected a multiple of 64 of at least 4160)");
  CHECK(read_error({{"LCI_PACKET_SIZE", "8200"}}) ==
        pre + "LCI_PACKET_SIZE=\"8200\" is malformed (expected a multiple of 64 of at least 4160)");
  CHECK(read_error({{"LCI_SERVER_NUM_PKTS", "7"}}) ==
        pre + "LCI_SERVER_NUM_PKTS=\"7\" is malformed (expected at least 8)");
  CHECK(read_error({{"LCI_MAX_ENDPOINTS", "4095"}}) ==
        pre + "LCI_MAX_ENDPOINTS=\"4095\" is malformed (expected 1 ... 4094)");
  CHECK(read_error({{"LCI_SERVER_MAX_RECVS", "0"}}) ==
        pre + "LCI_SERVER_MAX_RECVS=\"0\" is malformed (expected at least 1)");
  CHECK(read_error({{"LCI_REG_CACHE_MAX_ENTRIES", "0"}}) ==
        pre + "LCI_REG_CACHE_MAX_ENTRIES=\"0\" is malformed (expected at least 1)");
  CHECK(read_error({{"LCI_OFI_CQ_DATA_SIZE", "2"}}) ==
        pre + "LCI_OFI_CQ_DATA_SIZE=\"2\" is malformed (expected 0, 4 or 8)");
  CHECK(read_error({{"LCI_DEFAULT_TABLE_LENGTH", "0"}}) ==
        pre + "LCI_DEFAULT_TABLE_LENGTH=\"0\" is malformed (expected at least 1)");
  CHECK(read_error({{"LCI_DEFAULT_QUEUE_LENGTH", "-3"}}) ==
        pre + "LCI_DEFAULT_QUEUE_LENGTH=\"-3\" is malformed (expected at least 1)");
  // Negative values where they make no sense.
  CHECK(read_error({{"LCI_IBV_PORT", "-1"}}) ==
        pre + "LCI_IBV_PORT=\"-1\" is malformed (expected 0 ... 255)");
  CHECK(read_error({{"LCI_TOUCH_LBUFFER", "-3"}}) ==
        pre + "LCI_TOUCH_LBUFFER=\"-3\" is malformed (expected at least 0)");
  CHECK(read_error({{"LCI_MAX_QUEUE_LENGTH", "-5"}}) ==
        pre + "LCI_MAX_QUEUE_LENGTH=\"-5\" is malformed (expected at least 1)");
  CHECK(read_error({{"LCI_IBV_GID_IDX", "-2"}}) ==
        pre + "LCI_IBV_GID_IDX=\"-2\" is malformed (expected at least -1)");
  CHECK(read_ok({{"LCI_IBV_GID_IDX", "-1"}}).ibv_gid_index == -1);
  // Every malformed row is reported, in table order, one line each.
  CHECK(read_error({{"LCI_BACKEND", "bogus"}, {"LCI_LOG_LEVEL", "loud"}, {"LCI_IBV_PORT", "-1"}}) ==
        pre + "LCI_LOG_LEVEL=\"loud\" is malformed (expected error, warn, diag, info, debug or "
              "trace)\n" +
        pre + "LCI_BACKEND=\"bogus\" is malformed (expected ofi or ibv)\n" + pre +
        "LCI_IBV_PORT=\"-1\" is malformed (expected 0 ... 255)");
  std::vector<std::string> errors;
  config c;
  CHECK_FALSE(lci::config_read(
      [](const char* name) -> const char* {
        return !strcmp(name, "LCI_PACKET_SIZE") ? "abc" : !strcmp(name, "LCI_SHM") ? "2" : nullptr;
      },
      c, errors));
  CHECK(errors.size() == 2);
}

TEST_CASE("numbers with K, M, G; words and booleans in any case") {
  CHECK(read_ok({{"LCI_PACKET_SIZE", "16K"}}).packet_size == 16384);
  CHECK(read_ok({{"LCI_PACKET_SIZE", "16k"}}).packet_size == 16384);
  CHECK(read_ok({{"LCI_PACKET_SIZE", "16KiB"}}).packet_size == 16384);
  CHECK(read_ok({{"LCI_PACKET_SIZE", "16KB"}}).packet_size == 16384);
  CHECK(read_ok({{"LCI_SERVER_NUM_PKTS", "1M"}}).server_num_pkts == 1 << 20);
  CHECK(read_ok({{"LCI_MAX_SINGLE_MESSAGE_SIZE", "4G"}}).max_single_message_size ==
        size_t{4} << 30);
  for (const char* bad : {"16Q", "16KK", "K", "16 K", "16Ki", "2G"}) {
    INFO(bad);
    // 2G does not fit LCI_PACKET_SIZE's int.
    CHECK(read_error({{"LCI_PACKET_SIZE", bad}}).find("is malformed") != std::string::npos);
  }
  CHECK(read_error({{"LCI_MAX_SINGLE_MESSAGE_SIZE", "9999999999G"}}).find("is malformed") !=
        std::string::npos);
  CHECK(read_ok({{"LCI_LOG_LEVEL", "INFO"}}).log_threshold == lci::log_level::info);
  CHECK(read_ok({{"LCI_RDV_PROTOCOL", "Write"}}).rdv_protocol == LCI_RDV_WRITE);
  CHECK(read_ok({{"LCI_WAIT_POLICY", "SPIN"}}).wait_policy == LCIX_WAIT_SPIN);
  CHECK(read_ok({{"LCI_BACKEND", "OFI"}}).backend_request == "ofi");
  CHECK(read_ok({{"LCI_PEER_FAILURE", "Continue"}}).peer_failure_continue);
  CHECK(read_ok({{"LCI_DEVICE_LOCK_MODE", "TRY"}}).device_lock_mode == LCI_DEVICE_LOCK_MODE_TRY);
  CHECK(read_ok({{"LCI_BACKEND_TRY_LOCK_MODE", "SEND,poll"}}).backend_try_lock_mode ==
        (LCI_BACKEND_TRY_LOCK_SEND | LCI_BACKEND_TRY_LOCK_POLL));
  for (const char* yes : {"1", "on", "ON", "true", "Yes"}) CHECK(read_ok({{"LCI_SHM", yes}}).shm);
  for (const char* no : {"0", "off", "False", "NO"}) CHECK_FALSE(read_ok({{"LCI_SHM", no}}).shm);
}

TEST_CASE("unknown LCI_* variables: one warning each, with the closest name") {
  const char* env[] = {"LCI_PACKT_SIZE=8192", "LCI_PACKET_SIZE=8256", "PATH=/bin",
                       "LCI_DIR=/opt/lci",    "LCI_ROOT=/opt/lci",    "LCI_WHATEVER_ELSE=1",
                       "LCIT_HOOK=1",         "LCI_LOG_LEVEL=info",   nullptr};
  const std::vector<std::string> w = lci::config_unknown_variables(env);
  REQUIRE(w.size() == 2);
  CHECK(w[0] ==
        "environment variable LCI_PACKT_SIZE is not an LCI setting and is ignored (did you mean "
        "LCI_PACKET_SIZE?); lci_info lists every setting");
  CHECK(w[1] ==
        "environment variable LCI_WHATEVER_ELSE is not an LCI setting and is ignored; lci_info "
        "lists every setting");
  CHECK(lci::config_unknown_variables(nullptr).empty());
}

TEST_CASE("derived values and their sources") {
  const config d = read_ok({});
  CHECK(d.source_of("LCI_PACKET_SIZE") == config_source::default_value);
  CHECK(d.source_of("LCI_MEDIUM_SIZE") == config_source::derived);
  CHECK(d.source_of("LCI_IOVEC_SIZE") == config_source::derived);
  CHECK(d.source_of("LCI_DEFAULT_QUEUE_LENGTH") == config_source::derived);
  CHECK(d.source_of("LCI_MAX_QUEUE_LENGTH") == config_source::derived);
  CHECK(d.source_of("LCI_PMI") == config_source::default_value);

  // The queue lengths follow the pool size unless set.
  const config p = read_ok({{"LCI_SERVER_NUM_PKTS", "100"}, {"LCI_PACKET_SIZE", "4160"}});
  CHECK(p.default_queue_length == 200);
  CHECK(p.max_queue_length == 200);
  CHECK(p.medium_size == 4096);
  CHECK(p.iovec_size == (4096 - 48 - 1) / 24);
  CHECK(p.source_of("LCI_PACKET_SIZE") == config_source::environment);
  CHECK(p.source_of("LCI_SERVER_NUM_PKTS") == config_source::environment);
  CHECK(p.source_of("LCI_DEFAULT_QUEUE_LENGTH") == config_source::derived);

  // A maximum below the default length is raised to it.
  const config q = read_ok({{"LCI_DEFAULT_QUEUE_LENGTH", "50"}, {"LCI_MAX_QUEUE_LENGTH", "10"}});
  CHECK(q.default_queue_length == 50);
  CHECK(q.max_queue_length == 50);
  CHECK(q.source_of("LCI_DEFAULT_QUEUE_LENGTH") == config_source::environment);
  CHECK(q.source_of("LCI_MAX_QUEUE_LENGTH") == config_source::derived);
  const config r = read_ok({{"LCI_DEFAULT_QUEUE_LENGTH", "50"}, {"LCI_MAX_QUEUE_LENGTH", "60"}});
  CHECK(r.max_queue_length == 60);
  CHECK(r.source_of("LCI_MAX_QUEUE_LENGTH") == config_source::environment);

  // LCI_UCX_PROGRESS_FOCUSED implies LCI_UCX_USE_TRY_LOCK.
  const config u = read_ok({{"LCI_UCX_PROGRESS_FOCUSED", "1"}});
  CHECK(u.ucx_use_try_lock);
  CHECK(u.source_of("LCI_UCX_USE_TRY_LOCK") == config_source::derived);

  // Two names of the GID index: either sets it, both report the environment,
  // the second wins when both are set.
  const config g1 = read_ok({{"LCI_IBV_GID_IDX", "3"}});
  CHECK(g1.ibv_gid_index == 3);
  CHECK(g1.source_of("LCI_IBV_GID_INDEX") == config_source::environment);
  const config g2 = read_ok({{"LCI_IBV_GID_INDEX", "5"}});
  CHECK(g2.ibv_gid_index == 5);
  CHECK(g2.source_of("LCI_IBV_GID_IDX") == config_source::environment);
  CHECK(read_ok({{"LCI_IBV_GID_IDX", "3"}, {"LCI_IBV_GID_INDEX", "5"}}).ibv_gid_index == 5);

  // A variable set to its default value still reports the environment.
  CHECK(read_ok({{"LCI_MAX_ENDPOINTS", "1024"}}).source_of("LCI_MAX_ENDPOINTS") ==
        config_source::environment);
}

TEST_CASE("categories: no-effect and bootstrap rows") {
  const auto rows = lci::config_rows(read_ok({}));
  std::set<std::string> no_effect, bootstrap, names;
  for (const auto& r : rows) {
    CHECK_MESSAGE(names.insert(r.name).second, "twice: " << r.name);
    CHECK(std::string(r.help).size() > 0);
    if (r.category == config_category::no_effect) no_effect.insert(r.name);
    if (r.category == config_category::bootstrap) bootstrap.insert(r.name);
  }
  std::set<std::string> expected_no_effect = {
      "LCI_MAX_TABLE_LENGTH", "LCI_SERVER_MAX_SENDS", "LCI_SERVER_MAX_CQES",
      "LCI_PACKET_RETURN_THRESHOLD", "LCI_IBV_USE_PREFETCH", "LCI_IBV_ON_DEMAND",
      "LCI_IBV_FORCE_GID_AUTO_SELECT", "LCI_IBV_ENABLE_TD", "LCI_IBV_ENABLE_EVENT_POLLING_THREAD",
      "LCI_ENABLE_PRG_NET_ENDPOINT", "LCI_SEND_SLOW_DOWN_USEC", "LCI_RECV_SLOW_DOWN_USEC",
      "LCI_BACKEND_TRY_LOCK_MODE", "LCI_DEVICE_LOCK_MODE", "LCI_UCX_USE_TRY_LOCK",
      "LCI_UCX_PROGRESS_FOCUSED", "LCI_USE_GLOBAL_PACKET_POOL",
      // LCI 2's names of two of them (lci.hpp's net_max_sends, net_max_cqes)
      "LCI_ATTR_NET_MAX_SENDS", "LCI_ATTR_NET_MAX_CQES"};
#ifndef LCI_PROFILE
  expected_no_effect.insert("LCI_PRINT_PROFILE");
#endif
  CHECK(no_effect == expected_no_effect);
  CHECK(bootstrap == std::set<std::string>{"LCI_PMI", "LCI_LCRUN", "LCT_PMI_BACKEND"});
  CHECK(row(rows, "LCI_MEDIUM_SIZE").category == config_category::derived);
  CHECK(row(rows, "LCI_PACKET_SIZE").category == config_category::effective);

  // A no-effect setting is still checked, and its value recorded.
  CHECK(read_error({{"LCI_SERVER_MAX_SENDS", "many"}}).find("LCI_SERVER_MAX_SENDS") !=
        std::string::npos);
  const config c = read_ok({{"LCI_SERVER_MAX_SENDS", "7"}, {"LCI_LCRUN", "1"}});
  CHECK(c.server_max_sends == 7);
  CHECK(c.source_of("LCI_SERVER_MAX_SENDS") == config_source::environment);
  CHECK(c.lcrun == "1");
}

TEST_CASE("printed table: every row with value and source, sections apart") {
  const config c = read_ok({{"LCI_PACKET_SIZE", "8256"}, {"LCI_SERVER_MAX_SENDS", "7"}});
  const std::string text = printed(c);
  const size_t effective_at = text.find("# LCI settings");
  const size_t bootstrap_at = text.find("# Read by the bootstrap");
  const size_t no_effect_at = text.find("# Accepted for compatibility");
  REQUIRE(effective_at != std::string::npos);
  REQUIRE(bootstrap_at != std::string::npos);
  REQUIRE(no_effect_at != std::string::npos);
  CHECK(effective_at < bootstrap_at);
  CHECK(bootstrap_at < no_effect_at);
  for (const auto& r : lci::config_rows(c)) {
    const size_t at = text.find(std::string(r.name) + " ");
    INFO(r.name);
    REQUIRE(at != std::string::npos);
    const std::string line = text.substr(at, text.find('\n', at) - at);
    CHECK(line.find(" " + r.value + " ") != std::string::npos);
    CHECK(line.find(lci::to_string(r.source)) != std::string::npos);
    CHECK(line.find(std::string("# ") + r.help) != std::string::npos);
    if (r.category == config_category::no_effect) CHECK(at > no_effect_at);
    else if (r.category == config_category::bootstrap) CHECK((at > bootstrap_at && at < no_effect_at));
    else CHECK(at < bootstrap_at);
  }
  CHECK(text.find("LCI_PACKET_SIZE                      8256         environment") !=
        std::string::npos);
  CHECK(text.find("LCI_MEDIUM_SIZE                      8192         derived") !=
        std::string::npos);
}

TEST_CASE("LCIX_config_print before LCI_initialize: a parse of the environment, nothing applied") {
  auto capture = [] {
    char* buf = nullptr;
    size_t size = 0;
    FILE* f = open_memstream(&buf, &size);
    REQUIRE(f != nullptr);
    LCIX_config_print(f);
    fclose(f);
    std::string s(buf, size);
    free(buf);
    return s;
  };
  setenv("LCI_PACKET_SIZE", "8256", 1);
  setenv("LCI_LOG_LEVEL", "trace", 1);
  std::string text = capture();
  CHECK(text.find("LCI_PACKET_SIZE                      8256         environment") !=
        std::string::npos);
  CHECK(text.find("LCI_MEDIUM_SIZE                      8192         derived") !=
        std::string::npos);
  CHECK(text.find("LCI_LOG_LEVEL                        trace        environment") !=
        std::string::npos);
  // Nothing was applied: the stored settings and the log level are untouched.
  CHECK(lci::current_config().packet_size == LCI_PACKET_SIZE_DEFAULT);
  CHECK(lci::current_config().sources == lci::config_defaults().sources);
  CHECK(LCI_PACKET_SIZE == LCI_PACKET_SIZE_DEFAULT);

  setenv("LCI_PACKET_SIZE", "12abc", 1);
  text = capture();
  CHECK(text ==
        "# LCI_initialize would stop: environment variable LCI_PACKET_SIZE=\"12abc\" is malformed "
        "(expected a multiple of 64 of at least 4160: a whole number, which may end in K, M or G)\n");
  unsetenv("LCI_PACKET_SIZE");
  unsetenv("LCI_LOG_LEVEL");
}

TEST_CASE("the table: every row has help, a unique name and a default within its own range") {
  const std::vector<lci::setting_description> table = lci::config_table();
  REQUIRE(table.size() == lci::config_rows(lci::config_defaults()).size());
  std::set<std::string> names;
  for (const lci::setting_description& r : table) {
    INFO(r.name);
    CHECK_MESSAGE(names.insert(r.name).second, "twice: " << r.name);
    REQUIRE(r.help != nullptr);
    CHECK(std::string(r.help).size() > 0);
    CHECK(std::string(r.type).size() > 0);
    CHECK((r.category == config_category::derived) == r.range.empty());
    CHECK(lci::config_check_default(r.name) == "");
    if (r.alias_of != nullptr) CHECK(names.count(r.alias_of) == 1);  // its first row comes first
  }
  // The limits the table gives are the ones the parse enforces.
  const auto range_of = [&table](const std::string& name) {
    for (const auto& r : table)
      if (name == r.name) return r.range;
    return std::string("?");
  };
  CHECK(range_of("LCI_SHM_RING_SIZE") == "a power of two, 16 ... 65536");
  CHECK(range_of("LCI_PACKET_SIZE") == "a multiple of 64 of at least 4160");
  CHECK(range_of("LCI_MAX_ENDPOINTS") == "1 ... 4094");
  CHECK(range_of("LCI_OFI_CQ_DATA_SIZE") == "0, 4 or 8");
  CHECK(range_of("LCI_RDV_PROTOCOL") == "write or writeimm");
  CHECK(read_error({{"LCI_SHM_RING_SIZE", "100"}}) ==
        "environment variable LCI_SHM_RING_SIZE=\"100\" is malformed (expected a power of two, "
        "16 ... 65536)");
  CHECK(read_error({{"LCI_SHM_RING_SIZE", "131072"}}).find("a power of two") != std::string::npos);
  CHECK(read_ok({{"LCI_SHM_RING_SIZE", "16"}}).shm_ring_size == 16);
}
