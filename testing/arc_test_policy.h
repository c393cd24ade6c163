// The replacement policy the ARC's own suites (and the doctor's engine
// findings) run under, from the environment: ARCSTORE_TEST_ARC_POLICY = arc (or unset), duet (the duel
// names the leader) or duet-lirs (Duet with LIRS naming every victim).
// src/arc/CMakeLists.txt registers those suites once per value.
#pragma once

#include <cstdlib>
#include <string_view>

#include "arc/arc_options.h"
#include "arcstore/pool.h"
#include "base/check.h"

namespace arcstore::testing {

inline void ApplyTestArcPolicy(arc::ArcOptions* o) {
  const char* env = std::getenv("ARCSTORE_TEST_ARC_POLICY");
  const std::string_view v = env == nullptr ? "arc" : env;
  if (v == "arc") {
    o->policy = arc::PolicyKind::kArc;
  } else if (v == "duet" || v == "duet-lirs") {
    o->policy = arc::PolicyKind::kDuet;
    o->duet.fixed_leader = v == "duet-lirs";
    o->duet.leader = arc::DuetLeader::kLirs;
  } else {
    ARC_CHECK(false) << "ARCSTORE_TEST_ARC_POLICY: '" << v << "' is not arc, duet or duet-lirs";
  }
}

// The same for a pool: "duet" under duet and duet-lirs (a pool cannot fix
// the leader).
inline void ApplyTestArcPolicy(PoolOptions* o) {
  arc::ArcOptions ao;
  ApplyTestArcPolicy(&ao);
  o->arc_policy = std::string(arc::PolicyKindName(ao.policy));
}

// True under duet-lirs: a test of which buffers ARC's REPLACE keeps does
// not apply.
inline bool TestLirsNamesVictims() {
  arc::ArcOptions o;
  ApplyTestArcPolicy(&o);
  return o.policy == arc::PolicyKind::kDuet && o.duet.fixed_leader;
}

}  // namespace arcstore::testing
