// keyplace bench — what every benchmark shares: the membership, the prepared keys and points,
// the strategies as the benches build them, and the one timed lookup loop with its checksum.
#ifndef KEYPLACE_BENCH_BENCH_SUPPORT_HPP_INCLUDED
#define KEYPLACE_BENCH_BENCH_SUPPORT_HPP_INCLUDED

#include <keyplace/keyplace.hpp>
#include <keyplace/snapshot.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace bench {

// ---- Membership: one list, and the client-specific forms built from it.

struct membership_options {
    bool weighted = false;  // weights 1 to 4 (1 + i % 4) instead of 1
    bool located = false;   // region-(i % 3), zone-(i % 6), rack-(i % 12)
};

/// Members node-0 ... node-(n - 1).
[[nodiscard]] inline auto nodes(std::size_t n, membership_options options = {}) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> list;
    list.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        keyplace::node m{"node-" + std::to_string(i)};
        if (options.weighted) {
            m.weight = static_cast<double>(1 + i % 4);
        }
        if (options.located) {
            m.where = {"region-" + std::to_string(i % 3), "zone-" + std::to_string(i % 6), "rack-" + std::to_string(i % 12)};
        }
        list.push_back(std::move(m));
    }
    return list;
}

/// The memcached host of member i: 10.0.<i / 250>.<i % 250 + 1>, on the default port.
[[nodiscard]] inline auto memcached_host(std::size_t i) -> std::string {
    return "10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
}
inline constexpr std::uint16_t memcached_port = keyplace::compat::memcached_default_port;

/// The members as memcached servers, in the same order, with their weights.
[[nodiscard]] inline auto ketama_servers(std::span<const keyplace::node> members)
    -> std::vector<keyplace::compat::ketama_server> {
    std::vector<keyplace::compat::ketama_server> servers;
    for (std::size_t i = 0; i < members.size(); ++i) {
        servers.push_back({memcached_host(i) + ":" + std::to_string(memcached_port),
                           static_cast<std::uint64_t>(members[i].weight)});
    }
    return servers;
}

/// The members as Cassandra endpoints: 16 random tokens each (num_tokens' default since
/// Cassandra 4.0), datacenter and rack from the location where it has one.
[[nodiscard]] inline auto cassandra_endpoints(std::span<const keyplace::node> members)
    -> std::vector<keyplace::compat::cassandra_endpoint> {
    std::mt19937_64 gen(5);
    std::vector<keyplace::compat::cassandra_endpoint> endpoints;
    for (const auto& m : members) {
        keyplace::compat::cassandra_endpoint e{m.id, {}};
        for (int t = 0; t < 16; ++t) {
            e.tokens.push_back(static_cast<std::int64_t>(gen()));
        }
        if (!m.where.region.empty()) {
            e.dc = m.where.region;
        }
        if (!m.where.rack.empty()) {
            e.rack = m.where.rack;
        }
        endpoints.push_back(std::move(e));
    }
    return endpoints;
}

// ---- Keys and points, prepared once, outside every timed region.

inline constexpr std::size_t key_count = std::size_t{1} << 16;  // a power of two: indexed with a mask

[[nodiscard]] inline auto random_words(std::size_t n, std::uint64_t seed) -> std::vector<std::uint64_t> {
    std::mt19937_64 gen(seed);
    std::vector<std::uint64_t> words(n);
    for (auto& w : words) {
        w = gen();
    }
    return words;
}

/// 16-byte keys (hex digits), as the performance targets specify.
[[nodiscard]] inline auto keys() -> const std::vector<std::string>& {
    static const auto k = [] {
        std::vector<std::string> list;
        for (const auto w : random_words(key_count, 1)) {
            char buf[17];
            std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(w));
            list.emplace_back(buf, 16);
        }
        return list;
    }();
    return k;
}

/// The keys' XXH3 hashes: the points pick() takes.
[[nodiscard]] inline auto points() -> const std::vector<std::uint64_t>& {
    static const auto p = [] {
        std::vector<std::uint64_t> list;
        for (const auto& k : keys()) {
            list.push_back(keyplace::xxh3{}(k));
        }
        return list;
    }();
    return p;
}

// ---- The strategies under test. Every keyplace build call in bench/ is one of these, so an
// API change is an edit here.

[[nodiscard]] inline auto ring_of(std::span<const keyplace::node> members, keyplace::ring_config config = {}) {
    return keyplace::ring::build(members, config);
}
[[nodiscard]] inline auto rendezvous_of(std::span<const keyplace::node> members) {
    return keyplace::rendezvous::build(members);
}
[[nodiscard]] inline auto jump_of(std::span<const keyplace::node> members) { return keyplace::jump::build(members); }
[[nodiscard]] inline auto maglev_of(std::span<const keyplace::node> members, keyplace::maglev_config config = {}) {
    return keyplace::maglev::build(members, config);
}
[[nodiscard]] inline auto modulo_of(std::span<const keyplace::node> members) { return keyplace::modulo::build(members); }
[[nodiscard]] inline auto partitions_of(std::span<const keyplace::node> members, keyplace::partitions_config config = {}) {
    return keyplace::partitions::build(members, config);
}
/// libmemcached's MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED continuum.
[[nodiscard]] inline auto ketama_of(std::span<const keyplace::compat::ketama_server> servers) {
    return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libmemcached_weighted, servers);
}
[[nodiscard]] inline auto envoy_ring_of(std::span<const keyplace::node> members) {
    return keyplace::compat::envoy_ring_hash::build(members);
}
[[nodiscard]] inline auto envoy_maglev_of(std::span<const keyplace::node> members) {
    return keyplace::compat::envoy_maglev::build(members);
}
[[nodiscard]] inline auto cassandra_of(std::span<const keyplace::compat::cassandra_endpoint> endpoints) {
    return keyplace::compat::cassandra_ring::build(endpoints);
}
/// The description of a snapshot of cluster "bench" at an epoch: a ring of vnodes points per
/// member, every member active.
[[nodiscard]] inline auto ring_snapshot_description(std::span<const keyplace::node> members, std::uint32_t vnodes,
                                                    std::uint64_t epoch = 1) -> keyplace::snapshot_description {
    keyplace::snapshot_description d;
    d.cluster = "bench";
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy = {.name = "ring", .params = {{"vnodes", std::uint64_t{vnodes}}}};
    for (const auto& m : members) {
        d.nodes.push_back({.id = m.id, .weight = m.weight, .where = m.where});
    }
    return d;
}
[[nodiscard]] inline auto snapshot_of(const keyplace::snapshot_description& d) { return keyplace::snapshot::build(d); }

