// Tests of fleet/ramp.hpp: ramped joins, leaves and reweights followed key by key over 10^5 keys
// (each key moves at most once, only toward the joining node or away from the leaving one, and
// the chain ends where the one-shot change does), the max_moved bound, Maglev's measured excess,
// and every bad input.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using keyplace::node_state;
using keyplace::plan_ramp;
using keyplace::ramp_method;
using keyplace::ramp_options;
using keyplace::snapshot;
using keyplace::snapshot_description;

namespace ramp_test {

auto settled(const std::string& strategy, std::uint64_t epoch, const std::vector<std::string>& ids) -> snapshot_description {
    snapshot_description d;
    d.cluster = "ramp";
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy.name = strategy;
    for (const auto& id : ids) {
        d.nodes.push_back({id, "10.0.0.1:11211", 1.0});
    }
    return d;
}

// How the chain [from, epochs...] moves each of n keys: the number of keys that moved more than
// once, that moved between two nodes other than `node`, and the fraction each epoch moved.
struct followed {
    std::size_t twice = 0;
    std::size_t elsewhere = 0;
    std::size_t wrong_end = 0;
    std::vector<double> moved;
    double total = 0;
};

auto follow(const snapshot& from, const snapshot& to, const keyplace::ramp_plan& plan, std::size_t n) -> followed {
    std::vector<snapshot> chain;
    for (const auto& d : plan.epochs) {
        chain.push_back(snapshot::build(d));
    }
    followed f;
    f.moved.assign(chain.size(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string key = "ramp-key:" + std::to_string(i);
        std::string owner = from.owner(key).id;
        int moves = 0;
        for (std::size_t e = 0; e < chain.size(); ++e) {
            const std::string next = chain[e].owner(key).id;
            if (next != owner) {
                ++moves;
                f.moved[e] += 1;
                if (owner != plan.node && next != plan.node) {
                    ++f.elsewhere;
                }
                owner = next;
            }
        }
        f.twice += moves > 1 ? 1 : 0;
        f.wrong_end += owner != to.owner(key).id ? 1 : 0;
    }
    for (auto& m : f.moved) {
        m /= static_cast<double>(n);
        f.total += m;
    }
    return f;
}

// 4 standard deviations of a fraction p measured over n keys: the noise bound of a key count.
auto noise(double p, std::size_t n) -> double { return 4 * std::sqrt(p * (1 - p) / static_cast<double>(n)) + 1e-9; }

void check_monotone(const snapshot& from, const snapshot& to, const keyplace::ramp_plan& plan) {
    constexpr std::size_t n = 100000;
    const auto f = follow(from, to, plan, n);
    CHECK(f.twice == 0);
    CHECK(f.elsewhere == 0);
    CHECK(f.wrong_end == 0);
    REQUIRE(f.moved.size() == plan.moved.size());
    for (std::size_t e = 0; e < f.moved.size(); ++e) {
        CHECK(std::fabs(f.moved[e] - plan.moved[e]) < noise(plan.moved[e], n));
    }
    // No key moves twice, so the chain moves what one epoch would: exactly where the figures are
    // exact, and over the same sample keys otherwise.
    CHECK(std::fabs(plan.total_moved - plan.one_shot_moved) < 1e-9);
    CHECK(plan.monotone);
    // The last epoch places keys as `to` does.
    CHECK(snapshot::build(plan.epochs.back()).fingerprint() == to.fingerprint());
    for (std::size_t e = 0; e < plan.epochs.size(); ++e) {
        CHECK(plan.epochs[e].epoch == from.epoch() + 1 + e);
        CHECK(plan.epochs[e].parent_epoch == from.epoch() + e);
    }
}

}  // namespace ramp_test

using namespace ramp_test;

TEST_CASE("ramp: a ring join in 5 steps moves each key once, only to the joiner, as much as the one-shot join",
          "[ramp]") {
    const snapshot from = snapshot::build(settled("ring", 10, {"a", "b", "c"}));
    const snapshot to = snapshot::build(settled("ring", 11, {"a", "b", "c", "d"}));
    const auto plan = plan_ramp(from, to, {.steps = 5});
    CHECK(plan.node == "d");
    CHECK(plan.method == ramp_method::weights);
    CHECK(plan.exact);
    REQUIRE(plan.epochs.size() == 5);
    CHECK(plan.values == std::vector<double>{0.2, 0.4, 0.6, 0.8, 1.0});
    check_monotone(from, to, plan);
    // Five steps of about a fifth of the join each (d's share is about a quarter).
    for (const double m : plan.moved) {
        CHECK(m > 0.02);
        CHECK(m < 0.09);
    }
    CHECK(plan.one_shot_moved > 0.15);
    CHECK(plan.one_shot_moved < 0.35);
}

TEST_CASE("ramp: a ring leave bounded by max_moved keeps every epoch within it and moves keys only off the leaver",
          "[ramp]") {
    const snapshot from = snapshot::build(settled("ring", 3, {"a", "b", "c", "d", "e"}));
    auto after = settled("ring", 4, {"a", "b", "c", "d", "e"});
    after.nodes[2].state = node_state::left;  // c leaves; the tombstone stays listed
    const snapshot to = snapshot::build(after);
    const auto plan = plan_ramp(from, to, {.max_moved = 0.03});
    CHECK(plan.node == "c");
    for (const double m : plan.moved) {
        CHECK(m <= 0.03);
    }
    // c's share (about a fifth) in steps of at most 3%: at least 7 of them.
    CHECK(plan.epochs.size() >= 7);
    check_monotone(from, to, plan);
    CHECK(plan.epochs.back().nodes[2].state == node_state::left);
}

TEST_CASE("ramp: a rendezvous reweight and a join of chosen points ramp monotonically", "[ramp]") {
    {
        const snapshot from = snapshot::build(settled("rendezvous", 1, {"a", "b", "c", "d"}));
        auto heavier = settled("rendezvous", 2, {"a", "b", "c", "d"});
        heavier.nodes[1].weight = 3.0;
        const snapshot to = snapshot::build(heavier);
        const auto plan = plan_ramp(from, to, {.steps = 4});
        CHECK(plan.node == "b");
        CHECK_FALSE(plan.exact);  // rendezvous has no regions: 2^17 sample keys
        CHECK(plan.values == std::vector<double>{1.5, 2.0, 2.5, 3.0});
        check_monotone(from, to, plan);
    }
    {
        auto before = settled("tokens", 5, {"a", "b", "c"});
        for (std::size_t i = 0; i < before.nodes.size(); ++i) {
            for (std::uint64_t j = 0; j < 32; ++j) {
                before.nodes[i].points.push_back((j * 3 + i) * 0x0555555555555555ULL + 0x1234567ULL * (i + 1));
            }
        }
        auto joined = before;
        joined.epoch = 6;
        joined.parent_epoch = 5;
        joined.nodes.push_back({"d", "", 1.0});
        for (std::uint64_t j = 0; j < 32; ++j) {
            joined.nodes.back().points.push_back(j * 0x0777777777777777ULL + 0x9abcdefULL);
        }
        const snapshot from = snapshot::build(before);
        const snapshot to = snapshot::build(joined);
        // More steps than points to reveal: one epoch per point, none repeated, none placing as the last.
        auto three = joined;
        three.nodes.back().points.resize(3);
        const auto short_ramp = plan_ramp(from, snapshot::build(three), {.steps = 10});
        CHECK(short_ramp.values == std::vector<double>{1, 2, 3});
        for (const double m : short_ramp.moved) {
            CHECK(m > 0);
        }
        const auto plan = plan_ramp(from, to, {.steps = 4});
        CHECK(plan.method == ramp_method::points);
        CHECK(plan.values == std::vector<double>{8, 16, 24, 32});
        REQUIRE(plan.epochs.size() == 4);
        CHECK(plan.epochs[0].nodes[3].points.size() == 8);
        check_monotone(from, to, plan);
    }
}

TEST_CASE("ramp: Maglev ramps with a measured excess: it ends where the one-shot join does and moves at least as much",
          "[ramp]") {
    const snapshot from = snapshot::build(settled("maglev", 1, {"a", "b", "c"}));
    const snapshot to = snapshot::build(settled("maglev", 2, {"a", "b", "c", "d"}));
    const auto plan = plan_ramp(from, to, {.steps = 5});
    CHECK_FALSE(plan.monotone);
    CHECK(plan.exact);
    CHECK(plan.total_moved >= plan.one_shot_moved - 1e-12);
    CHECK(snapshot::build(plan.epochs.back()).fingerprint() == to.fingerprint());
    const auto f = follow(from, to, plan, 100000);
    CHECK(f.wrong_end == 0);
    CHECK(std::fabs(f.total - plan.total_moved) < noise(plan.total_moved, 100000));
}

TEST_CASE("ramp: bad input is refused with its reason, and nothing is planned", "[ramp]") {
    const snapshot abc = snapshot::build(settled("ring", 1, {"a", "b", "c"}));
    const snapshot abcd = snapshot::build(settled("ring", 2, {"a", "b", "c", "d"}));
    const auto refused = [](const snapshot& x, const snapshot& y, ramp_options o, keyplace::errc code,
                            const std::string& says) {
        keyplace::error_info err;
        const auto p = keyplace::try_plan_ramp(x, y, o, err);
        CHECK_FALSE(p);
        CHECK(err.code() == code);
        INFO(err.message());
        CHECK(err.message().find(says) != std::string::npos);
    };
    using keyplace::errc;
    refused(abc, abcd, {}, errc::invalid_argument, "either a number of steps or");
    refused(abc, abcd, {.steps = 3, .max_moved = 0.1}, errc::invalid_argument, "either a number of steps or");
    refused(abc, abcd, {.steps = 1001}, errc::invalid_argument, "steps 1001 is not from 1 to 1000");
    refused(abc, abcd, {.max_moved = 1.5}, errc::invalid_argument, "max_moved 1.5 is not a fraction in (0, 1]");
    refused(abc, abcd, {.max_moved = std::nan("")}, errc::invalid_argument, "is not a fraction in (0, 1]");
    refused(abc, abcd, {.max_moved = 1e-7}, errc::invalid_argument, "is less than the smallest step moves");

    auto elsewhere = settled("ring", 2, {"a", "b", "c", "d"});
    elsewhere.cluster = "other";
    refused(abc, snapshot::build(elsewhere), {.steps = 2}, errc::wrong_cluster,
            "a ramp across clusters: 'ramp' and 'other'");
    auto joining = settled("ring", 2, {"a", "b", "c", "d"});
    joining.nodes[3].state = node_state::joining;
    refused(abc, snapshot::build(joining), {.steps = 2}, errc::invalid_state,
            "epoch 2 has joining or leaving nodes: complete it first");
    refused(abc, snapshot::build(settled("rendezvous", 2, {"a", "b", "c", "d"})), {.steps = 2}, errc::invalid_argument,
            "differ in strategy or its parameters ('ring' and 'rendezvous')");
    refused(snapshot::build(settled("jump", 1, {"a", "b", "c"})), snapshot::build(settled("jump", 2, {"a", "b", "c", "d"})),
            {.steps = 2}, errc::unknown_strategy, "strategy 'jump' cannot ramp: its nodes have no weights");
    refused(snapshot::build(settled("ketama", 1, {"a", "b", "c"})),
            snapshot::build(settled("ketama", 2, {"a", "b", "c", "d"})), {.steps = 2}, errc::unknown_strategy,
            "strategy 'ketama' cannot ramp: its weights are whole point counts");
    refused(abc, snapshot::build(settled("ring", 2, {"a", "b", "c", "d", "e"})), {.steps = 2}, errc::invalid_argument,
            "these change 2: 'd', 'e'; ramp them one after another");
    refused(abc, snapshot::build(settled("ring", 2, {"a", "b", "c"})), {.steps = 2}, errc::invalid_argument,
            "place keys alike: nothing to ramp");
    auto copies = settled("ring", 2, {"a", "b", "c", "d"});
    copies.replication.count = 2;
    refused(abc, snapshot::build(copies), {.steps = 2}, errc::invalid_argument, "differ in replication or overrides");

    auto t1 = settled("tokens", 1, {"a", "b"});
    t1.nodes[0].points = {1, 2, 3};
    t1.nodes[1].points = {1ULL << 62, 1ULL << 63};
    auto t2 = t1;
    t2.epoch = 2;
    t2.parent_epoch = 1;
    t2.nodes[0].points = {1, 5, 3, 4};
    refused(snapshot::build(t1), snapshot::build(t2), {.steps = 2}, errc::invalid_argument,
            "node 'a': its points in one snapshot neither extend nor prefix those in the other");
}

TEST_CASE("ramp: an announced ramp begins with the node joining or leaving, whose pending placement is the ramp's last",
          "[ramp]") {
    const snapshot from = snapshot::build(settled("ring", 10, {"a", "b", "c"}));
    const snapshot to = snapshot::build(settled("ring", 11, {"a", "b", "c", "d"}));
    const auto plain = plan_ramp(from, to, {.steps = 5});
    const auto plan = plan_ramp(from, to, {.steps = 5, .announce = true});
    CHECK(plan.announced);
    CHECK_FALSE(plain.announced);
    REQUIRE(plan.epochs.size() == plain.epochs.size() + 1);
    const snapshot first = snapshot::build(plan.epochs[0]);
    CHECK(first.epoch() == 11);
    CHECK(first.parent_epoch() == 10);
    REQUIRE(first.find("d") != nullptr);
    CHECK(first.find("d")->state == node_state::joining);
    // It places keys as `from` does now, and as `to` does once complete: reads stay, writes reach both.
    CHECK(first.current().fingerprint() == from.current().fingerprint());
    CHECK(first.pending().fingerprint() == to.current().fingerprint());
    CHECK(plan.moved.front() == 0.0);
    CHECK(plan.values.front() == 0.0);
    // The ramp follows one epoch later and places as the plain one.
    std::vector<snapshot> chain{first};
    for (std::size_t i = 1; i < plan.epochs.size(); ++i) {
        CHECK(plan.epochs[i].epoch == 11 + i);
        CHECK(plan.epochs[i].parent_epoch == 10 + i);
        chain.push_back(snapshot::build(plan.epochs[i]));
        CHECK(chain.back().current().fingerprint() == snapshot::build(plain.epochs[i - 1]).current().fingerprint());
        CHECK(plan.moved[i] == plain.moved[i - 1]);
        CHECK(plan.values[i] == plain.values[i - 1]);
    }
    CHECK(plan.total_moved == plain.total_moved);
    // Every epoch places each key on its owner under `from` or under `to`: the announcing epoch's
    // write set (both) names every copy any epoch of the ramp reads. Over 10^5 keys.
    std::size_t elsewhere = 0;
    for (std::size_t i = 0; i < 100000; ++i) {
        const std::string key = "announce-key:" + std::to_string(i);
        const auto& a = from.owner(key).id;
        const auto& b = to.owner(key).id;
        const auto ws = first.write_set(key);
        bool both = ws.size() == (a == b ? 1U : 2U);
        for (const auto* n : ws) {
            both = both && (n->id == a || n->id == b);
        }
        elsewhere += both ? 0 : 1;
        for (const auto& s : chain) {
            const auto& o = s.owner(key).id;
            elsewhere += o == a || o == b ? 0 : 1;
        }
    }
    CHECK(elsewhere == 0);

    // A leave: the node leaving at its weight, its pending placement without it.
    const snapshot four = snapshot::build(settled("ring", 20, {"a", "b", "c", "d"}));
    const snapshot three = snapshot::build(settled("ring", 21, {"a", "b", "c"}));
    const auto leave = plan_ramp(four, three, {.max_moved = 0.05, .announce = true});
    const snapshot leaving = snapshot::build(leave.epochs.front());
    CHECK(leaving.find("d")->state == node_state::leaving);
    CHECK(leaving.current().fingerprint() == four.current().fingerprint());
    CHECK(leaving.pending().fingerprint() == three.current().fingerprint());
    CHECK(leave.values.front() == 1.0);
    CHECK(snapshot::build(leave.epochs.back()).current().fingerprint() == three.current().fingerprint());

    // A reweight cannot be announced, and is refused with the reason.
    auto heavier = settled("ring", 21, {"a", "b", "c", "d"});
    heavier.nodes[3].weight = 2;
    keyplace::error_info err;
    CHECK_FALSE(keyplace::try_plan_ramp(four, snapshot::build(heavier), {.steps = 2, .announce = true}, err));
    CHECK(err.code() == keyplace::errc::invalid_argument);
    CHECK(err.message() == "ramp: node 'd' changes its share, and only a join or a leave can be announced (no node "
                           "state carries a change of share)");
    // Refused before any step is planned: a max_moved no step meets does not hide it.
    CHECK_FALSE(keyplace::try_plan_ramp(four, snapshot::build(heavier), {.max_moved = 1e-9, .announce = true}, err));
    CHECK(err.message().find("changes its share") != std::string::npos);
    CHECK(plan_ramp(four, snapshot::build(heavier), {.steps = 2}).epochs.size() == 2);
}
