// Lookup cost of every strategy against the baselines in the same process: hashing the key
// alone (the floor) and its dependent chain; the memory floor (the hash plus one load from a
// random table the structure's size) for fresh keys, one at a time and batched; std::lower_bound
// and a branch-free lower bound over the ring's sorted points, and a std::map ring as services
// commonly hand-write it (all checked against the ring's own pick); libmemcached's ketama
// against our compat ketama. Build cost of the ring beside sorting as many points.
//
// Ratios within one run, repetitions interleaved (bench/lookup_ratios.py does this and prints
// the ratio table from the medians):
//   build/bench/bench/keyplace_bench --benchmark_repetitions=5
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
// (one command line).
// Families, by harness (bench_support.hpp):
//   throughput (time_lookups, prepared keys or points, independent lookups):
//     hash_only, ring_pick, ring_locate, lower_bound_pick, branchless_lower_bound_pick,
//     map_ring_pick, rendezvous_pick, jump_pick, jumpback_pick, maglev_pick, maglev_locate,
//     ring_spread3_pick, rendezvous_spread3_pick (hot-key spreading over 3 copies),
//     hot_keys_observe (hot-key detection, one request),
//     compat_*_locate, libmemcached_ketama_locate
//   latency chain (time_chain, the next key depends on the previous owner):
//     hash_chain, ring_locate_chain, maglev_locate_chain
//   fresh keys (time_fresh, a new 16-byte key a lookup) and their memory floor:
//     fresh_ring_locate, fresh_ring_floor, fresh_maglev_locate, fresh_maglev_floor
//   batched (time_batches over prepared inputs; time_fresh_batches over fresh keys):
//     ring_pick_batch, ring_locate_batch, maglev_pick_batch, maglev_locate_batch,
//     fresh_ring_locate_batch, fresh_ring_floor_batch
#include "bench_support.hpp"
#include "../tests/multiprobe_reference.hpp"
#include "../tests/rendezvous_reference.hpp"

#include <keyplace/bounded_load.hpp>
#include <keyplace/hot_keys.hpp>

#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
#include <libmemcached/memcached.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
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
// The sizes of the performance targets: 16,000 and 160,000 points (L2-resident and not), and
// 2.56 M points (35 MB, a DRAM miss a lookup).
void target_rings(benchmark::internal::Benchmark* b) { b->Args({100, 160})->Args({1000, 160})->Args({10000, 256}); }
void all_rings(benchmark::internal::Benchmark* b) {
    ring_args(b);
    b->Args({10000, 256});
}
void maglev_sizes(benchmark::internal::Benchmark* b) { b->Arg(65537)->Arg(655373); }

// The owner of the first point >= p (the first past the last is the first): std::lower_bound,
// which g++ compiles with a branch per level.
constexpr auto lower_bound_owner = [](const keyplace::ring& r, std::uint64_t p) {
    const auto pts = r.points();
    auto it = std::lower_bound(pts.begin(), pts.end(), p);
    const auto i = it == pts.end() ? 0 : static_cast<std::size_t>(it - pts.begin());
    return r.owners()[i].value;
};
// The same answer by a branch-free halving over all the points: a conditional move a level,
// the fair comparison baseline (no mispredictions, only the log2(points) dependent loads).
constexpr auto branchless_lower_bound_owner = [](const keyplace::ring& r, std::uint64_t p) {
    const auto pts = r.points();
    const std::uint64_t* base = pts.data();
    std::size_t n = pts.size();
    while (n > 1) {
        const std::size_t half = n / 2;
        base = base[half] < p ? base + half : base;
        n -= half;
    }
    const auto at = static_cast<std::size_t>(base - pts.data()) + (*base < p ? 1U : 0U);
    return r.owners()[at == pts.size() ? 0 : at].value;
};

