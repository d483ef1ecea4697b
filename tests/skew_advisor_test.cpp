// The skew advisor (skew_advisor.hpp): forecasts of the busiest node's share over its fair share
// against real builds over 200 memberships, recommendations checked by building them, bad input.
#include "keyplace_catch.hpp"

#include <keyplace/skew_advisor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace skew_tests {

// The busiest-over-fair figure of `seeds` real builds, membership s named "s<s>-n<i>", sorted.
template <class Build>
auto measured(const std::vector<double>& weights, std::size_t seeds, Build build) -> std::vector<double> {
    std::vector<double> out;
    for (std::size_t s = 0; s < seeds; ++s) {
        std::vector<keyplace::node> nodes;
        for (std::size_t i = 0; i < weights.size(); ++i) {
            nodes.push_back({"s" + std::to_string(s) + "-n" + std::to_string(i), weights[i]});
        }
        const auto built = build(nodes);
        const auto shares = keyplace::ownership(built).share;
        double total = 0;
        for (const auto& n : built.nodes()) {
            total += n.weight;
        }
        double worst = 0;
        for (std::size_t i = 0; i < shares.size(); ++i) {
            worst = std::max(worst, shares[i] / (built.nodes()[i].weight / total));
        }
        out.push_back(worst);
    }
    std::sort(out.begin(), out.end());
    return out;
}

auto rank(const std::vector<double>& sorted, double q) -> double {
    return sorted[static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size()))) - 1];
}

}  // namespace skew_tests

// The ±2% bound is the issue's; the measured side has noise of its own. The p99 of 200 real rings
// is their 198th value: under the forecast's own distribution, 95% of 200-membership p99s fall
// within -2.0%..+3.2% of it at 3 nodes, -1.2%..+0.6% at 100 and -1.8%..+2.1% at 1,000 (200 draws
// of 200 memberships each; the forecast's 20,000 add 0.15%). No forecast is within 2% of every
// 200-ring p99 at 3 or 10 nodes, so those take 2,000 rings (the band shrinks by sqrt(10)), 100
// and 1,000 nodes take the 200. Measured here with 2,000 rings at 3 nodes, the forecast
// is 0.5% off at p99 and 0.0% at p50.
TEST_CASE("skew advisor: a ring's forecast p50 and p99 are within 2% of real rings at 3 to 1,000 nodes",
          "[skew_advisor]") {
    using namespace skew_tests;
    for (const auto& [n, seeds] : {std::pair<std::size_t, std::size_t>{3, 2000}, {10, 2000}, {100, 200}, {1000, 200}}) {
        const std::vector<double> weights(n, 1.0);
        const auto f = keyplace::forecast_ring_skew(weights, 160);
        const auto m = measured(weights, seeds, [](const auto& nodes) { return keyplace::ring::build(nodes); });
        INFO(n << " nodes, " << seeds << " rings: forecast p50 " << f.p50 << " p99 " << f.p99 << ", measured p50 "
               << rank(m, 0.5) << " p99 " << rank(m, 0.99));
        CHECK_FALSE(f.exact);
        CHECK(f.trials == keyplace::skew_forecast_trials);
        CHECK(std::abs(f.p50 / rank(m, 0.50) - 1) <= 0.02);
        CHECK(std::abs(f.p99 / rank(m, 0.99) - 1) <= 0.02);
    }
    // Weights: node i of 10 has weight 1 + i % 3, so llround(160 w) = 160, 320 or 480 points.
    std::vector<double> weights;
    for (std::size_t i = 0; i < 10; ++i) {
        weights.push_back(1.0 + static_cast<double>(i % 3));
    }
    const auto f = keyplace::forecast_ring_skew(weights, 160);
    const auto m = measured(weights, 2000, [](const auto& nodes) { return keyplace::ring::build(nodes); });
    INFO("weighted: forecast p50 " << f.p50 << " p99 " << f.p99 << ", measured " << rank(m, 0.5) << " " << rank(m, 0.99));
    CHECK(std::abs(f.p50 / rank(m, 0.50) - 1) <= 0.02);
    CHECK(std::abs(f.p99 / rank(m, 0.99) - 1) <= 0.02);
}

