// Lookup cost of every strategy against the baselines in the same process: hashing the key
// alone (the floor), std::lower_bound over the ring's sorted points, and a std::map ring as
// services commonly hand-write it (both checked to agree with the ring before timing).
// Build cost of each strategy, and of sorting the same number of points, too.
#include <keyplace/keyplace.hpp>

#include <benchmark/benchmark.h>

#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
#include <libmemcached/memcached.h>
#endif

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

auto make_nodes(std::size_t n) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> list;
    for (std::size_t i = 0; i < n; ++i) {
        list.push_back({"node-" + std::to_string(i)});
    }
    return list;
}

auto make_ring(std::size_t nodes, std::uint32_t vnodes) -> keyplace::ring {
    return keyplace::ring::build(make_nodes(nodes), {.vnodes = vnodes});
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

template <class S>
void pick_loop(benchmark::State& state, const S& s) {
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(s.pick(points()[i++ & (key_count - 1)]));
    }
}

template <class S>
void locate_loop(benchmark::State& state, const S& s) {
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(&keyplace::locate(s, keys()[i++ & (key_count - 1)]));
    }
}

void rendezvous_pick(benchmark::State& state) {
    pick_loop(state, keyplace::rendezvous::build(make_nodes(static_cast<std::size_t>(state.range(0)))));
}
void jump_pick(benchmark::State& state) {
    pick_loop(state, keyplace::jump::build(make_nodes(static_cast<std::size_t>(state.range(0)))));
}
void maglev_pick(benchmark::State& state) {
    pick_loop(state, keyplace::maglev::build(make_nodes(100), {.table_size = static_cast<std::uint64_t>(state.range(0))}));
}
void maglev_locate(benchmark::State& state) {
    locate_loop(state, keyplace::maglev::build(make_nodes(100), {.table_size = static_cast<std::uint64_t>(state.range(0))}));
}

// Build cost: nodes x 160 points for the ring, the node list for rendezvous and jump, a
// 65537-entry table for Maglev; and std::sort of as many random 64-bit points as the ring has.
void ring_build(benchmark::State& state) {
    const auto nodes = make_nodes(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(keyplace::ring::build(nodes).points().data());
    }
    state.counters["points"] = static_cast<double>(nodes.size() * 160);
}
void sort_points(benchmark::State& state) {
    std::mt19937_64 gen(3);
    std::vector<std::uint64_t> random(static_cast<std::size_t>(state.range(0)) * 160);
    for (auto& p : random) {
        p = gen();
    }
    for (auto _ : state) {
        auto copy = random;
        std::sort(copy.begin(), copy.end());
        benchmark::DoNotOptimize(copy.data());
    }
}
void rendezvous_build(benchmark::State& state) {
    const auto nodes = make_nodes(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(keyplace::rendezvous::build(nodes).size());
    }
}
void maglev_build(benchmark::State& state) {
    const auto nodes = make_nodes(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(keyplace::maglev::build(nodes).size());
    }
}

// Our libmemcached-compatible weighted ketama (compat::build_ketama): the same servers and job
// as libmemcached_ketama_locate below, MD5 of the key included, in the same process.
auto ketama_servers(std::int64_t n) -> std::vector<keyplace::compat::ketama_server> {
    std::vector<keyplace::compat::ketama_server> servers;
    for (std::int64_t i = 0; i < n; ++i) {
        servers.push_back({"10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) + ":11211", 1});
    }
    return servers;
}
// locate() on a strategy build(n) makes, n = the benchmark's argument.
template <class Build>
void locate_keys(benchmark::State& state, Build build) {
    const auto s = build(state.range(0));
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(&keyplace::locate(s, keys()[i++ & (key_count - 1)]));
    }
}
void compat_ketama_locate(benchmark::State& state) {
    locate_keys(state, [](std::int64_t n) {
        return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libmemcached_weighted, ketama_servers(n));
    });
}
BENCHMARK(compat_ketama_locate)->Arg(10)->Arg(100);
// Envoy's ring hash at its default 1024 entries, and Envoy's Maglev at 65537, from a key.
void compat_envoy_ring_locate(benchmark::State& state) {
    locate_keys(state, [](std::int64_t n) {
        return keyplace::compat::envoy_ring_hash::build(make_nodes(static_cast<std::size_t>(n)));
    });
}
BENCHMARK(compat_envoy_ring_locate)->Arg(10)->Arg(100);
void compat_envoy_maglev_locate(benchmark::State& state) {
    locate_keys(state, [](std::int64_t n) { return keyplace::compat::envoy_maglev::build(make_nodes(static_cast<std::size_t>(n))); });
}
BENCHMARK(compat_envoy_maglev_locate)->Arg(10)->Arg(100);

#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
// libmemcached 1.1's own weighted ketama (MD5 of the key, 160 points per server): a real peer
// doing the same job, hashing included. Compare with ring_locate at the same node count.
void libmemcached_ketama_locate(benchmark::State& state) {
    memcached_st* memc = memcached_create(nullptr);
    for (std::int64_t i = 0; i < state.range(0); ++i) {
        const std::string host = "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
        memcached_server_add_with_weight(memc, host.c_str(), 11211, 1);
    }
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    std::size_t i = 0;
    for (auto _ : state) {
        const auto& k = keys()[i++ & (key_count - 1)];
        benchmark::DoNotOptimize(memcached_generate_hash(memc, k.data(), k.size()));
    }
    memcached_free(memc);
}
// libmemcached 1.1 asserts above 100 servers (MEMCACHED_CONTINUUM_SIZE).
BENCHMARK(libmemcached_ketama_locate)->Arg(10)->Arg(100);
#endif

}  // namespace

BENCHMARK(hash_only);
BENCHMARK(ring_pick)->Apply(ring_args);
BENCHMARK(ring_locate)->Apply(ring_args);
BENCHMARK(lower_bound_pick)->Apply(ring_args);
BENCHMARK(map_ring_pick)->Apply(ring_args);
BENCHMARK(rendezvous_pick)->Arg(10)->Arg(100)->Arg(1000);
BENCHMARK(jump_pick)->Arg(10)->Arg(1000)->Arg(100000)->Arg(1000000);
BENCHMARK(maglev_pick)->Arg(65537)->Arg(655373);
BENCHMARK(maglev_locate)->Arg(65537)->Arg(655373);
BENCHMARK(ring_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(sort_points)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(rendezvous_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(maglev_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
