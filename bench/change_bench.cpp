// Build, derive, churn and scale: build time and bytes per point or entry as the membership
// grows, with()/without() against a full rebuild, and movement and balance as counters
// (moved / minimum, max/mean load) for every strategy on one join.
#include <keyplace/keyplace.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

auto nodes_of(std::size_t n) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> list;
    for (std::size_t i = 0; i < n; ++i) {
        list.push_back({"node-" + std::to_string(i)});
    }
    return list;
}

auto random_points(std::size_t n) -> std::vector<std::uint64_t> {
    std::mt19937_64 gen(9);
    std::vector<std::uint64_t> p(n);
    for (auto& x : p) {
        x = gen();
    }
    return p;
}

// Ring build at N nodes x V points, with bytes per point as a counter.
void ring_build_scale(benchmark::State& state) {
    const auto nodes = nodes_of(static_cast<std::size_t>(state.range(0)));
    const auto v = static_cast<std::uint32_t>(state.range(1));
    std::size_t bytes = 0;
    std::size_t points = 0;
    for (auto _ : state) {
        const auto r = keyplace::ring::build(nodes, {.vnodes = v});
        bytes = r.memory_bytes();
        points = r.points().size();
        benchmark::DoNotOptimize(r.points().data());
    }
    state.counters["points"] = static_cast<double>(points);
    state.counters["bytes_per_point"] = static_cast<double>(bytes) / static_cast<double>(points);
}

// with(node) against building the grown membership from scratch.
void ring_with(benchmark::State& state) {
    const auto nodes = nodes_of(static_cast<std::size_t>(state.range(0)));
    const auto r = keyplace::ring::build(nodes);
    for (auto _ : state) {
        benchmark::DoNotOptimize(r.with({"joiner"}).points().data());
    }
    state.counters["points"] = static_cast<double>(r.points().size());
}
void ring_without(benchmark::State& state) {
    const auto r = keyplace::ring::build(nodes_of(static_cast<std::size_t>(state.range(0))));
    for (auto _ : state) {
        benchmark::DoNotOptimize(r.without("node-1").points().data());
    }
}
void ring_rebuild(benchmark::State& state) {
    auto nodes = nodes_of(static_cast<std::size_t>(state.range(0)));
    nodes.push_back({"joiner"});
    for (auto _ : state) {
        benchmark::DoNotOptimize(keyplace::ring::build(nodes).points().data());
    }
}

// Lookups at scale: a ring of N x 256 points, rendezvous and jump at N nodes, Maglev at N
// nodes with M = 1000003 (at least 100 x N up to 10^4 nodes).
void ring_pick_scale(benchmark::State& state) {
    const auto r = keyplace::ring::build(nodes_of(static_cast<std::size_t>(state.range(0))), {.vnodes = 256});
    const auto pts = random_points(1 << 16);
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(r.pick(pts[i++ & 0xffff]));
    }
}
void rendezvous_pick_scale(benchmark::State& state) {
    const auto r = keyplace::rendezvous::build(nodes_of(static_cast<std::size_t>(state.range(0))));
    const auto pts = random_points(1 << 16);
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(r.pick(pts[i++ & 0xffff]));
    }
}
void maglev_build_scale(benchmark::State& state) {
    const auto nodes = nodes_of(static_cast<std::size_t>(state.range(0)));
    std::size_t bytes = 0;
    for (auto _ : state) {
        const auto g = keyplace::maglev::build(nodes, {.table_size = 1000003});
        bytes = g.memory_bytes();
        benchmark::DoNotOptimize(g.size());
    }
    state.counters["bytes_per_entry"] = static_cast<double>(bytes) / 1000003.0;
}
void maglev_pick_scale(benchmark::State& state) {
    const auto g = keyplace::maglev::build(nodes_of(static_cast<std::size_t>(state.range(0))), {.table_size = 1000003});
    const auto pts = random_points(1 << 16);
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(g.pick(pts[i++ & 0xffff]));
    }
}

// Churn and balance as counters: one join of 100 -> 101 nodes, measured exactly where the
// strategy allows (ring, Maglev) and on 2^17 points otherwise; the timing is the analysis.
template <class S>
void churn(benchmark::State& state, const S& before, const S& after) {
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
}
void churn_ring(benchmark::State& s) { churn(s, keyplace::ring::build(nodes_of(100)), keyplace::ring::build(nodes_of(101))); }
void churn_rendezvous(benchmark::State& s) {
    churn(s, keyplace::rendezvous::build(nodes_of(100)), keyplace::rendezvous::build(nodes_of(101)));
}
void churn_jump(benchmark::State& s) { churn(s, keyplace::jump::build(nodes_of(100)), keyplace::jump::build(nodes_of(101))); }
void churn_maglev(benchmark::State& s) {
    churn(s, keyplace::maglev::build(nodes_of(100)), keyplace::maglev::build(nodes_of(101)));
}
void churn_modulo(benchmark::State& s) {
    churn(s, keyplace::modulo::build(nodes_of(100)), keyplace::modulo::build(nodes_of(101)));
}

}  // namespace

BENCHMARK(ring_build_scale)->Args({10, 256})->Args({100, 256})->Args({1000, 256})->Args({10000, 256})->Unit(benchmark::kMillisecond);
BENCHMARK(ring_with)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(ring_without)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(ring_rebuild)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(ring_pick_scale)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(rendezvous_pick_scale)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(maglev_build_scale)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(maglev_pick_scale)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(churn_ring)->Unit(benchmark::kMillisecond);
BENCHMARK(churn_rendezvous)->Unit(benchmark::kMillisecond);
BENCHMARK(churn_jump)->Unit(benchmark::kMillisecond);
BENCHMARK(churn_maglev)->Unit(benchmark::kMillisecond);
BENCHMARK(churn_modulo)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