// Allocated tokens: each forecast is real allocations, so the check is Cassandra's balance rule
// (token_allocation_test's bound from 100 nodes on: max/mean <= 1 + 4 / tokens with one copy),
// weights as token counts, and the figure of a growth written out here step by step.
TEST_CASE("skew advisor: allocated tokens, forecast by growing the ring node by node", "[skew_advisor]") {
    using namespace skew_tests;
    const std::vector<double> hundred(100, 1.0);
    for (const std::size_t t : {4U, 16U}) {
        const auto f = keyplace::forecast_token_skew(hundred, t);
        CHECK(f.trials == keyplace::token_forecast_trials);
        CHECK(f.p50 >= 1.0);
        CHECK(f.p99 >= f.p50);
        CHECK(f.p99 <= 1 + 4.0 / static_cast<double>(t));
    }
    // 1 token a node: the allocator halves the largest range, so 100 nodes hold ranges of 1/64 and
    // 1/128 of the circle (28 and 72 of them): the busiest has 100/64 of its share.
    const auto one = keyplace::forecast_token_skew(hundred, 1, 1);
    CHECK(std::abs(one.p99 - 100.0 / 64.0) < 1e-9);
    // Weights become token counts: 10 nodes of weight 1 or 2 with 8 tokens a unit.
    std::vector<double> weights;
    for (std::size_t i = 0; i < 10; ++i) {
        weights.push_back(1.0 + static_cast<double>(i % 2));
    }
    std::vector<keyplace::token_holder> holders;
    std::vector<keyplace::node> nodes;
    std::vector<keyplace::compat::ring_point<std::uint64_t>> points;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        nodes.push_back({"node-" + std::to_string(i), weights[i]});
        auto tokens = keyplace::allocate_tokens(holders, nodes.back(), i % 2 == 0 ? 8 : 16, {.factor = 1}, 1);
        for (const auto p : tokens) {
            points.push_back({p, static_cast<std::uint32_t>(i)});
        }
        holders.push_back({nodes.back(), std::move(tokens)});
    }
    const auto circle =
        keyplace::token_ring::build(nodes, keyplace::compat::given_points<std::uint64_t>(std::move(points)));
    const auto shares = keyplace::ownership(circle).share;
    double worst = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        worst = std::max(worst, shares[i] / (weights[i] / 15.0));
    }
    CHECK(std::abs(keyplace::forecast_token_skew(weights, 8, 1).p99 - worst) < 1e-12);
    CHECK_THROWS_AS(keyplace::forecast_token_skew(hundred, 0), keyplace::error);
    CHECK_THROWS_AS(keyplace::forecast_token_skew(hundred, 16, 0), keyplace::error);
}

TEST_CASE("skew advisor: Maglev and partitions balance by count, the same for every membership", "[skew_advisor]") {
    using namespace skew_tests;
    for (const std::size_t n : {3U, 10U, 100U, 1000U}) {
        const std::vector<double> weights(n, 1.0);
        const auto f = keyplace::forecast_maglev_skew(weights, 65537);
        CHECK(f.exact);
        // Entries dealt in turns: the busiest node has ceil(M / N) of them.
        const double dealt = std::ceil(65537.0 / static_cast<double>(n)) * static_cast<double>(n) / 65537.0;
        CHECK(std::abs(f.p99 - dealt) < 1e-12);
        const auto m = measured(weights, 20, [](const auto& nodes) { return keyplace::maglev::build(nodes); });
        // Every membership alike, up to the residues' measures (slot k holds floor((2^64 - 1 - k) / M) + 1
        // points: they differ by one point in 2^64 / M).
        CHECK(std::abs(m.front() - f.p99) < 1e-12);
        CHECK(std::abs(m.back() - f.p99) < 1e-12);
        const auto p = keyplace::forecast_partitions_skew(weights, 1024);
        const double quota = std::ceil(1024.0 / static_cast<double>(n)) * static_cast<double>(n) / 1024.0;
        CHECK(std::abs(p.p99 - quota) < 1e-12);
        const auto mp = measured(weights, 20, [](const auto& nodes) {
            return keyplace::partitions::build(nodes, {.partitions = 1024, .replicas = 1});
        });
        CHECK(std::abs(mp.front() - p.p99) < 1e-12);
        CHECK(std::abs(mp.back() - p.p99) < 1e-12);
    }
}

TEST_CASE("skew advisor: the least vnodes, table size and partition count meeting a target, checked by building",
          "[skew_advisor]") {
    using namespace skew_tests;
    // Ring, 30 nodes, p99 <= 1.20: 200 real rings at the advised vnodes meet it (within the 2% of
    // the forecast), and 10% fewer vnodes do not, by the forecast.
    const std::vector<double> thirty(30, 1.0);
    const auto ring_advice = keyplace::advise_skew("ring", thirty, 1.20);
    CHECK(ring_advice.parameter == "vnodes");
    CHECK(ring_advice.forecast.p99 <= 1.20);
    CHECK(keyplace::forecast_ring_skew(thirty, ring_advice.value * 9 / 10).p99 > 1.20);
    const auto m = measured(thirty, 200, [&](const auto& nodes) {
        return keyplace::ring::build(nodes, {.vnodes = static_cast<std::uint32_t>(ring_advice.value)});
    });
    CHECK(rank(m, 0.99) <= 1.20 * 1.02);
    CHECK(ring_advice.memory_bytes >= 12 * 30 * ring_advice.value);  // 12 bytes a point at least

    // Maglev, 300 nodes, <= 1.001: the least prime M >= 100 * 300 with ceil(M / 300) * 300 / M <= 1.001.
    const std::vector<double> three_hundred(300, 1.0);
    const auto maglev_advice = keyplace::advise_skew("maglev", three_hundred, 1.001);
    std::uint64_t want = 30000;
    const auto prime = [](std::uint64_t x) {
        for (std::uint64_t d = 2; d * d <= x; ++d) {
            if (x % d == 0) {
                return false;
            }
        }
        return x > 1;
    };
    while (!prime(want) || static_cast<double>((want + 299) / 300) * 300.0 / static_cast<double>(want) > 1.001) {
        ++want;
    }
    CHECK(maglev_advice.value == want);
    CHECK(maglev_advice.forecast.p99 <= 1.001);
    CHECK(maglev_advice.value > 30000);
    CHECK(maglev_advice.memory_bytes >= want);

    // Partitions, 10 nodes, <= 1.05: 128 (13 of 12.8 a node: 1.016); 64 gives 7 of 6.4, 1.094.
    const auto parts = keyplace::advise_skew("partitions", std::vector<double>(10, 1.0), 1.05);
    CHECK(parts.value == 128);
    CHECK(std::abs(parts.forecast.p99 - 13.0 / 12.8) < 1e-12);

    const std::vector<double> hundred(100, 1.0);
    // Allocated tokens, 100 nodes, <= 1.10: 4 tokens (p99 1.099 over five growths); 3 miss.
    const auto token_advice = keyplace::advise_skew("tokens", hundred, 1.10);
    CHECK(token_advice.parameter == "tokens");
    CHECK(token_advice.forecast.p99 <= 1.10);
    CHECK(keyplace::forecast_token_skew(hundred, token_advice.value - 1).p99 > 1.10);
    CHECK(token_advice.memory_bytes >= 12 * 100 * token_advice.value);
}

