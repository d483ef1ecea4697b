// Lookup cost of the ring against its baselines in the same process: hashing the key alone
// (the floor), std::lower_bound over the same sorted points, and a std::map ring as services
// commonly hand-write it. Every baseline must agree with the ring (checked before timing).
#include <keyplace/keyplace.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr std::size_t key_count = 1 << 16;  // a power of two: index with a mask

auto make_ring(std::size_t nodes, std::uint32_t vnodes) -> keyplace::ring {
    std::vector<keyplace::node> list;
    for (std::size_t i = 0; i < nodes; ++i) {
        list.push_back({"node-" + std::to_string(i)});
    }
    return keyplace::ring::build(list, {.vnodes = vnodes});
}

// 16-byte keys, as the performance targets specify.
auto make_keys() -> std::vector<std::string> {
    std::mt19937_64 gen(1);
    std::vector<std::string> keys(key_count);
    for (auto& k : keys) {
        char buf[17];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(gen()));
        k.assign(buf, 16);
    }
    return keys;
}

auto make_points(const std::vector<std::string>& keys) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> points;
    for (const auto& k : keys) {
        points.push_back(keyplace::xxh3{}(k));
    }
    return points;
}

auto map_ring(const keyplace::ring& r) -> std::map<std::uint64_t, std::uint32_t> {
    std::map<std::uint64_t, std::uint32_t> m;
    for (std::size_t i = 0; i < r.points().size(); ++i) {
        m.emplace(r.points()[i], r.owners()[i].value);  // first of equal points wins, as in the ring
    }
    return m;
}

auto map_pick(const std::map<std::uint64_t, std::uint32_t>& m, std::uint64_t p) -> std::uint32_t {
    auto it = m.lower_bound(p);
    return it == m.end() ? m.begin()->second : it->second;
}

auto vector_pick(const keyplace::ring& r, std::uint64_t p) -> std::uint32_t {
    const auto pts = r.points();
    auto it = std::lower_bound(pts.begin(), pts.end(), p);
    const auto i = it == pts.end() ? 0 : static_cast<std::size_t>(it - pts.begin());
    return r.owners()[i].value;
}

const std::vector<std::string>& keys() {
    static const auto k = make_keys();
    return k;
}
const std::vector<std::uint64_t>& points() {
    static const auto p = make_points(keys());
    return p;
}

void verify(const keyplace::ring& r, const std::map<std::uint64_t, std::uint32_t>& m) {
    for (const auto p : points()) {
        const auto want = r.pick(p).value;
        if (map_pick(m, p) != want || vector_pick(r, p) != want) {
            std::fprintf(stderr, "baseline disagrees with the ring at point %llu\n",
                         static_cast<unsigned long long>(p));
            std::abort();
        }
    }
}

void hash_only(benchmark::State& state) {
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(keyplace::xxh3{}(keys()[i++ & (key_count - 1)]));
    }
}

void ring_pick(benchmark::State& state) {
    const auto r = make_ring(static_cast<std::size_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)));
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(r.pick(points()[i++ & (key_count - 1)]));
    }
}

void ring_locate(benchmark::State& state) {
    const auto r = make_ring(static_cast<std::size_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)));
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(&keyplace::locate(r, keys()[i++ & (key_count - 1)]));
    }
}

void lower_bound_pick(benchmark::State& state) {
    const auto r = make_ring(static_cast<std::size_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)));
    verify(r, map_ring(r));
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(vector_pick(r, points()[i++ & (key_count - 1)]));
    }
}

void map_ring_pick(benchmark::State& state) {
    const auto r = make_ring(static_cast<std::size_t>(state.range(0)), static_cast<std::uint32_t>(state.range(1)));
    const auto m = map_ring(r);
    verify(r, m);
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(map_pick(m, points()[i++ & (key_count - 1)]));
    }
}

void ring_args(benchmark::internal::Benchmark* b) {
    for (const int nodes : {10, 100, 1000}) {
        for (const int vnodes : {16, 160, 256}) {
            b->Args({nodes, vnodes});
        }
    }
}

}  // namespace

BENCHMARK(hash_only);
BENCHMARK(ring_pick)->Apply(ring_args);
BENCHMARK(ring_locate)->Apply(ring_args);
BENCHMARK(lower_bound_pick)->Apply(ring_args);
BENCHMARK(map_ring_pick)->Apply(ring_args);

BENCHMARK_MAIN();
