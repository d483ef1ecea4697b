// What-if (fleet/what_if.hpp): the loss of a zone, a rack or nodes, measured exactly over regions,
// against a brute-force recount of 10^6 keys placed one by one.
#include "keyplace_catch.hpp"

#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/fleet/what_if.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace what_if_tests {

using keyplace::loss;
using keyplace::loss_level;
using keyplace::snapshot;
using keyplace::snapshot_description;

// 3 zones x 10 nodes (zone z<i>, two nodes a rack z<i>-r<j>), 3 copies a key, one in each zone.
auto three_zones(const std::string& strategy) -> snapshot_description {
    snapshot_description d;
    d.cluster = "what-if";
    d.epoch = 1;
    d.strategy.name = strategy;
    for (int z = 0; z < 3; ++z) {
        for (int i = 0; i < 10; ++i) {
            keyplace::snapshot_node n{"n" + std::to_string(z) + std::to_string(i)};
            n.where.region = "eu";
            n.where.zone = "z" + std::to_string(z);
            n.where.rack = n.where.zone + "-r" + std::to_string(i / 2);
            d.nodes.push_back(n);
        }
    }
    if (strategy == "partitions") {
        d.strategy.params = {{"partitions", std::uint64_t{1024}}, {"replicas", std::uint64_t{1}}};
    }
    d.replication = {3, keyplace::failure_domain::zone};
    return d;
}

// The figures of a loss counted over keys, each placed as a client places it: its copies now in
// order, and its owner under the placement without the lost nodes (their removal completed).
struct recount {
    double keys = 0;
    double lost_share = 0, no_copy = 0, one_copy = 0, moved = 0;
    std::map<std::string, double> before, failover, rebuilt;
};

auto brute_force(const snapshot& s, const std::vector<std::string>& lost_ids, std::size_t n) -> recount {
    const auto is_lost = [&](const std::string& id) {
        return std::find(lost_ids.begin(), lost_ids.end(), id) != lost_ids.end();
    };
    auto d = s.successor();
    d.replication.on_shortfall = keyplace::shortfall::relax;  // two zones left of three, 3 copies
    for (auto& node : d.nodes) {
        node.state = is_lost(node.id) ? keyplace::node_state::leaving : node.state;
    }
    auto done = keyplace::completion(snapshot::build(d));
    const snapshot after = snapshot::build(done);
    recount r;
    r.keys = static_cast<double>(n);
    std::array<std::uint32_t, 8> out{};
    const std::span<std::uint32_t> copies(out.data(), s.current().width());
    for (std::size_t i = 0; i < n; ++i) {
        const std::string key = "user:" + std::to_string(i);
        const std::size_t c = s.current().strategy_copies(key, copies);
        const std::string& owner = s.nodes()[out[0]].id;
        r.before[owner] += 1;
        r.lost_share += is_lost(owner) ? 1 : 0;
        std::size_t alive = 0;
        for (std::size_t k = 0; k < c; ++k) {
            const std::string& id = s.nodes()[out[k]].id;
            if (!is_lost(id)) {
                r.failover[id] += alive == 0 ? 1 : 0;
                ++alive;
            }
        }
        r.no_copy += alive == 0 ? 1 : 0;
        r.one_copy += alive == 1 ? 1 : 0;
        const std::string& now_owner = after.nodes()[after.current().strategy_owner(key)].id;
        r.rebuilt[now_owner] += 1;
        r.moved += now_owner != owner ? 1 : 0;
    }
    return r;
}

// An exact share p against a count over n keys: within 5 standard deviations of a binomial count
// (sqrt(p (1 - p) / n)), plus one key for the rounding of a share of 0 or 1. 5 sigma: about 170
// comparisons a loss, each failing by chance with probability 5.7e-7.
auto agrees(double exact, double count, double n) -> bool {
    const double sd = std::sqrt(exact * (1 - exact) / n);
    return std::abs(exact - count / n) <= 5 * sd + 1 / n;
}

