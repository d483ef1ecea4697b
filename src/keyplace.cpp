// keyplace::compiled — the snapshot layer compiled once (config.hpp, KEYPLACE_COMPILED): building
// snapshots and their successors, the JSON reader and writer, shadow compares, transfer plans,
// ramps, rollbacks, what-ifs and the snapshot's metrics.
// The headers define these functions here, and only declare them to the programs that link this.
#define KEYPLACE_COMPILED_SOURCE
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/metrics.hpp>
#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/rollback.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/fleet/what_if.hpp>

#ifndef KEYPLACE_COMPILED
#error "src/keyplace.cpp is keyplace::compiled's source: build it with KEYPLACE_COMPILED defined"
#endif

KEYPLACE_NAMESPACE_BEGIN

auto detail::snapshot_movement(const snapshot& before, const snapshot& after) -> movement_report {
    return snapshot_movement_of(before, after);
}

KEYPLACE_NAMESPACE_END
