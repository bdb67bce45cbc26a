// The one owner of the peers' states (lci/core/peer_failure.hpp): which
// evidence makes a peer suspected, alive again or dead, and what the
// checks of the entry points and the send path then say.
#include <doctest/doctest.h>

#include "lci/core/peer_failure.hpp"

using lci::net::evidence;
using lci::peer_state;

TEST_CASE("peer states: a broken connection is suspicion, an authentic message ends it") {
  lci::peer_failure_initialize(4, true);
  CHECK(lci::peer_state_of(1) == peer_state::alive);
  CHECK_FALSE(lci::peer_suspected(1));
  const uint32_t epoch = lci::g_peer_failure_epoch.load();
  lci::report_evidence(1, evidence::connection_broke, "test");
  CHECK(lci::peer_state_of(1) == peer_state::suspected);
  CHECK(lci::peer_suspected(1));
  CHECK_FALSE(lci::peer_refused(1));
  CHECK_FALSE(lci::peer_failed(1));
  // Still silent, but within the grace period: still only suspected.
  lci::report_evidence(1, evidence::still_silent, "test");
  CHECK(lci::peer_state_of(1) == peer_state::suspected);
  lci::report_evidence(1, evidence::authentic_message, "test");
  CHECK(lci::peer_state_of(1) == peer_state::alive);
  CHECK_FALSE(lci::peer_suspected(1));
  // The end of a suspicion bumps the epoch (held sends go out again).
  CHECK(lci::g_peer_failure_epoch.load() != epoch);
  CHECK_FALSE(lci::g_any_peer_failed.load());
  // Other ranks were not touched; silence of an alive peer means nothing.
  lci::report_evidence(2, evidence::still_silent, "test");
  lci::report_evidence(2, evidence::authentic_message, "test");
  CHECK(lci::peer_state_of(2) == peer_state::alive);
}

TEST_CASE("peer states: the proofs of death, alive or suspected, and nothing revives the dead") {
  for (evidence e : {evidence::pid_gone, evidence::listener_refuses, evidence::declared}) {
    for (bool suspected_first : {false, true}) {
      lci::peer_failure_initialize(3, true);
      if (suspected_first) lci::report_evidence(2, evidence::connection_broke, "test");
      const uint32_t epoch = lci::g_peer_failure_epoch.load();
      lci::report_evidence(2, e, "test");
      CHECK(lci::peer_state_of(2) == peer_state::dead);
      CHECK(lci::peer_refused(2));
      CHECK_FALSE(lci::peer_suspected(2));
      CHECK(lci::g_peer_failure_epoch.load() == epoch + 1);
      lci::report_evidence(2, evidence::authentic_message, "test");
      lci::report_evidence(2, evidence::connection_broke, "test");
      lci::report_evidence(2, e, "test");  // once only
      CHECK(lci::peer_state_of(2) == peer_state::dead);
      CHECK(lci::g_peer_failure_epoch.load() == epoch + 1);
      CHECK_FALSE(lci::peer_refused(0));
      CHECK_FALSE(lci::peer_refused(1));
    }
  }
  // Ranks outside the job are never refused or suspected.
  CHECK_FALSE(lci::peer_refused(-1));
  CHECK_FALSE(lci::peer_refused(3));
  lci::report_evidence(7, evidence::declared, "test");
  CHECK(lci::peer_state_of(7) == peer_state::alive);
}
