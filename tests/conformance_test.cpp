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
        .share = [](const keyplace::ring& r, keyplace::node_index i) { return keyplace::ownership(r)[i.value]; },
        .balance_bound = 1.0 + 5.0 / std::sqrt(static_cast<double>(vnodes)) + 0.03,
    };
}

}  // namespace

TEST_CASE("conformance: ring, 160 vnodes", "[conformance][ring]") { run_conformance(ring_subject(160)); }
TEST_CASE("conformance: ring, 1024 vnodes", "[conformance][ring]") { run_conformance(ring_subject(1024)); }
TEST_CASE("conformance: ring, 40 vnodes", "[conformance][ring]") { run_conformance(ring_subject(40)); }