void check_against_recount(const snapshot& s, const keyplace::what_if_report& w, std::size_t n) {
    recount r = brute_force(s, w.lost, n);
    INFO("strategy " << s.strategy().name << ", losing " << w.lost.size() << " nodes");
    CHECK(agrees(w.lost_share, r.lost_share, r.keys));
    CHECK(agrees(w.no_copy, r.no_copy, r.keys));
    CHECK(agrees(w.one_copy, r.one_copy, r.keys));
    CHECK(agrees(w.movement.moved, r.moved, r.keys));
    for (const auto& v : w.survivors) {
        INFO("survivor " << v.id);
        CHECK(agrees(v.before, r.before[v.id], r.keys));
        CHECK(agrees(v.failover, r.failover[v.id], r.keys));
        CHECK(agrees(v.rebuilt, r.rebuilt[v.id], r.keys));
    }
    // The sums: every key is served by a survivor or has no copy; the rebuilt shares are whole.
    double before = w.lost_share, failover = w.no_copy, rebuilt = 0;
    for (const auto& v : w.survivors) {
        before += v.before;
        failover += v.failover;
        rebuilt += v.rebuilt;
    }
    CHECK(std::abs(before - 1) < 1e-9);
    CHECK(std::abs(failover - 1) < 1e-9);
    CHECK(std::abs(rebuilt - 1) < 1e-9);
    CHECK(w.movement.moved >= w.movement.minimum - 1e-9);
    CHECK(w.movement.minimum >= w.lost_share - 1e-9);  // at least the lost nodes' keys move
}

}  // namespace what_if_tests

TEST_CASE("what-if: a zone, two zones, a rack and two nodes lost, exactly as 10^6 keys recount them",
          "[what_if]") {
    using namespace what_if_tests;
    constexpr std::size_t keys = 1000000;
    for (const std::string strategy : {"ring", "maglev", "partitions"}) {
        INFO(strategy);
        const snapshot s = snapshot::build(three_zones(strategy));

        // One zone of three: every key keeps two copies, one in each other zone.
        const auto zone = keyplace::what_if(s, {loss_level::zone, {"z1"}});
        CHECK(zone.exact);
        CHECK(zone.lost.size() == 10);
        CHECK(zone.copies == 3);
        CHECK(zone.no_copy == 0.0);
        CHECK(zone.one_copy == 0.0);
        CHECK(zone.survivors.size() == 20);
        check_against_recount(s, zone, keys);

        // Two zones: every key is down to its one copy in z0.
        const auto two = keyplace::what_if(s, {loss_level::zone, {"z1", "z2"}});
        CHECK(two.no_copy == 0.0);
        CHECK(std::abs(two.one_copy - 1) < 1e-12);
        for (const auto& v : two.survivors) {
            CHECK(v.id.substr(0, 2) == "n0");
        }

        // A rack (two nodes of z1) and two nodes of different zones: keys with one copy exist only
        // where both lost nodes hold copies of one key.
        const auto rack = keyplace::what_if(s, {loss_level::rack, {"z1-r3"}});
        CHECK(rack.lost == std::vector<std::string>{"n16", "n17"});
        CHECK(rack.one_copy == 0.0);  // both in z1: no key has two copies there
        // Two nodes that hold copies of one key (user:0's first two).
        std::array<std::uint32_t, 3> held{};
        REQUIRE(s.current().strategy_copies("user:0", held) == 3);
        const auto nodes = keyplace::what_if(s, {loss_level::nodes, {s.nodes()[held[0]].id, s.nodes()[held[1]].id}});
        CHECK(nodes.no_copy == 0.0);
        CHECK(nodes.one_copy > 0.0);
        check_against_recount(s, nodes, keys);

        if (strategy == "ring") {
            // A ring's survivors keep every key they own: exactly the lost share moves, the least.
            CHECK(std::abs(zone.movement.moved - zone.lost_share) < 1e-12);
            CHECK(std::abs(zone.movement.minimum - zone.lost_share) < 1e-12);
            CHECK(zone.movement.exact);
            CHECK(zone.movement.violations == 0.0);
        }
    }
}

TEST_CASE("what-if: without replicas the lost keys have no copy, and a sampled strategy says it sampled",
          "[what_if]") {
    using namespace what_if_tests;
    auto d = three_zones("ring");
    d.replication = {};
    const snapshot s = snapshot::build(d);
    const auto w = keyplace::what_if(s, {loss_level::nodes, {"n00"}});
    CHECK(w.copies == 1);
    CHECK(w.exact);
    CHECK(w.no_copy == w.lost_share);
    CHECK(std::abs(w.one_copy + w.lost_share - 1) < 1e-12);
    for (const auto& v : w.survivors) {
        CHECK(v.failover == v.before);  // nobody takes a lost key over until the placement changes
    }
    check_against_recount(s, w, 200000);

    auto r = three_zones("rendezvous");
    const snapshot rs = snapshot::build(r);
    const auto sampled = keyplace::what_if(rs, {loss_level::zone, {"z2"}});
    CHECK_FALSE(sampled.exact);
    CHECK(sampled.sample_keys == keyplace::analysis_sample_size);
    CHECK(sampled.no_copy == 0.0);
    CHECK(sampled.one_copy == 0.0);
    // Rendezvous keeps every survivor's keys: only the lost zone's keys move, and both figures
    // count the same sample points.
    CHECK(std::abs(sampled.movement.moved - sampled.lost_share) < 1e-12);
    CHECK(sampled.movement.violations == 0.0);
}

