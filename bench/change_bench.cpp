// Build, derive, churn and scale: build time and bytes per point or entry as the membership
// grows, with()/without() against a full rebuild, and movement and balance as counters
// (moved / minimum, max/mean load) for every strategy on one join.
#include "bench_support.hpp"

#include <sys/resource.h>

#include <cstdint>
#include <string>

namespace {

using namespace bench;

// Ring build at N nodes x V points, with bytes per point as a counter.
void ring_build_scale(benchmark::State& state) {
    const auto members = nodes(arg(state, 0));
    const auto v = static_cast<std::uint32_t>(state.range(1));
    std::size_t bytes = 0;
    std::size_t points = 0;
    for (auto _ : state) {
        const auto r = ring_of(members, {.vnodes = v});
        bytes = r.memory_bytes();
        points = r.points().size();
        benchmark::DoNotOptimize(r.points().data());
    }
    state.counters["points"] = static_cast<double>(points);
    state.counters["bytes_per_point"] = static_cast<double>(bytes) / static_cast<double>(points);
}

// Minor page faults of this process so far: a derivation's arrays are fresh memory, and where
// the allocator returns freed memory to the system each one faults its pages in again.
auto minor_faults() -> double {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_minflt);
}

// Runs body once an iteration, with the page faults per iteration as a counter.
template <class Body>
void with_faults(benchmark::State& state, Body body) {
    const double before = minor_faults();
    for (auto _ : state) {
        body();
    }
    state.counters["faults"] = benchmark::Counter((minor_faults() - before) / static_cast<double>(state.iterations()));
}

// with(node) against building the grown membership from scratch, at 160 vnodes (the default)
// or 256.
template <std::uint32_t Vnodes>
void ring_with(benchmark::State& state) {
    const auto r = ring_of(nodes(arg(state)), {.vnodes = Vnodes});
    with_faults(state, [&] { benchmark::DoNotOptimize(r.with({"joiner"}).points().data()); });
    state.counters["points"] = static_cast<double>(r.points().size());
}
template <std::uint32_t Vnodes>
void ring_without(benchmark::State& state) {
    const auto r = ring_of(nodes(arg(state)), {.vnodes = Vnodes});
    with_faults(state, [&] { benchmark::DoNotOptimize(r.without("node-1").points().data()); });
}
template <std::uint32_t Vnodes>
void ring_rebuild(benchmark::State& state) {
    auto members = nodes(arg(state));
    members.push_back({"joiner"});
    with_faults(state, [&] { benchmark::DoNotOptimize(ring_of(members, {.vnodes = Vnodes}).points().data()); });
}

void maglev_build_scale(benchmark::State& state) {
    const auto members = nodes(arg(state));
    std::size_t bytes = 0;
    for (auto _ : state) {
        const auto g = maglev_of(members, {.table_size = 1000003});
        bytes = g.memory_bytes();
        benchmark::DoNotOptimize(g.size());
    }
    state.counters["bytes_per_entry"] = static_cast<double>(bytes) / 1000003.0;
}

// Churn and balance as counters: one join of 100 -> 101 nodes, measured exactly where the
// strategy allows (ring, Maglev) and on 2^17 points otherwise; the timing is the analysis.
// make(n) builds the strategy over n nodes.
template <class Make>
auto churn_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [make](benchmark::State& state) {
        const auto before = make(100);
        const auto after = make(101);
        keyplace::movement_report r;
        for (auto _ : state) {
            r = keyplace::movement(before, after);
            benchmark::DoNotOptimize(r.moved);
        }
        const auto balance = keyplace::load(before, keyplace::analysis_sample());
        state.counters["moved"] = r.moved;
        state.counters["minimum"] = r.minimum;
        state.counters["moved_over_min"] = r.minimum > 0 ? r.moved / r.minimum : 0;
        state.counters["violations"] = r.violations;
        state.counters["max_over_mean"] = balance.max_over_mean;
    })->Unit(benchmark::kMillisecond);
}

}  // namespace

auto main(int argc, char** argv) -> int {
    using benchmark::RegisterBenchmark;
    using benchmark::kMicrosecond;
    using benchmark::kMillisecond;
    RegisterBenchmark("ring_build_scale", ring_build_scale)->Args({10, 256})->Args({100, 256})->Args({1000, 256})->Args({10000, 256})->Unit(kMillisecond);
    // 625 nodes x 160 points: the 10^5 points of the with(node) >= 5x rebuild target.
    RegisterBenchmark("ring_with", ring_with<160>)->Arg(100)->Arg(625)->Arg(1000)->Arg(10000)->Unit(kMicrosecond);
    RegisterBenchmark("ring_without", ring_without<160>)->Arg(100)->Arg(625)->Arg(1000)->Arg(10000)->Unit(kMicrosecond);
    RegisterBenchmark("ring_rebuild", ring_rebuild<160>)->Arg(100)->Arg(625)->Arg(1000)->Arg(10000)->Unit(kMicrosecond);
    // 10^4 nodes x 256 points: the second size.
    RegisterBenchmark("ring_with_256", ring_with<256>)->Arg(10000)->Unit(kMicrosecond);
    RegisterBenchmark("ring_without_256", ring_without<256>)->Arg(10000)->Unit(kMicrosecond);
    RegisterBenchmark("ring_rebuild_256", ring_rebuild<256>)->Arg(10000)->Unit(kMicrosecond);
    // Lookups at scale: a ring of N x 256 points, rendezvous at N nodes, Maglev at N nodes with
    // M = 1000003 (at least 100 x N up to 10^4 nodes).
    pick_benchmark("ring_pick_scale", [](auto& s) { return ring_of(nodes(arg(s)), {.vnodes = 256}); })->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
    pick_benchmark("rendezvous_pick_scale", [](auto& s) { return rendezvous_of(nodes(arg(s))); })->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
    RegisterBenchmark("maglev_build_scale", maglev_build_scale)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000)->Unit(kMillisecond);
    pick_benchmark("maglev_pick_scale", [](auto& s) { return maglev_of(nodes(arg(s)), {.table_size = 1000003}); })->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
    // One line per strategy: how to build it over n nodes.
    churn_benchmark("churn_ring", [](std::size_t n) { return ring_of(nodes(n)); });
    churn_benchmark("churn_rendezvous", [](std::size_t n) { return rendezvous_of(nodes(n)); });
    churn_benchmark("churn_jump", [](std::size_t n) { return jump_of(nodes(n)); });
    churn_benchmark("churn_maglev", [](std::size_t n) { return maglev_of(nodes(n)); });
    churn_benchmark("churn_modulo", [](std::size_t n) { return modulo_of(nodes(n)); });
    return run(argc, argv);
}
