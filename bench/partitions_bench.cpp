// Fixed partitions (partitions.hpp): the claim of a fresh table and the derivations (with,
// without, reweighted) at Q = 1024 and 65536 partitions over 100 and 1000 nodes, beside a ring
// rebuild of the same membership in the same process; moved slots against the minimum as
// counters; and the lookup beside hashing alone.
#include "bench_support.hpp"

#include <cstdint>
#include <string>

namespace {

using namespace bench;

// Arguments: nodes, partitions.
auto config_of(const benchmark::State& state, std::uint32_t replicas = 1) -> keyplace::partitions_config {
    return {.partitions = static_cast<std::uint32_t>(state.range(1)), .replicas = replicas};
}

void partitions_build(benchmark::State& state) {
    const auto members = nodes(arg(state, 0), {.weighted = true});
    std::size_t bytes = 0;
    for (auto _ : state) {
        const auto s = partitions_of(members, config_of(state));
        bytes = s.memory_bytes();
        benchmark::DoNotOptimize(s.holders());
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}

// A derivation, timed, with the slots it moved against the minimum (Σ max(0, have - quota)).
template <class Derive>
void derivation(benchmark::State& state, std::uint32_t replicas, Derive derive) {
    const auto before = partitions_of(nodes(arg(state, 0), {.weighted = true}), config_of(state, replicas));
    for (auto _ : state) {
        benchmark::DoNotOptimize(derive(before).holders());
    }
    const auto plan = keyplace::partition_moves(before, derive(before));
    state.counters["moved"] = static_cast<double>(plan.moved);
    state.counters["moved_over_min"] =
        plan.minimum > 0 ? static_cast<double>(plan.moved) / static_cast<double>(plan.minimum) : 0;
}
void partitions_with(benchmark::State& state) {
    derivation(state, 1, [](const keyplace::partitions& s) { return s.with({"joiner", 2.0}); });
}
void partitions_without(benchmark::State& state) {
    derivation(state, 1, [](const keyplace::partitions& s) { return s.without("node-1"); });
}
void partitions_reweighted(benchmark::State& state) {
    derivation(state, 1, [](const keyplace::partitions& s) { return s.reweighted("node-1", 4.0); });
}
void partitions3_with(benchmark::State& state) {
    derivation(state, 3, [](const keyplace::partitions& s) { return s.with({"joiner", 2.0}); });
}
void partitions3_without(benchmark::State& state) {
    derivation(state, 3, [](const keyplace::partitions& s) { return s.without("node-1"); });
}

// The baseline: a ring of the grown membership built from scratch (160 points a node).
void ring_rebuild(benchmark::State& state) {
    auto members = nodes(arg(state, 0), {.weighted = true});
    members.push_back({"joiner", 2.0});
    for (auto _ : state) {
        benchmark::DoNotOptimize(ring_of(members).points().data());
    }
}

void sizes(benchmark::internal::Benchmark* b) {
    for (const int n : {100, 1000}) {
        for (const int q : {1024, 65536}) {
            b->Args({n, q});
        }
    }
}

}  // namespace

auto main(int argc, char** argv) -> int {
    using benchmark::RegisterBenchmark;
    using benchmark::kMicrosecond;
    using benchmark::kMillisecond;
    RegisterBenchmark("partitions_build", partitions_build)->Apply(sizes)->Unit(kMillisecond);
    RegisterBenchmark("partitions_with", partitions_with)->Apply(sizes)->Unit(kMicrosecond);
    RegisterBenchmark("partitions_without", partitions_without)->Apply(sizes)->Unit(kMicrosecond);
    RegisterBenchmark("partitions_reweighted", partitions_reweighted)->Apply(sizes)->Unit(kMicrosecond);
    RegisterBenchmark("partitions3_with", partitions3_with)->Apply(sizes)->Unit(kMicrosecond);
    RegisterBenchmark("partitions3_without", partitions3_without)->Apply(sizes)->Unit(kMicrosecond);
    RegisterBenchmark("ring_rebuild", ring_rebuild)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    // Lookups: hashing alone (the floor), then the table lookup on prepared points, and both.
    hash_benchmark("hash_only");
    pick_benchmark("partitions_pick", [](auto& s) { return partitions_of(nodes(arg(s, 0)), config_of(s)); })->Apply(sizes);
    locate_benchmark("partitions_locate", [](auto& s) { return partitions_of(nodes(arg(s, 0)), config_of(s)); })->Apply(sizes);
    return run(argc, argv);
}