// Multi-probe's owner the plain way (tests/multiprobe_reference.hpp), the baseline of its pick:
// as pick did before its fixed-step search and selects, and what its test compares with.
constexpr auto multiprobe_plain_owner = [](const keyplace::multiprobe& m, std::uint64_t point) {
    const auto probes = keyplace::native_multiprobe_traits::point_probes(point);
    return keyplace_reference::plain_multiprobe_pick(m, probes).value;
};
// Rendezvous by the plain loop (XXH3 of 16 bytes, draw, exact comparison, every node), and its
// pick by a chosen path: the portable bound, or every node scored exactly with the key's half of
// the hash computed once.
constexpr auto rendezvous_plain_owner = [](const keyplace::rendezvous& r, std::uint64_t point) {
    return keyplace_reference::plain_rendezvous_pick(r, point).value;
};
constexpr auto rendezvous_portable_owner = [](const keyplace::rendezvous& r, std::uint64_t point) {
    return r.detail_scorer().pick(point, keyplace::detail::rendezvous_scorer::path::bounded).value;
};
constexpr auto rendezvous_exact_owner = [](const keyplace::rendezvous& r, std::uint64_t point) {
    return r.detail_scorer().pick(point, keyplace::detail::rendezvous_scorer::path::exact).value;
};
// Three replicas (pick_n of 3), all of them in the result; automatic, and every node scored.
template <keyplace::detail::rendezvous_scorer::path How>
constexpr auto rendezvous_replicas3 = [](const keyplace::rendezvous& r, std::uint64_t point) {
    std::array<keyplace::node_index, 3> out{};
    (void)r.detail_scorer().pick_n(point, out, How);
    return out[0].value ^ (out[1].value << 10) ^ (out[2].value << 20);
};
auto rendezvous_n(const benchmark::State& s) -> keyplace::rendezvous { return rendezvous_of(nodes(arg(s))); }
auto weighted_rendezvous_n(const benchmark::State& s) -> keyplace::rendezvous {
    return rendezvous_of(nodes(arg(s), {.weighted = true}));
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
constexpr auto map_owner = [](const map_ring& m, std::uint64_t p) {
    auto it = m.map.lower_bound(p);
    return it == m.map.end() ? m.map.begin()->second : it->second;
};
constexpr auto map_reference = [](const map_ring& m, std::uint64_t p) { return m.ring.pick(p); };

// Hot-key spreading (spread.hpp) over k = 3 copies, the salt a function of the point so each
// lookup draws another copy; checked against pick_n's first 3 and the index rule.
const auto spread3 = keyplace::spread_width::make(3);
constexpr auto spread3_owner = [](const auto& s, std::uint64_t p) noexcept {
    return keyplace::pick_spread(s, p, spread3, ~p);
};
constexpr auto spread3_reference = [](const auto& s, std::uint64_t p) {
    keyplace::node_index first[3];
    const std::size_t m = s.pick_n(p, first);
    return first[keyplace::spread_index(p, ~p, m)];
};

#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
// libmemcached 1.1's own weighted ketama (MD5 of the key, 160 points per server): a real peer
// doing the same job, hashing included. Compare with compat_ketama_locate at the same server
// count. Our compat ketama over the same servers is its reference: it must pick the same server.
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
constexpr auto memcached_owner = [](const memcached_peer& p, std::string_view k) -> std::uint32_t {
    return memcached_generate_hash(p.memc.get(), k.data(), k.size());
};
constexpr auto ours_owner = [](const memcached_peer& p, std::string_view k) -> std::uint32_t {
    return static_cast<std::uint32_t>(locate_owner(p.ours, k) - p.ours.nodes().data());  // servers in input order
};
#endif

// Build cost: N x V points for the ring (N, V the arguments), the node list for rendezvous, a
// 65537-entry table for Maglev; and std::sort of as many random 64-bit points as the ring has.
void ring_build(benchmark::State& state) {
    const auto members = nodes(arg(state, 0));
    const auto v = static_cast<std::uint32_t>(state.range(1));
    for (auto _ : state) {
        benchmark::DoNotOptimize(ring_of(members, {.vnodes = v}).points().data());
    }
    state.counters["points"] = static_cast<double>(members.size() * v);
}
void sort_points(benchmark::State& state) {
    const auto random = random_words(arg(state, 0) * arg(state, 1), 3);
    for (auto _ : state) {
        auto copy = random;
        std::sort(copy.begin(), copy.end());
        benchmark::DoNotOptimize(copy.data());
    }
    state.counters["points"] = static_cast<double>(random.size());
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
void multiprobe_build(benchmark::State& state) {
    const auto members = nodes(arg(state));
    for (auto _ : state) {
        benchmark::DoNotOptimize(multiprobe_of(members).size());
    }
}


// Bounded loads (bounded_load.hpp) over the ring of N nodes x 160 points (N the argument), beside
// ring_pick/N/160 in the same run: the live form's acquire + release of one request with 2^14
// others held (so the caps bind, c = 1.25), and the batch form's cost per request for the 2^16
// prepared points.
void bounded_acquire_release(benchmark::State& state) {
    const auto r = ring_of(nodes(arg(state)), {.vnodes = 160});
    auto tracker = keyplace::load_tracker<keyplace::ring>::build(r);
    const auto pts = points();
    const std::size_t mask = pts.size() - 1;
    std::vector<keyplace::load_tracker<keyplace::ring>::token> held;
    for (std::size_t k = 0; k < (std::size_t{1} << 14); ++k) {
        held.push_back(tracker.acquire_point(pts[(k * 7919) & mask]));
    }
    std::uint64_t sum = 0;
    std::size_t i = 0;
    for (auto _ : state) {
        auto t = tracker.acquire_point(pts[i++ & mask]);
        sum += t.node().value;
    }
    benchmark::DoNotOptimize(sum);
    if (tracker.in_flight() != held.size()) {
        detail::fail(state, "bounded_acquire_release", "requests left in flight");
    }
}
void bounded_assign_per_key(benchmark::State& state) {
    const auto r = ring_of(nodes(arg(state)), {.vnodes = 160});
    const auto pts = points();
    std::uint64_t sum = 0;
    for (auto _ : state) {
        const auto owners = keyplace::bounded_assign(r, pts);
        sum += owners[0].value;
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(pts.size()));
}
}  // namespace

// One line per benchmark: a name, what to build from the arguments, and the arguments.
auto main(int argc, char** argv) -> int {
    using benchmark::kMicrosecond;
    using benchmark::kMillisecond;
    using benchmark::RegisterBenchmark;
    // Throughput over the 2^16 prepared keys (points: their hashes).
    hash_benchmark("hash_only");
    pick_benchmark("ring_pick", ring_nv)->Apply(all_rings);
    locate_benchmark("ring_locate", ring_nv)->Apply(all_rings);
    lookup_benchmark("ring_locate_index", keys(), ring_nv, locate_index_owner)->Apply(target_rings);
    locate_floor_benchmark("ring_locate_floor", ring_nv)->Apply(target_rings);
    pick_floor_benchmark("ring_pick_floor", ring_nv)->Apply(target_rings);
    lookup_benchmark("lower_bound_pick", points(), ring_nv, lower_bound_owner, pick_owner)->Apply(all_rings);
    lookup_benchmark("branchless_lower_bound_pick", points(), ring_nv, branchless_lower_bound_owner, pick_owner)
        ->Apply(all_rings);
    lookup_benchmark("map_ring_pick", points(), make_map_ring, map_owner, map_reference)->Apply(ring_args);
    // Rendezvous: pick (AVX-512 where the CPU has it, from 8 nodes), the portable bounded path,
    // every node scored exactly, and the plain loop it replaced; weighted (1 to 4) at 100 nodes.
    pick_benchmark("rendezvous_pick", rendezvous_n)->Arg(10)->Arg(100)->Arg(1000);
    lookup_benchmark("rendezvous_portable_pick", points(), rendezvous_n, rendezvous_portable_owner, pick_owner)
        ->Arg(10)->Arg(100)->Arg(1000);
    lookup_benchmark("rendezvous_exact_pick", points(), rendezvous_n, rendezvous_exact_owner, pick_owner)->Arg(10)->Arg(100);
    lookup_benchmark("rendezvous_plain_pick", points(), rendezvous_n, rendezvous_plain_owner, pick_owner)
        ->Arg(10)->Arg(100)->Arg(1000);
    pick_benchmark("rendezvous_weighted_pick", weighted_rendezvous_n)->Arg(100);
    using rendezvous_path = keyplace::detail::rendezvous_scorer::path;
    lookup_benchmark("rendezvous_replicas3", points(), rendezvous_n, rendezvous_replicas3<rendezvous_path::automatic>,
                     rendezvous_replicas3<rendezvous_path::exact>)->Arg(10)->Arg(100)->Arg(1000);
    lookup_benchmark("rendezvous_exact_replicas3", points(), rendezvous_n, rendezvous_replicas3<rendezvous_path::exact>)
        ->Arg(10)->Arg(100)->Arg(1000);
    lookup_benchmark("rendezvous_weighted_plain_pick", points(), weighted_rendezvous_n, rendezvous_plain_owner, pick_owner)
        ->Arg(100);
    pick_benchmark("jump_pick", [](auto& s) { return jump_of(nodes(arg(s))); })->Arg(10)->Arg(1000)->Arg(100000)->Arg(1000000);
    // JumpBackHash beside jump: expected O(1) against jump's O(log N).
    pick_benchmark("jumpback_pick", [](auto& s) { return keyplace::jumpback::build(nodes(arg(s))); })
        ->Arg(10)->Arg(1000)->Arg(1000000);
    pick_benchmark("maglev_pick", maglev_m)->Apply(maglev_sizes);
    // AnchorHash (capacity N) and MementoHash over N nodes, after removing 0, 10 or 50 % of them.
    const auto removal_args = [](benchmark::internal::Benchmark* b) {
        b->ArgsProduct({{100, 1000}, {0, 10, 50}});
    };
    pick_benchmark("anchor_pick", [](auto& s) {
        return removed_of<keyplace::anchor>(nodes(arg(s, 0)), arg(s, 1));
    })->Apply(removal_args);
    pick_benchmark("anchor_compact_pick", [](auto& s) {
        return removed_of<keyplace::anchor_compact>(nodes(arg(s, 0)), arg(s, 1));
    })->Apply(removal_args);
    // And with nothing removed at 10 and 10^6 buckets, beside jump_pick (the target: within 1.2x).
    pick_benchmark("memento_pick", [](auto& s) {
        return removed_of<keyplace::memento>(nodes(arg(s, 0)), arg(s, 1));
    })->Apply(removal_args)->Args({10, 0})->Args({1000000, 0});
    locate_benchmark("maglev_locate", maglev_m)->Apply(maglev_sizes);
    lookup_benchmark("maglev_locate_index", keys(), maglev_m, locate_index_owner)->Apply(maglev_sizes);
    locate_floor_benchmark("maglev_locate_floor", maglev_m)->Apply(maglev_sizes);
    pick_floor_benchmark("maglev_pick_floor", maglev_m)->Apply(maglev_sizes);
    lookup_benchmark("ring_spread3_pick", points(), ring_nv, spread3_owner, spread3_reference)->Args({100, 160});
    // Hot-key detection: observe() of each prepared key into the default summary (2^16 keys,
    // uniform, so nearly every request misses the 64 candidates and pays the sketch alone).
    benchmark::RegisterBenchmark("hot_keys_observe", [](benchmark::State& state) {
        auto h = keyplace::hot_keys::make();
        const auto in = keys();
        std::size_t i = 0;
        for (auto _ : state) {
            h.observe(in[i++ & (in.size() - 1)]);
        }
        if (h.total() != static_cast<std::uint64_t>(state.iterations())) {
            state.SkipWithError("hot_keys_observe: requests lost");
        }
        state.counters["bytes"] = static_cast<double>(h.memory_bytes());
    });
    lookup_benchmark("rendezvous_spread3_pick", points(), [](auto& s) { return rendezvous_of(nodes(arg(s))); },
                     spread3_owner, spread3_reference)->Arg(100);

    // Paired with the hash in one loop (time_paired): the ratios least moved by the VM's noise.
    paired_locate_benchmark("paired_ring_locate", ring_nv)->Args({100, 160})->Args({1000, 160});
    paired_floor_benchmark("paired_ring_floor", ring_nv)->Args({100, 160})->Args({1000, 160});
    paired_locate_benchmark("paired_maglev_locate", maglev_m)->Arg(65537);
    paired_floor_benchmark("paired_maglev_floor", maglev_m)->Arg(65537);
    paired_pick_benchmark("paired_multiprobe_pick", [](auto& s) { return multiprobe_of(nodes(arg(s))); })->Arg(100)->Arg(1000);

    // Latency: each key's bytes depend on the previous owner; the hash chain is its floor.
    chain_benchmark("hash_chain", no_structure, hash_owner);
    chain_benchmark("ring_locate_chain", ring_nv, locate_owner)->Apply(target_rings);
    chain_benchmark("maglev_locate_chain", maglev_m, locate_owner)->Apply(maglev_sizes);

    // Fresh keys, each beside its memory floor at the same size.
    fresh_locate_benchmark("fresh_ring_locate", ring_nv)->Apply(target_rings);
    fresh_floor_benchmark("fresh_ring_floor", ring_nv)->Apply(target_rings);
    fresh_locate_benchmark("fresh_maglev_locate", maglev_m)->Apply(maglev_sizes);
    fresh_floor_benchmark("fresh_maglev_floor", maglev_m)->Apply(maglev_sizes);

    // Batched, batch_size lookups an iteration (the per_lookup counter is the time of one).
    pick_batch_benchmark("ring_pick_batch", ring_nv)->Apply(target_rings);
    locate_batch_benchmark("ring_locate_batch", ring_nv)->Apply(target_rings);
    pick_batch_benchmark("maglev_pick_batch", maglev_m)->Apply(maglev_sizes);
    locate_batch_benchmark("maglev_locate_batch", maglev_m)->Apply(maglev_sizes);
    fresh_locate_batch_benchmark("fresh_ring_locate_batch", ring_nv)->Apply(target_rings);
    fresh_floor_batch_benchmark("fresh_ring_floor_batch", ring_nv)->Apply(target_rings);

    // Compatibility modes, hash included: our libmemcached-compatible weighted ketama (same
    // servers and job as libmemcached_ketama_locate), Envoy's ring hash at its default 1024
    // entries, Envoy's Maglev at 65537, and Cassandra's Murmur3 token ring at 16 tokens a node.
    locate_benchmark("compat_ketama_locate", [](auto& s) { return ketama_of(ketama_servers(nodes(arg(s)))); })->Arg(10)->Arg(100);
    locate_benchmark("compat_envoy_ring_locate", [](auto& s) { return envoy_ring_of(nodes(arg(s))); })->Arg(10)->Arg(100);
    locate_benchmark("compat_envoy_maglev_locate", [](auto& s) { return envoy_maglev_of(nodes(arg(s))); })->Arg(10)->Arg(100);
    locate_benchmark("compat_cassandra_locate", [](auto& s) { return cassandra_of(cassandra_endpoints(nodes(arg(s)))); })->Arg(10)->Arg(100);
#if defined(KEYPLACE_BENCH_LIBMEMCACHED)
    // libmemcached 1.1 asserts above 100 servers (MEMCACHED_CONTINUUM_SIZE).
    lookup_benchmark("libmemcached_ketama_locate", keys(), make_memcached, memcached_owner, ours_owner)->Arg(10)->Arg(100);
#endif

    RegisterBenchmark("ring_build", ring_build)->Args({10, 160})->Apply(target_rings)->Unit(kMillisecond);
    RegisterBenchmark("sort_points", sort_points)->Args({10, 160})->Apply(target_rings)->Unit(kMillisecond);
    RegisterBenchmark("rendezvous_build", rendezvous_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    RegisterBenchmark("maglev_build", maglev_build)->Arg(10)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    RegisterBenchmark("bounded_acquire_release", bounded_acquire_release)->Arg(10)->Arg(100);
    RegisterBenchmark("bounded_assign_per_key", bounded_assign_per_key)->Arg(10)->Arg(100)->Unit(kMillisecond);
    // Multi-probe at K = 21 (and 5, 41 at 100 nodes): K successor searches a lookup; go-mpchash
    // with its two SipHash-2-4 key hashes included (its locate hashes the key bytes twice).
    pick_benchmark("multiprobe_pick", [](auto& s) { return multiprobe_of(nodes(arg(s))); })->Arg(10)->Arg(100)->Arg(1000);
    lookup_benchmark("multiprobe_plain_pick", points(), [](auto& s) { return multiprobe_of(nodes(arg(s))); },
                     multiprobe_plain_owner, pick_owner)->Arg(100)->Arg(1000);
    pick_benchmark("multiprobe_pick_k", [](auto& s) {
        return multiprobe_of(nodes(100), {.probes = static_cast<std::uint32_t>(arg(s))});
    })->Arg(5)->Arg(41);
    locate_benchmark("multiprobe_locate", [](auto& s) { return multiprobe_of(nodes(arg(s))); })->Arg(100)->Arg(1000);
    locate_benchmark("compat_mpchash_locate", [](auto& s) { return mpchash_of(nodes(arg(s))); })->Arg(100)->Arg(1000);
    RegisterBenchmark("multiprobe_build", multiprobe_build)->Arg(100)->Arg(1000)->Unit(kMicrosecond);
    return run(argc, argv);
}
