// Lookup cost of every strategy against the baselines in the same process: hashing the key
// alone (the floor), std::lower_bound over the ring's sorted points, and a std::map ring as
// services commonly hand-write it (both checked against the ring's own pick). Build cost of
// each strategy, and of sorting the same number of points, too.
#include "bench_support.hpp"

#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
#include <libmemcached/memcached.h>
#endif

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace bench;

// The ring of the ring families: N nodes x V points, (N, V) = the benchmark's arguments.
auto ring_nv(const benchmark::State& s) -> keyplace::ring {
    return ring_of(nodes(arg(s, 0)), {.vnodes = static_cast<std::uint32_t>(s.range(1))});
}
// Maglev over 100 nodes with M = the benchmark's argument.
auto maglev_m(const benchmark::State& s) -> keyplace::maglev { return maglev_of(nodes(100), {.table_size = arg(s)}); }
void ring_args(benchmark::internal::Benchmark* b) {
    for (const int n : {10, 100, 1000}) {
        for (const int v : {16, 160, 256}) {
            b->Args({n, v});
        }
    }
}

auto lower_bound_owner(const keyplace::ring& r, std::uint64_t p) -> std::uint32_t {
    const auto pts = r.points();
    auto it = std::lower_bound(pts.begin(), pts.end(), p);
    const auto i = it == pts.end() ? 0 : static_cast<std::size_t>(it - pts.begin());
    return r.owners()[i].value;
}

struct map_ring {
    keyplace::ring ring;
    std::map<std::uint64_t, std::uint32_t> map;
};
auto make_map_ring(const benchmark::State& s) -> map_ring {
    map_ring m{ring_nv(s), {}};
    for (std::size_t i = 0; i < m.ring.points().size(); ++i) {
        m.map.emplace(m.ring.points()[i], m.ring.owners()[i].value);  // first of equal points wins, as in the ring
    }
    return m;
}
auto map_owner(const map_ring& m, std::uint64_t p) -> std::uint32_t {
    auto it = m.map.lower_bound(p);
    return it == m.map.end() ? m.map.begin()->second : it->second;
}

#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
// libmemcached 1.1's own weighted ketama (MD5 of the key, 160 points per server): a real peer
// doing the same job, hashing included. Compare with ring_locate at the same node count. Our
// compat ketama over the same servers is its reference: it must pick the same server.
struct memcached_peer {
    std::unique_ptr<memcached_st, decltype(&memcached_free)> memc;
    keyplace::compat::ketama ours;
};
auto make_memcached(const benchmark::State& s) -> memcached_peer {
    const auto servers = ketama_servers(nodes(arg(s)));
    memcached_peer p{{memcached_create(nullptr), &memcached_free}, ketama_of(servers)};
    for (std::size_t i = 0; i < servers.size(); ++i) {
        memcached_server_add_with_weight(p.memc.get(), memcached_host(i).c_str(), memcached_port,
                                         static_cast<std::uint32_t>(servers[i].weight));
    }
    memcached_behavior_set(p.memc.get(), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1);
    return p;
}
auto memcached_owner(const memcached_peer& p, const std::string& k) -> std::uint32_t {
    return memcached_generate_hash(p.memc.get(), k.data(), k.size());
}
auto ours_owner(const memcached_peer& p, const std::string& k) -> std::uint32_t {
    return static_cast<std::uint32_t>(locate_owner(p.ours, k) - p.ours.nodes().data());  // servers in input order
}
#endif

// Build cost: nodes x 160 points for the ring, the node list for rendezvous and jump, a
// 65537-entry table for Maglev; and std::sort of as many random 64-bit points as the ring has.
void ring_build(benchmark::State& state) {
    const auto members = nodes(arg(state));
    for (auto _ : state) {
        benchmark::DoNotOptimize(ring_of(members).points().data());
    }
    state.counters["points"] = static_cast<double>(members.size() * 160);
}
void sort_points(benchmark::State& state) {
    const auto random = random_words(arg(state) * 160, 3);
    for (auto _ : state) {
        auto copy = random;
        std::sort(copy.begin(), copy.end());
        benchmark::DoNotOptimize(copy.data());
    }
}
void rendezvous_build(benchmark::State& state) {
    const auto members = nodes(arg(state));
    for (auto _ : state) {
        benchmark::DoNotOptimize(rendezvous_of(members).size());
    }
}
void maglev_build(benchmark::State& state) {
    const auto members = nodes(arg(state));
    for (auto _ : state) {
        benchmark::DoNotOptimize(maglev_of(members).size());
    }
}

}  // namespace

// One line per lookup benchmark: a name, what to build from the arguments, and the arguments.
auto main(int argc, char** argv) -> int {
    using benchmark::kMicrosecond;
    using benchmark::RegisterBenchmark;
    lookup_benchmark("hash_only", keys, [](auto&) { return 0; }, [](int, const std::string& k) { return keyplace::xxh3{}(k); });
    pick_benchmark("ring_pick", ring_nv)->Apply(ring_args);
    locate_benchmark("ring_locate", ring_nv)->Apply(ring_args);
    lookup_benchmark("lower_bound_pick", points, ring_nv, lower_bound_owner, pick_owner)->Apply(ring_args);
    lookup_benchmark("map_ring_pick", points, make_map_ring, map_owner,
                     [](const map_ring& m, std::uint64_t p) { return m.ring.pick(p); })->Apply(ring_args);
    pick_benchmark("rendezvous_pick", [](auto& s) { return rendezvous_of(nodes(arg(s))); })->Arg(10)->Arg(100)->Arg(1000);
    pick_benchmark("jump_pick", [](auto& s) { return jump_of(nodes(arg(s))); })->Arg(10)->Arg(1000)->Arg(100000)->Arg(1000000);
    pick_benchmark("maglev_pick", maglev_m)->Arg(65537)->Arg(655373);
    locate_benchmark("maglev_locate", maglev_m)->Arg(65537)->Arg(655373);
    // Compatibility modes, hash included: our libmemcached-compatible weighted ketama (same
    // servers and job as libmemcached_ketama_locate), Envoy's ring hash at its default 1024
    // entries, Envoy's Maglev at 65537, and Cassandra's Murmur3 token ring at 16 tokens a node.
    locate_benchmark("compat_ketama_locate", [](auto& s) { return ketama_of(ketama_servers(nodes(arg(s)))); })->Arg(10)->Arg(100);
    locate_benchmark("compat_envoy_ring_locate", [](auto& s) { return envoy_ring_of(nodes(arg(s))); })->Arg(10)->Arg(100);
    locate_benchmark("compat_envoy_maglev_locate", [](auto& s) { return envoy_maglev_of(nodes(arg(s))); })->Arg(10)->Arg(100);
    locate_benchmark("compat_cassandra_locate", [](auto& s) { return cassandra_of(cassandra_endpoints(nodes(arg(s)))); })->Arg(10)->Arg(100);
#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
    // libmemcached 1.1 asserts above 100 servers (MEMCACHED_CONTINUUM_SIZE).
    lookup_benchmark("libmemcached_ketama_locate", keys, make_memcached, memcached_owner, ours_owner)->Arg(10)->Arg(100);
#endif

    RegisterBenchmark("ring_build", ring_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    RegisterBenchmark("sort_points", sort_points)->Arg(10)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    RegisterBenchmark("rendezvous_build", rendezvous_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    RegisterBenchmark("maglev_build", maglev_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    return run(argc, argv);
}