TEST_CASE("skew advisor: bad targets, strategies and weights are refused, naming the value", "[skew_advisor]") {
    const std::vector<double> four(4, 1.0);
    const auto refused = [](std::string_view strategy, std::vector<double> weights, double target, keyplace::errc code,
                            const std::string& message) {
        keyplace::error_info err;
        CHECK_FALSE(keyplace::try_advise_skew(strategy, weights, target, err).has_value());
        CHECK(err.code() == code);
        CHECK(err.message() == message);
    };
    refused("ring", four, 0.9, keyplace::errc::invalid_argument, "skew target 0.900000 is below 1 (1 is perfect balance)");
    refused("ring", four, std::nan(""), keyplace::errc::invalid_argument,
            "skew target nan is below 1 (1 is perfect balance)");
    refused("shelf", four, 1.1, keyplace::errc::invalid_argument,
            "skew advisor: strategy 'shelf' is not ring, maglev, partitions or tokens");
    refused("ring", {}, 1.1, keyplace::errc::invalid_argument, "skew forecast: no nodes");
    refused("ring", {1.0, 0.0}, 1.1, keyplace::errc::invalid_weight,
            "skew forecast: node 1's weight 0.000000 is not finite and > 0");
    refused("maglev", four, 1.0, keyplace::errc::invalid_argument,
            "skew target 1.000000 is out of reach: no prime Maglev table of at most 16777216 entries meets it");
    // Weights the search cannot serve are refused, not thrown or overflowed: a node so light it
    // needs more than the cap for one point or token, a node so heavy one unit exceeds 65,536.
    refused("ring", {1.0, 1e-300}, 1.1, keyplace::errc::invalid_argument,
            "skew target 1.100000 is out of reach: the lightest node needs more than 65536 vnodes a unit of weight for one point");
    refused("tokens", {1.0, 1e-4}, 1.1, keyplace::errc::invalid_argument,
            "skew target 1.100000 is out of reach: the lightest node needs 5000.000000 tokens a unit of weight for one "
            "token, above the 1024 the heaviest node allows (at most 65536 tokens a node, 1,024 a unit)");
    refused("tokens", {70000.0}, 1.1, keyplace::errc::invalid_argument,
            "skew target 1.100000 is out of reach: the lightest node needs 1.000000 tokens a unit of weight for one token, "
            "above the 0 the heaviest node allows (at most 65536 tokens a node, 1,024 a unit)");
    // Two nodes, one of a quarter weight, a loose target: the search starts at 2 tokens a unit
    // (the light node's first token), never below.
    const auto quarter = keyplace::advise_skew("tokens", std::vector<double>{1.0, 0.25}, 5.0);
    CHECK(quarter.value == 2);
    CHECK_THROWS_AS(keyplace::forecast_ring_skew(std::vector<double>{1e300}, 160), keyplace::error);
    // Three nodes never split the circle evenly by halving ranges: 1,024 tokens still miss 1.
    keyplace::error_info err;
    CHECK_FALSE(keyplace::try_advise_skew("tokens", std::vector<double>(3, 1.0), 1.0, err).has_value());
    CHECK(err.code() == keyplace::errc::invalid_argument);
    CHECK(err.message().starts_with("skew target 1.000000 is out of reach: 1024 tokens a unit of weight forecast p99 1.0"));
    CHECK_THROWS_AS(keyplace::forecast_ring_skew(four, 160, 0), keyplace::error);
    CHECK_THROWS_AS(keyplace::forecast_ring_skew(std::vector<double>{1.0, 0.001}, 160), keyplace::error);  // no point
}
