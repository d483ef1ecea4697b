// Token allocation (token_allocation.hpp) against random tokens: a cluster grown node by node to
// 100 nodes, balance of plain and replicated ownership (exact, over the ring's arcs), replica
// co-ownership, and the time per allocation. `--table` prints max/mean against tokens per node
// instead (the README chart).
#include "bench_support.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/token_allocation.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using keyplace::token_holder;
using keyplace::token_ring;

constexpr std::size_t cluster = 100;

auto ring_of(const std::vector<token_holder>& holders) -> std::shared_ptr<const token_ring> {
    std::vector<keyplace::node> members;
    std::vector<keyplace::compat::ring_point<std::uint64_t>> points;
    for (std::size_t i = 0; i < holders.size(); ++i) {
        members.push_back(holders[i].member);
        for (const auto t : holders[i].tokens) {
            points.push_back({t, static_cast<std::uint32_t>(i)});
        }
    }
    return std::make_shared<const token_ring>(
        token_ring::build(members, keyplace::compat::given_points<std::uint64_t>(std::move(points))));
}

// Grows `cluster` nodes with `tokens` each: allocated for RF `rf` (node groups), or random
// (SplitMix64 from a fixed seed, as a node picking random tokens would).
auto grow(std::size_t tokens, std::uint32_t rf, bool allocated, std::uint64_t seed = 0)
    -> std::vector<token_holder> {
    std::vector<token_holder> holders;
    std::uint64_t state = 0x746f6b656e73ULL + seed;  // "tokens"
    for (std::size_t i = 0; i < cluster; ++i) {
        keyplace::node n{"node-" + std::to_string(i)};
        std::vector<std::uint64_t> chosen;
        if (allocated) {
            chosen = i == 0 ? keyplace::allocate_tokens(holders, n, tokens, {rf})
                            : keyplace::allocate_tokens(*ring_of(holders), n, tokens, {rf});
        } else {
            for (std::size_t k = 0; k < tokens; ++k) {
                chosen.push_back(keyplace::detail::splitmix64(state));
            }
        }
        holders.push_back({n, std::move(chosen)});
    }
    return holders;
}

// Largest over mean of each node's measure (plain: shares; replicated: RF copies per arc).
auto max_over_mean(const std::vector<keyplace::detail::u128>& m) -> double {
    double total = 0;
    double top = 0;
    for (const auto& x : m) {
        const double v = keyplace::detail::to_double(x);
        total += v;
        top = std::max(top, v);
    }
    return top / (total / static_cast<double>(m.size()));
}

auto replicated_max_over_mean(const std::shared_ptr<const token_ring>& ring, std::uint32_t rf) -> double {
    const auto placer = keyplace::replica_placer<token_ring>::build(ring, keyplace::replica_policy{rf});
    return max_over_mean(keyplace::replicated_measure(placer));
}

// The whole growth is timed; allocations_per_s is inverted into seconds per allocation. The grown
// tokens are checked against an untimed growth (allocation is deterministic).
void token_growth(benchmark::State& state) {
    const auto rf = static_cast<std::uint32_t>(state.range(0));
    const bool allocated = state.range(1) != 0;
    const auto expected = grow(16, rf, allocated);
    std::vector<token_holder> grown;
    for (auto _ : state) {
        grown = grow(16, rf, allocated);
        benchmark::DoNotOptimize(grown.data());
    }
    for (std::size_t i = 0; i < grown.size(); ++i) {
        if (grown[i].tokens != expected[i].tokens) {
            bench::detail::fail(state, "token_growth", "a timed growth chose other tokens than the untimed one");
            return;
        }
    }
    const auto ring = ring_of(grown);
    state.counters["plain_max_over_mean"] = max_over_mean(keyplace::region_measure(*ring));
    state.counters["replicated_max_over_mean"] = replicated_max_over_mean(ring, rf);
    state.counters["time_per_allocation"] = benchmark::Counter(static_cast<double>(cluster),
                                                         benchmark::Counter::kIsIterationInvariantRate |
                                                             benchmark::Counter::kInvert);
}

// Co-ownership under RF 3 (node spread): node pairs sharing a replica set, and copysets.
void token_coownership(benchmark::State& state) {
    const auto tokens = static_cast<std::size_t>(state.range(0));
    const bool allocated = state.range(1) != 0;
    const auto ring = ring_of(grow(tokens, 3, allocated));
    const auto placer = keyplace::replica_placer<token_ring>::build(ring, keyplace::replica_policy{3});
    keyplace::coownership_report r;
    for (auto _ : state) {
        r = keyplace::coownership(placer);
        benchmark::DoNotOptimize(r.pairs);
    }
    state.counters["pairs"] = static_cast<double>(r.pairs);
    state.counters["pair_fraction"] = r.pair_fraction;
    state.counters["copysets"] = static_cast<double>(r.copysets);
    state.counters["replicated_max_over_mean"] = replicated_max_over_mean(ring, 3);
}

// Max/mean of plain ownership (tokens allocated for RF 1) and of replicated ownership (RF 3,
// allocated for RF 3) against tokens per node, at 100 nodes: allocated, and random as the mean
// over 10 seeds (one draw is noisy).
auto print_table() -> int {
    constexpr std::uint64_t seeds = 10;
    std::printf("tokens  plain_random  plain_allocated  rf3_random  rf3_allocated\n");
    for (std::size_t tokens = 1; tokens <= 256; tokens *= 2) {
        double plain_random = 0;
        double rf3_random = 0;
        for (std::uint64_t seed = 0; seed < seeds; ++seed) {
            const auto random_ring = ring_of(grow(tokens, 1, false, seed));
            plain_random += max_over_mean(keyplace::region_measure(*random_ring)) / seeds;
            rf3_random += replicated_max_over_mean(random_ring, 3) / seeds;
        }
        const auto rf1 = ring_of(grow(tokens, 1, true));
        const auto rf3 = ring_of(grow(tokens, 3, true));
        std::printf("%6zu  %12.4f  %15.4f  %10.4f  %13.4f\n", tokens, plain_random,
                    max_over_mean(keyplace::region_measure(*rf1)), rf3_random, replicated_max_over_mean(rf3, 3));
    }
    return 0;
}

}  // namespace

auto main(int argc, char** argv) -> int {
    if (argc > 1 && std::strcmp(argv[1], "--table") == 0) {
        return print_table();
    }
    // Arguments: RF, allocated (1) or random (0).
    benchmark::RegisterBenchmark("token_growth_100x16", token_growth)
        ->ArgsProduct({{1, 3}, {0, 1}})
        ->ArgNames({"rf", "allocated"})
        ->Unit(benchmark::kMillisecond);
    // Arguments: tokens per node, allocated (1) or random (0).
    benchmark::RegisterBenchmark("token_coownership_rf3", token_coownership)
        ->Args({16, 1})
        ->Args({16, 0})
        ->Args({256, 0})
        ->ArgNames({"tokens", "allocated"})
        ->Unit(benchmark::kMillisecond);
    return bench::run(argc, argv);
}
