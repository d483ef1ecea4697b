// Tests of analysis.hpp against theory, not against its own output: exact ring ownership,
// movement against the joiner's share, the largest share of random points, co-ownership in
// closed form, and the edge cases (identical memberships, no keys).
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/modulo.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

using keyplace::node;
using namespace keyplace_test;

TEST_CASE("analysis: ring ownership sums to exactly the whole circle", "[analysis]") {
    auto weighted = make_nodes(37);
    weighted[3].weight = 4.5;
    for (const auto& r : {keyplace::ring::build(make_nodes(10)), keyplace::ring::build(weighted, {.vnodes = 7}),
                          keyplace::ring::build({{"solo"}}, {.vnodes = 1}), keyplace::ring::build({{"solo"}})}) {
        keyplace::detail::u128 total{0, 0};
        for (const auto& m : keyplace::region_measure(r)) {
            total = keyplace::detail::add(total, m);
        }
        CHECK(total.hi == 1);  // 2^64
        CHECK(total.lo == 0);
        const auto o = keyplace::ownership(r);
        CHECK(o.method == keyplace::share_method::exact);
        CHECK(std::abs(std::accumulate(o.share.begin(), o.share.end(), 0.0) - 1.0) < 1e-12);
    }
}

TEST_CASE("analysis: a ring join moves exactly the joiner's ownership", "[analysis][property]") {
    const auto before = keyplace::ring::build(make_nodes(10));
    const auto after = before.with({"node-10"});
    const double share = keyplace::ownership(after).share[after.find("node-10")->value];
    const auto exact = keyplace::movement(before, after);
    CHECK(exact.exact);
    CHECK(std::abs(exact.moved - share) < 1e-12);
    CHECK(exact.violations == 0);
    CHECK(std::abs(exact.minimum - share) < 1e-12);
    CHECK(std::abs(exact.fair_minimum - 1.0 / 11) < 1e-12);
    const auto points = key_points(200'000);
    const auto sampled = keyplace::movement(before, after, points);
    CHECK(sampled.keys == points.size());
    CHECK(std::abs(sampled.moved - share) <= 5 * sigma(share, points.size()));
    CHECK(sampled.violations == 0);
    for (const auto& f : sampled.flows) {
        CHECK(f.inflow == (f.id == "node-10" ? sampled.moved : 0.0));
        CHECK(f.outflow <= sampled.moved);
    }
    // A leave: exactly the leaver's share, all of it outflow from the leaver.
    const auto left = keyplace::movement(before, before.without("node-4"));
    const double leaver = keyplace::ownership(before).share[before.find("node-4")->value];
    CHECK(std::abs(left.moved - leaver) < 1e-12);
    CHECK(left.violations == 0);
}

TEST_CASE("analysis: the largest ring share approaches 1 + sqrt(2 ln N / v)", "[analysis][property]") {
    // A node's share over the mean is about Gamma(v, 1/v): sd 1/sqrt(v). The largest of N is
    // near 1 + z_N / sqrt(v), z_N the expected largest of N standard normals, which tends to
    // sqrt(2 ln N) (slowly: 2.51 vs 3.03 at N = 100). Averaged over 8 rings per case.
    for (const std::size_t n : {10U, 100U}) {
        for (const std::uint32_t v : {256U, 1024U}) {
            double excess = 0;
            for (int trial = 0; trial < 8; ++trial) {
                const auto r = keyplace::ring::build(make_nodes(n, "t" + std::to_string(trial) + "-"), {.vnodes = v});
                const auto share = keyplace::ownership(r).share;
                excess += *std::max_element(share.begin(), share.end()) * static_cast<double>(n) - 1;
            }
            excess /= 8;
            const double theory = std::sqrt(2 * std::log(static_cast<double>(n)) / v);
            INFO("N " << n << " v " << v << ": excess " << excess << " vs " << theory);
            CHECK(excess / theory > 0.45);
            CHECK(excess / theory < 1.15);
        }
    }
}

TEST_CASE("analysis: co-ownership is the neighbour pairs at 1 vnode and rises with vnodes", "[analysis]") {
    const std::size_t n = 20;
    const auto nodes = make_nodes(n);
    using placer = keyplace::replica_placer<keyplace::ring>;
    const auto one = keyplace::coownership(placer::build(keyplace::ring::build(nodes, {.vnodes = 1}), {.count = 3}));
    // One point per node: the replica sets are n consecutive triples, sharing the pairs at ring
    // distance 1 and 2: 2n pairs of n(n-1)/2, a fraction 4 / (n - 1).
    CHECK(one.exact);
    CHECK(one.copysets == n);
    CHECK(one.pairs == 2 * n);
    CHECK(std::abs(one.pair_fraction - 4.0 / (n - 1)) < 1e-12);
    double previous = one.pair_fraction;
    for (const std::uint32_t v : {4U, 16U, 64U}) {
        const auto c = keyplace::coownership(placer::build(keyplace::ring::build(nodes, {.vnodes = v}), {.count = 3}));
        INFO("vnodes " << v);
        CHECK(c.pair_fraction > previous);
        CHECK(c.copysets > n);
        previous = c.pair_fraction;
    }
    CHECK(previous <= 1.0);
    // Maglev: one set per slot, exact.
    const auto g = keyplace::maglev::build(nodes, {.table_size = 257});
    const auto mc = keyplace::coownership(keyplace::replica_placer<keyplace::maglev>::build(g, {.count = 3}));
    CHECK(mc.exact);
    CHECK(mc.regions == 257);
}

TEST_CASE("analysis: identical memberships, no keys, and modulo", "[analysis][errors]") {
    const auto r = keyplace::ring::build(make_nodes(5));
    const auto same = keyplace::movement(r, r);
    CHECK(same.moved == 0);
    CHECK(same.minimum == 0);
    CHECK(same.violations == 0);
    const auto none = keyplace::movement(r, r.with({"x"}), std::span<const std::uint64_t>());
    CHECK(none.keys == 0);
    CHECK(none.moved == 0);
    CHECK(none.minimum == 0);  // "no keys: every fraction is 0" (it was the exact minimum)
    CHECK(none.fair_minimum == 0);
    CHECK(none.violations == 0);
    for (const auto& f : none.flows) {
        CHECK(f.inflow == 0);
        CHECK(f.outflow == 0);
    }
    const auto empty_load = keyplace::load(r, std::span<const std::uint64_t>());
    CHECK(empty_load.max_over_mean == 0);
    CHECK(empty_load.cv == 0);

    const auto m10 = keyplace::modulo::build(make_nodes(10));
    const auto m11 = keyplace::modulo::build(make_nodes(11));
    const auto points = key_points(200'000);
    const auto mm = keyplace::movement(m10, m11, points);
    CHECK(std::abs(mm.moved - 10.0 / 11) < 0.01);
    CHECK(mm.violations > 0.8);
    CHECK(std::abs(mm.fair_minimum - 1.0 / 11) < 1e-12);
    CHECK(std::abs(mm.minimum - 1.0 / 11) < 1e-9);  // modulo's exact shares are fair
}

TEST_CASE("analysis: ownership and load of every strategy", "[analysis]") {
    const auto nodes = make_nodes(8);
    const auto points = key_points(200'000);
    // Jump: its defined share; rendezvous: sampled, within the stated bound of w/Σw.
    const auto j = keyplace::ownership(keyplace::jump::build(nodes));
    CHECK(j.method == keyplace::share_method::expected);
    CHECK(j.share[3] == 1.0 / 8);
    auto weighted = nodes;
    weighted[0].weight = 3;
    const auto rv = keyplace::rendezvous::build(weighted);
    const auto ro = keyplace::ownership(rv);
    CHECK(ro.method == keyplace::share_method::sampled);
    CHECK(std::abs(ro.share[rv.find("node-0")->value] - 0.3) <= ro.error_bound);
    CHECK(std::abs(ro.share[rv.find("node-5")->value] - 0.1) <= ro.error_bound);
    // Maglev: entries / M.
    const auto g = keyplace::maglev::build(nodes, {.table_size = 101});
    const auto go = keyplace::ownership(g);
    CHECK(go.share[0] * 101 == std::round(go.share[0] * 101));
    // Load: the figures from the counts.
    const auto l = keyplace::load(g, points);
    CHECK(std::accumulate(l.keys.begin(), l.keys.end(), std::size_t{0}) == points.size());
    const double mean = 200'000.0 / 8;
    CHECK(l.max_over_mean == static_cast<double>(*std::max_element(l.keys.begin(), l.keys.end())) / mean);
    CHECK(l.min_over_mean <= 1.0);
    CHECK(l.cv > 0);
    // Maglev movement: exact by slots, within 2x the minimum, with violations.
    const auto mg = keyplace::movement(g, g.with({"node-8"}));
    CHECK(mg.exact);
    CHECK(mg.moved >= mg.minimum);
    CHECK(mg.moved <= 2 * mg.minimum + 2.0 / 101);
}

TEST_CASE("analysis: exact ownership of rings of explicit points, signed and 32-bit", "[analysis]") {
    // Cassandra tokens MIN, MIN + 2^62, 0: the node at MIN owns the wrap (0, MAX] plus MIN, half
    // the circle; the others (MIN, MIN + 2^62] and (MIN + 2^62, 0], a quarter each.
    constexpr auto min64 = std::numeric_limits<std::int64_t>::min();
    const auto c = keyplace::compat::cassandra_ring::build(
        {{"wrap", {min64}}, {"q1", {min64 + (std::int64_t{1} << 62)}}, {"q2", {0}}});
    const auto oc = keyplace::ownership(c);
    CHECK(oc.method == keyplace::share_method::exact);
    CHECK(oc.share == std::vector<double>{0.5, 0.25, 0.25});
    // A 32-bit continuum (ketama's point type): points 0, 2^30, 2^31.
    using ring32 = keyplace::compat::point_ring<std::uint32_t, keyplace::xxh3>;
    const std::vector<keyplace::node> nodes{{"z"}, {"a"}, {"b"}};
    const auto r = ring32::build(nodes, {{0U, 0}, {1U << 30, 1}, {1U << 31, 2}});
    CHECK(keyplace::ownership(r).share == std::vector<double>{0.5, 0.25, 0.25});
    // One point: its node owns the whole circle.
    const auto one = ring32::build(nodes, {{7U, 1}});
    CHECK(keyplace::ownership(one).share == std::vector<double>{0.0, 1.0, 0.0});
}

TEST_CASE("analysis: modulo refuses a weight other than 1, as jump does, and nothing changes", "[analysis][errors]") {
    using keyplace::errc;
    const auto m = keyplace::modulo::build(make_nodes(3));
    expect_error([] { return keyplace::modulo::build({{"a"}, {"b", 2.0}}); }, errc::invalid_weight,
                 "node 'b': weight 2; modulo places every node with weight 1");
    expect_error([&] { return m.with({"heavy", 0.5}); }, errc::invalid_weight,
                 "node 'heavy': weight 0.5; modulo places every node with weight 1");
    expect_error([] { return keyplace::jump::build({{"a"}, {"b", 2.0}}); }, errc::invalid_weight,
                 "node 'b': weight 2; jump places every node with weight 1");
    keyplace::error_info err;
    CHECK_FALSE(keyplace::modulo::try_build(std::vector<node>{{"a", 3.0}}, err));
    CHECK(err == errc::invalid_weight);
    CHECK(m.size() == 3);
    CHECK(m.pick(7).value == 7 % 3);
}
