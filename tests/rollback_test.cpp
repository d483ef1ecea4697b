// Tests of fleet/rollback.hpp: rollbacks from a ramp step, a joining and a leaving transition and
// a completed join, with one copy and with two, whose write-set rule is checked key by key over
// 10^5 keys against a model built from the snapshots' own write sets; counted rules for
// rendezvous; a ramped rollback; bad input.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/rollback.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

using keyplace::node_state;
using keyplace::plan_rollback;
using keyplace::snapshot;
using keyplace::snapshot_description;

namespace rollback_test {

auto description(const std::string& strategy, std::uint64_t epoch, const std::vector<std::string>& ids,
                 std::size_t copies = 0) -> snapshot_description {
    snapshot_description d;
    d.cluster = "back";
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy.name = strategy;
    d.replication.count = copies;
    for (const auto& id : ids) {
        d.nodes.push_back({id, "", 1.0});
    }
    return d;
}

auto ids_of(const snapshot& s, const keyplace::placement& p, const std::string& key) -> std::vector<std::string> {
    std::vector<std::uint32_t> idx(p.width());
    idx.resize(p.copies_of(key, idx));
    std::vector<std::string> out;
    for (const auto i : idx) {
        out.push_back(s.nodes()[i].id);
    }
    std::sort(out.begin(), out.end());
    return out;
}

auto minus(const std::vector<std::string>& a, const std::vector<std::string>& b) -> std::vector<std::string> {
    std::vector<std::string> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

struct expected_rule {
    std::vector<std::string> invalidate;
    std::vector<std::string> relinquish;
};

// The model: the key's write set in `now` (write_set: current() and pending() copies) against its
// copies under back_to.
auto model(const snapshot& now, const snapshot& back, const std::string& key) -> expected_rule {
    std::vector<std::string> written;
    for (const auto* n : now.write_set(key)) {
        written.push_back(n->id);
    }
    std::sort(written.begin(), written.end());
    written.erase(std::unique(written.begin(), written.end()), written.end());
    const auto after = ids_of(back, back.current(), key);
    return {minus(after, written), minus(written, after)};
}

// Every key's rule, found by its point among the plan's ranges, equals the model's; the totals
// equal the key counts within 4 standard deviations.
void check_ranges(const snapshot& now, const snapshot& back, const keyplace::rollback_plan& plan) {
    REQUIRE(plan.exact);
    for (std::size_t i = 1; i < plan.ranges.size(); ++i) {
        CHECK(plan.ranges[i - 1].last < plan.ranges[i].first);
    }
    constexpr std::size_t n = 100000;
    std::map<std::string, std::pair<double, double>> counted;
    std::size_t ruled = 0;
    std::size_t mismatches = 0;  // counted, not CHECKed one by one
    std::string first_mismatch;
    for (std::size_t k = 0; k < n; ++k) {
        const std::string key = "rollback:" + std::to_string(k);
        const auto want = model(now, back, key);
        const std::uint64_t p = back.current().point_of(key);
        const auto it = std::upper_bound(plan.ranges.begin(), plan.ranges.end(), p,
                                         [](std::uint64_t v, const keyplace::rollback_range& r) { return v < r.first; });
        const keyplace::rollback_range* r = it == plan.ranges.begin() ? nullptr : &*std::prev(it);
        if (r != nullptr && p > r->last) {
            r = nullptr;
        }
        const expected_rule got = r ? expected_rule{r->invalidate, r->relinquish} : expected_rule{};
        if (got.invalidate != want.invalidate || got.relinquish != want.relinquish) {
            if (mismatches++ == 0) {
                first_mismatch = key;
            }
        }
        ruled += want.invalidate.empty() && want.relinquish.empty() ? 0 : 1;
        for (const auto& id : want.invalidate) {
            counted[id].first += 1.0 / n;
        }
        for (const auto& id : want.relinquish) {
            counted[id].second += 1.0 / n;
        }
    }
    INFO("first key whose rule differs: " << first_mismatch);
    CHECK(mismatches == 0);
    CHECK(ruled > 1000);  // the rules applied to many keys
    for (const auto& t : plan.totals) {
        const auto [inv, rel] = counted[t.node];
        CHECK(std::fabs(t.invalidate - inv) < 4 * std::sqrt(inv / n) + 1e-9);
        CHECK(std::fabs(t.relinquish - rel) < 4 * std::sqrt(rel / n) + 1e-9);
    }
}

}  // namespace rollback_test

using namespace rollback_test;

TEST_CASE("rollback: from step 3 of a 5-step ramped ring join, the old owners invalidate what the joiner took and "
          "the joiner relinquishes it",
          "[rollback]") {
    const snapshot s1 = snapshot::build(description("ring", 1, {"a", "b", "c"}));
    const snapshot s2 = snapshot::build(description("ring", 2, {"a", "b", "c", "d"}));
    const auto ramp = keyplace::plan_ramp(s1, s2, {.steps = 5});
    const snapshot step3 = snapshot::build(ramp.epochs[2]);
    const auto plan = plan_rollback(step3, s1);
    REQUIRE(plan.epochs.size() == 1);
    CHECK(plan.epochs[0].epoch == step3.epoch() + 1);
    CHECK(snapshot::build(plan.epochs[0]).fingerprint() == s1.fingerprint());
    const double taken = ramp.moved[0] + ramp.moved[1] + ramp.moved[2];
    CHECK(std::fabs(plan.moved[0] - taken) < 1e-12);
    check_ranges(step3, s1, plan);
    double invalidated = 0;
    for (const auto& t : plan.totals) {
        if (t.node == "d") {
            CHECK(std::fabs(t.relinquish - taken) < 1e-12);
            CHECK(t.invalidate == 0);
        } else {
            invalidated += t.invalidate;
            CHECK(t.relinquish == 0);
        }
    }
    CHECK(std::fabs(invalidated - taken) < 1e-12);

    // Ramped back in 3 epochs: keys only leave d, and the last epoch places as s1.
    const auto back = plan_rollback(step3, s1, {.steps = 3});
    REQUIRE(back.epochs.size() == 3);
    CHECK(snapshot::build(back.epochs.back()).fingerprint() == s1.fingerprint());
    double sum = 0;
    for (const double m : back.moved) {
        sum += m;
    }
    CHECK(std::fabs(sum - taken) < 1e-12);
}

TEST_CASE("rollback: of a joining and of a leaving transition nothing needs invalidating, and the nodes that "
          "received the prepared writes relinquish them",
          "[rollback]") {
    const snapshot s1 = snapshot::build(description("ring", 1, {"a", "b", "c"}));
    auto joining = description("ring", 2, {"a", "b", "c", "d"});
    joining.nodes[3].state = node_state::joining;
    const snapshot s2 = snapshot::build(joining);
    const auto plan = plan_rollback(s2, s1);
    CHECK(plan.moved[0] == 0);  // the joining node owned nothing yet
    check_ranges(s2, s1, plan);
    REQUIRE(plan.totals.size() == 1);
    CHECK(plan.totals[0].node == "d");
    CHECK(plan.totals[0].invalidate == 0);
    CHECK(std::fabs(plan.totals[0].relinquish - keyplace::transition_movement(s2).moved) < 1e-12);

    auto leaving = description("ring", 2, {"a", "b", "c"});
    leaving.nodes[2].state = node_state::leaving;
    const snapshot l2 = snapshot::build(leaving);
    const auto lplan = plan_rollback(l2, s1);
    check_ranges(l2, s1, lplan);
    for (const auto& t : lplan.totals) {
        CHECK(t.invalidate == 0);
        CHECK(t.node != "c");  // c kept its keys and their writes
    }
}

TEST_CASE("rollback: of a completed join with two copies a key by key model agrees", "[rollback]") {
    const snapshot s1 = snapshot::build(description("ring", 1, {"a", "b", "c", "e"}, 2));
    const snapshot s3 = snapshot::build(description("ring", 3, {"a", "b", "c", "d", "e"}, 2));
    const auto plan = plan_rollback(s3, s1);
    check_ranges(s3, s1, plan);
    CHECK_FALSE(plan.ranges.empty());
}

TEST_CASE("rollback: rendezvous has no ranges: its rules are counted over sample keys", "[rollback]") {
    const snapshot s1 = snapshot::build(description("rendezvous", 1, {"a", "b", "c"}));
    const snapshot s2 = snapshot::build(description("rendezvous", 2, {"a", "b", "c", "d"}));
    const auto plan = plan_rollback(s2, s1);
    CHECK_FALSE(plan.exact);
    CHECK(plan.ranges.empty());
    constexpr std::size_t n = 100000;
    std::map<std::string, std::pair<double, double>> counted;
    for (std::size_t k = 0; k < n; ++k) {
        const auto want = model(s2, s1, "rdv:" + std::to_string(k));
        for (const auto& id : want.invalidate) {
            counted[id].first += 1.0 / n;
        }
        for (const auto& id : want.relinquish) {
            counted[id].second += 1.0 / n;
        }
    }
    REQUIRE(plan.totals.size() == 4);
    for (const auto& t : plan.totals) {
        // Two independent samples (2^17 and 10^5 keys): 4 standard deviations of their difference.
        const auto [inv, rel] = counted[t.node];
        const double sd = std::sqrt(0.25 / n + 0.25 / 131072.0);
        CHECK(std::fabs(t.invalidate - inv) < 4 * sd);
        CHECK(std::fabs(t.relinquish - rel) < 4 * sd);
    }
}

TEST_CASE("rollback: bad input is refused with its reason", "[rollback]") {
    const snapshot s1 = snapshot::build(description("ring", 1, {"a", "b", "c"}));
    const snapshot s2 = snapshot::build(description("ring", 2, {"a", "b", "c", "d"}));
    const auto refused = [](const snapshot& x, const snapshot& y, keyplace::rollback_options o, keyplace::errc code,
                            const std::string& says) {
        keyplace::error_info err;
        CHECK_FALSE(keyplace::try_plan_rollback(x, y, o, err));
        CHECK(err.code() == code);
        INFO(err.message());
        CHECK(err.message().find(says) != std::string::npos);
    };
    using keyplace::errc;
    auto other = description("ring", 1, {"a", "b", "c"});
    other.cluster = "elsewhere";
    refused(s2, snapshot::build(other), {}, errc::wrong_cluster, "rollback: a rollback across clusters");
    auto joining = description("ring", 2, {"a", "b", "c", "d"});
    joining.nodes[3].state = node_state::joining;
    const snapshot j2 = snapshot::build(joining);
    refused(s2, j2, {}, errc::invalid_state, "roll back to a settled epoch");
    refused(j2, s1, {.steps = 3}, errc::invalid_state, "is a transition: roll it back in one epoch");
    refused(s2, snapshot::build(description("rendezvous", 1, {"a", "b", "c"})), {}, errc::invalid_argument,
            "differ in strategy");
    refused(s2, s1, {.steps = 0}, errc::invalid_argument, "steps 0");
    refused(snapshot::build(description("ring", 2, {"a", "b", "c", "d", "e"})), s1, {.steps = 2},
            errc::invalid_argument, "rollback: ramp: a ramp changes one node's share");
}

TEST_CASE("rollback: a completed leave may not be rolled back onto its tombstone, and modulo's two moduli are counted",
          "[rollback]") {
    const snapshot s1 = snapshot::build(description("ring", 1, {"a", "b", "c"}));
    auto gone = description("ring", 3, {"a", "b", "c"});
    gone.nodes[2].state = node_state::left;
    keyplace::error_info err;
    CHECK_FALSE(keyplace::try_plan_rollback(snapshot::build(gone), s1, {}, err));
    CHECK(err == keyplace::fleet_errc::invalid_state);
    CHECK(err.message() == "rollback: node 'c' left at epoch 3 and may not return: roll back to a placement without "
                           "it, or give it a new id");

    // modulo: now's current() is modulo 3 and its pending() modulo 4: the ranges of the two plans
    // count different moduli, so the rules are counted over sample keys.
    const snapshot m1 = snapshot::build(description("modulo", 1, {"a", "b", "c"}));
    auto joining = description("modulo", 2, {"a", "b", "c", "d"});
    joining.nodes[3].state = node_state::joining;
    const snapshot m2 = snapshot::build(joining);
    const auto plan = plan_rollback(m2, m1);
    CHECK_FALSE(plan.exact);
    CHECK(plan.modulus == 0);
    double relinquished = 0;
    for (const auto& t : plan.totals) {
        CHECK(t.invalidate == 0);
        CHECK(t.relinquish <= 1.0);
        relinquished += t.relinquish;
    }
    // Every key the joiner was prepared for, and what the others would have taken: modulo 3 -> 4
    // moves 3/4 of the keys (an independent count), within sampling noise of 2^17 keys.
    CHECK(std::fabs(relinquished - 0.75) < 4 * std::sqrt(0.75 * 0.25 / 131072.0));
}

TEST_CASE("rollback: an overridden key gets its own rule", "[rollback]") {
    const snapshot back = snapshot::build(description("ring", 1, {"a", "b", "c"}));
    const std::string ring_owner = back.owner("hot").id;
    const std::string other = ring_owner == "c" ? "a" : "c";
    auto with = description("ring", 2, {"a", "b", "c"});
    with.overrides.push_back({"hot", other});
    const snapshot now = snapshot::build(with);
    const auto plan = plan_rollback(now, back);
    // Under `now` the key's writes went to the override's node alone; after, the ring's owner has
    // it back with a copy older than those writes.
    REQUIRE(plan.keys.size() == 1);
    CHECK(plan.keys[0].key == "hot");
    CHECK(plan.keys[0].invalidate == std::vector<std::string>{ring_owner});
    CHECK(plan.keys[0].relinquish == std::vector<std::string>{other});
    CHECK(plan.moved[0] == 0);  // the strategies are the same: the ranges move nothing
}