TEST_CASE("what-if: the report as text and JSON names the loss and its figures", "[what_if]") {
    using namespace what_if_tests;
    const snapshot s = snapshot::build(three_zones("maglev"));
    const auto w = keyplace::what_if(s, {loss_level::zone, {"z0"}});
    const std::string text = w.to_text();
    CHECK(text.find("what-if: losing zone z0 (10 owning nodes: n00,n01") == 0);
    CHECK(text.find("exact over 65537 regions") != std::string::npos);
    CHECK(text.find("0.0000% are left with no copy and 0.0000% with one") != std::string::npos);
    const std::string json = w.to_json();
    CHECK(json.find("\"level\":\"zone\",\"names\":[\"z0\"],\"exact\":true,\"regions\":65537") != std::string::npos);
    CHECK(json.find("\"survivors\":[{\"id\":\"n10\"") != std::string::npos);
}

TEST_CASE("what-if: bad losses are refused, naming the value", "[what_if]") {
    using namespace what_if_tests;
    const snapshot s = snapshot::build(three_zones("ring"));
    const auto refused = [&](const loss& l, keyplace::errc code, const std::string& message) {
        keyplace::error_info err;
        CHECK_FALSE(keyplace::try_what_if(s, l, err).has_value());
        CHECK(err.code() == code);
        CHECK(err.message() == message);
        try {
            (void)keyplace::what_if(s, l);
            FAIL("what_if did not throw");
        } catch (const keyplace::error& e) {
            CHECK(std::string(e.what()) == message);
        }
    };
    refused({loss_level::zone, {}}, keyplace::errc::invalid_argument, "what-if: no zone named to lose");
    refused({loss_level::zone, {"z9"}}, keyplace::errc::unknown_domain, "what-if: no node is in zone 'z9'");
    refused({loss_level::rack, {"z1-r9"}}, keyplace::errc::unknown_domain, "what-if: no node is in rack 'z1-r9'");
    refused({loss_level::region, {"us"}}, keyplace::errc::unknown_domain, "what-if: no node is in region 'us'");
    refused({loss_level::nodes, {"n00", "n99"}}, keyplace::errc::unknown_id, "what-if: no node has the id 'n99'");
    refused({loss_level::zone, {"z1", "z1"}}, keyplace::errc::invalid_argument, "what-if: zone 'z1' is named twice");
    refused({loss_level::nodes, {std::string(100, 'x')}}, keyplace::errc::unknown_id,
            "what-if: no node has the id '" + std::string(64, 'x') + "'...");
    keyplace::error_info err;
    CHECK_FALSE(keyplace::try_what_if(s, {loss_level::zone, {"z0", "z1", "z2"}}, err).has_value());
    CHECK(err == keyplace::fleet_errc::no_owner);
    CHECK(err.message() == "what-if: losing zone 'z0' and the others named leaves no node that owns keys");
    CHECK_FALSE(keyplace::try_what_if(s, {loss_level::region, {"eu"}}, err).has_value());
    CHECK(err == keyplace::fleet_errc::no_owner);

    // A snapshot in transition: which placement to lose nodes from is ambiguous.
    auto next = s.successor();
    next.nodes[0].state = keyplace::node_state::leaving;
    const snapshot moving = snapshot::build(next);
    CHECK_FALSE(keyplace::try_what_if(moving, {loss_level::zone, {"z1"}}, err).has_value());
    CHECK(err.code() == keyplace::errc::invalid_argument);
    CHECK(err.message() == "what-if: epoch 2 is in transition; measure the epoch that completes it, or the one before");

    CHECK(keyplace::parse_loss_level("zone") == loss_level::zone);
    CHECK(keyplace::parse_loss_level("node") == loss_level::nodes);
    CHECK_FALSE(keyplace::parse_loss_level("shelf").has_value());
}