/// A benchmark's argument i as a count.
[[nodiscard]] inline auto arg(const benchmark::State& state, std::size_t i = 0) -> std::size_t {
    return static_cast<std::size_t>(state.range(i));
}

// ---- The timed lookup loop.

namespace detail {
inline bool check_failed = false;  // makes run() exit non-zero

// What the checksum adds for an owner. A located node counts by its address in the strategy's
// node list: the timed and untimed passes query the same object, and taking the address is
// what the lookup costs anyway.
[[nodiscard]] inline auto owner_bits(keyplace::node_index i) noexcept -> std::uint64_t { return i.value; }
[[nodiscard]] inline auto owner_bits(const keyplace::node* n) noexcept -> std::uint64_t {
    return reinterpret_cast<std::uintptr_t>(n);
}
template <std::integral T>
[[nodiscard]] auto owner_bits(T v) noexcept -> std::uint64_t {
    return static_cast<std::uint64_t>(v);
}

inline void fail(benchmark::State& state, const std::string& name, const std::string& what) {
    std::fprintf(stderr, "keyplace bench: CHECK FAILED in %s: %s\n", name.c_str(), what.c_str());
    state.SkipWithError(what.c_str());
    check_failed = true;
}
}  // namespace detail

/// No reference: only the timed lookups against the same lookups untimed.
struct no_reference {};

/// Times lookup(prepared, input) over inputs (a power of two of them: the loop cycles through
/// them with a mask) and sums the owners it returns. Then, untimed, repeats the lookups on
/// every input the loop used and checks that sum; with a reference (a strategy a baseline
/// copies), also that the reference names the same owner for each of those inputs. A failure skips the benchmark with the reason and makes run() fail.
template <class Prepared, class Input, class Lookup, class Reference = no_reference>
void time_lookups(benchmark::State& state, const std::string& name, const Prepared& prepared,
                  std::span<const Input> inputs, const Lookup& lookup, const Reference& reference = {}) {
    const std::size_t mask = inputs.size() - 1;
    std::uint64_t sum = 0;
    std::size_t i = 0;
    for (auto _ : state) {
        const auto owner = lookup(prepared, inputs[i++ & mask]);
        benchmark::DoNotOptimize(owner);
        sum += detail::owner_bits(owner);
    }
    // The timed sum is whole passes over the inputs plus a prefix of one.
    const auto done = static_cast<std::size_t>(state.iterations());
    const std::size_t rest = done % inputs.size();
    std::uint64_t pass = 0;
    std::uint64_t prefix = 0;
    for (std::size_t j = 0; j < std::min(done, inputs.size()); ++j) {
        const auto bits = detail::owner_bits(lookup(prepared, inputs[j]));
        if constexpr (!std::is_same_v<Reference, no_reference>) {
            if (bits != detail::owner_bits(reference(prepared, inputs[j]))) {
                return detail::fail(state, name, "input " + std::to_string(j) + ": its reference picks another owner");
            }
        }
        pass += bits;
        prefix += j < rest ? bits : 0;
    }
    const std::uint64_t want = static_cast<std::uint64_t>(done / inputs.size()) * pass + prefix;
    if (sum != want) {
        detail::fail(state, name, "checksum " + std::to_string(sum) + " of the timed lookups, " + std::to_string(want) +
                                      " untimed");
    }
}

/// The owner of a point, and of a key (hashed by the strategy's key hash, as callers do).
inline constexpr auto pick_owner = [](const auto& s, std::uint64_t point) noexcept { return s.pick(point); };
inline constexpr auto locate_owner = [](const auto& s, const std::string& key) noexcept {
    return &keyplace::locate(s, key);
};

/// Registers name: prepare(state) builds, untimed, what time_lookups queries over inputs().
template <class Input, class Prepare, class Lookup, class Reference = no_reference>
auto lookup_benchmark(const std::string& name, const std::vector<Input>& (*inputs)(), Prepare prepare, Lookup lookup,
                      Reference reference = {}) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = prepare(state);
        time_lookups(state, name, prepared, std::span<const Input>(inputs()), lookup, reference);
    });
}
/// pick() of the strategy make(state) builds, over the prepared points.
template <class Make>
auto pick_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return lookup_benchmark(name, points, make, pick_owner);
}
/// locate() of the strategy make(state) builds, over the 16-byte keys: hashing included.
template <class Make>
auto locate_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return lookup_benchmark(name, keys, make, locate_owner);
}

/// Runs the registered benchmarks. Exits 1 when a check failed, so a wrong lookup cannot pass
/// for a fast one in a script either.
inline auto run(int argc, char** argv) -> int {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (detail::check_failed) {
        std::fprintf(stderr, "keyplace bench: FAILED: a lookup check did not hold (see above)\n");
        return 1;
    }
    return 0;
}

}  // namespace bench

#endif
