// Runs the shared conformance suite (conformance.hpp) on every strategy.
#include "conformance.hpp"

#include <keyplace/keyplace.hpp>

#include <cmath>
#include <span>

using namespace keyplace_test;

namespace {

// The ring's balance bound: a node's share over the mean is about Gamma(v, 1/v) with sd
// 1/sqrt(v); the largest of 10 nodes sits near 1 + 1.5 sd. Allow 5 sd plus sampling noise.
auto ring_subject(std::uint32_t vnodes) -> conformance_subject<keyplace::ring> {
    return {
        .build = [vnodes](std::span<const keyplace::node> n) { return keyplace::ring::build(n, {.vnodes = vnodes}); },
        .share = [](const keyplace::ring& r, keyplace::node_index i) { return keyplace::ownership(r).share[i.value]; },
        .balance_bound = 1.0 + 5.0 / std::sqrt(static_cast<double>(vnodes)) + 0.03,
    };
}

// Strategies whose shares are exact (rendezvous: w/Σw; jump: 1/N; Maglev: entries/M) are
// bounded by sampling noise alone: sd of a node's count is about 0.67% of the mean at 10
// nodes and 2*10^5 keys; the largest of 10 sits near +1.5 sd. Allow 5 sd.
constexpr double sampling_bound = 1.0 + 5 * 0.0067;

auto node_weight_share(std::span<const keyplace::node> nodes, keyplace::node_index i) -> double {
    double total = 0;
    for (const auto& n : nodes) {
        total += n.weight;
    }
    return nodes[i.value].weight / total;
}

}  // namespace

TEST_CASE("conformance: rendezvous", "[conformance][rendezvous]") {
    run_conformance(conformance_subject<keyplace::rendezvous>{
        .build = [](std::span<const keyplace::node> n) { return keyplace::rendezvous::build(n); },
        .share = [](const keyplace::rendezvous& r, keyplace::node_index i) { return node_weight_share(r.nodes(), i); },
        .balance_bound = sampling_bound,
    });
}

template <class Jump>
auto jump_subject() -> conformance_subject<Jump> {
    return {
        .build = [](std::span<const keyplace::node> n) { return Jump::build(n); },
        .share = [](const Jump& j, keyplace::node_index) { return 1.0 / static_cast<double>(j.size()); },
        .balance_bound = sampling_bound,
        .leaver = "node-9",  // only the last bucket can leave
        .order_independent = false,
        .weighted = false,
    };
}

TEST_CASE("conformance: jump", "[conformance][jump]") { run_conformance(jump_subject<keyplace::jump>()); }
TEST_CASE("conformance: jump (Guava form)", "[conformance][jump]") {
    run_conformance(jump_subject<keyplace::jump_guava>());
}

TEST_CASE("conformance: maglev", "[conformance][maglev]") {
    run_conformance(conformance_subject<keyplace::maglev>{
        .build = [](std::span<const keyplace::node> n) { return keyplace::maglev::build(n); },
        .share = [](const keyplace::maglev& g, keyplace::node_index i) { return keyplace::ownership(g).share[i.value]; },
        .balance_bound = sampling_bound,
        .movement_factor = 2.0,
    });
}

TEST_CASE("conformance: ring, 160 vnodes", "[conformance][ring]") { run_conformance(ring_subject(160)); }
TEST_CASE("conformance: ring, 1024 vnodes", "[conformance][ring]") { run_conformance(ring_subject(1024)); }
TEST_CASE("conformance: ring, 40 vnodes", "[conformance][ring]") { run_conformance(ring_subject(40)); }
