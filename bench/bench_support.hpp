// keyplace bench — what every benchmark shares: the membership, the prepared keys and points,
// the strategies as the benches build them, and the one timed lookup loop with its checksum.
#ifndef KEYPLACE_BENCH_BENCH_SUPPORT_HPP_INCLUDED
#define KEYPLACE_BENCH_BENCH_SUPPORT_HPP_INCLUDED

#include <keyplace/detail/splitmix.hpp>
#include <keyplace/keyplace.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <string_view>
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
inline constexpr std::size_t key_length = 16;                   // the performance targets' key size

[[nodiscard]] inline auto random_words(std::size_t n, std::uint64_t seed) -> std::vector<std::uint64_t> {
    std::mt19937_64 gen(seed);
    std::vector<std::uint64_t> words(n);
    for (auto& w : words) {
        w = gen();
    }
    return words;
}

/// The 16-byte keys (hex digits of random words), as views into one buffer. Not std::string:
/// 16 bytes is past libstdc++'s 15-byte small-string buffer, so each key would be its own heap
/// block and every lookup would first chase a pointer to it.
[[nodiscard]] inline auto keys() -> std::span<const std::string_view> {
    struct store {
        std::vector<char> bytes;
        std::vector<std::string_view> views;
    };
    static const auto k = [] {
        store s;
        s.bytes.resize(key_count * key_length);
        char* at = s.bytes.data();
        for (const auto w : random_words(key_count, 1)) {
            char buf[key_length + 1];
            std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(w));
            std::memcpy(at, buf, key_length);
            s.views.emplace_back(at, key_length);
            at += key_length;
        }
        return s;
    }();
    return k.views;
}

/// The keys' XXH3 hashes: the points pick() takes.
[[nodiscard]] inline auto points() -> std::span<const std::uint64_t> {
    static const auto p = [] {
        std::vector<std::uint64_t> list;
        for (const auto k : keys()) {
            list.push_back(keyplace::xxh3{}(k));
        }
        return list;
    }();
    return p;
}

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): the fresh keys' generator.
[[nodiscard]] constexpr auto splitmix64(std::uint64_t x) noexcept -> std::uint64_t {
    return keyplace::detail::splitmix64(x);  // x is the state, advanced once
}

/// Key number n of the fresh keys: 16 raw bytes, two SplitMix64 words of a counter. Cheap to
/// make inside a timed loop (two independent mixes), and never a key the loop has seen.
struct fresh_key {
    std::array<char, key_length> bytes;

    explicit fresh_key(std::uint64_t n) noexcept {
        const std::uint64_t words[2] = {splitmix64(2 * n), splitmix64(2 * n + 1)};
        std::memcpy(bytes.data(), words, key_length);
    }
    [[nodiscard]] auto view(std::size_t length = key_length) const noexcept -> std::string_view {
        return {bytes.data(), length};
    }
};

namespace detail {
inline volatile std::size_t opaque_key_length = key_length;
}  // namespace detail
/// key_length as a service's keys have it: not a compile-time constant. With a constant 16,
/// g++ 12 inlines XXH3 without its length dispatch into some loops (a floor) and not others
/// (locate), and the ratio would measure its inliner, not the lookup. Read once a loop.
[[nodiscard]] inline auto runtime_key_length() noexcept -> std::size_t { return detail::opaque_key_length; }

/// The memory floor: a table of random words as large as a structure under test, loaded at a
/// key's hash. One dependent load into as many bytes as the lookup touches, nothing else.
class load_table {
public:
    explicit load_table(std::size_t bytes) : words_(random_words(std::max<std::size_t>(bytes / 8, 1), 7)) {}

    [[nodiscard]] auto load(std::uint64_t point) const noexcept -> std::uint64_t {
        // Multiply-shift onto [0, size): one multiply, where % would add a division's latency.
        __extension__ using wide = unsigned __int128;
        return words_[static_cast<std::size_t>((wide{point} * words_.size()) >> 64U)];
    }
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t { return words_.size() * sizeof(std::uint64_t); }

private:
    std::vector<std::uint64_t> words_;
};

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
/// S (anchor, anchor_compact, memento) over the members, then without `percent` % of them in a
/// fixed pseudo-random order (the removal history is the state these strategies keep). Anchor's
/// capacity is the member count.
template <class S>
[[nodiscard]] auto removed_of(std::span<const keyplace::node> members, std::size_t percent) -> S {
    S s = [&] {
        if constexpr (std::is_same_v<typename S::config_type, keyplace::anchor_config>) {
            return S::build(members, keyplace::anchor_config{static_cast<std::uint32_t>(members.size()), {}});
        } else {
            return S::build(members);
        }
    }();
    std::uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (std::size_t r = members.size() * percent / 100; r > 0; --r) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s = s.without(s.nodes()[x % s.size()].id);
    }
    return s;
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
[[nodiscard]] inline auto multiprobe_of(std::span<const keyplace::node> members, keyplace::multiprobe_config config = {}) {
    return keyplace::multiprobe::build(members, config);
}
/// go-mpchash at its compat_test.go settings (K = 21).
[[nodiscard]] inline auto mpchash_of(std::span<const keyplace::node> members) {
    return keyplace::compat::mpchash::build(members);
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

// ---- The timed loops. Each sums the owners it returns and checks that sum against the same
// lookups repeated untimed; lookups and references are closures, never function pointers, so
// the timed loop is the inlined lookup plus one add. The check consumes the sum, so nothing
// needs benchmark::DoNotOptimize (whose in-out form on the sum miscompiled here: g++ 12 -O3,
// Google Benchmark 1.7.1, a wrong sum after one iteration).

namespace detail {
inline bool check_failed = false;          // makes run() exit non-zero
inline std::uint64_t next_fresh_key = 0;   // shared, so no fresh key repeats within a process

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

inline void check_sum(benchmark::State& state, const std::string& name, std::uint64_t timed, std::uint64_t untimed) {
    if (timed != untimed) {
        fail(state, name, "checksum " + std::to_string(timed) + " of the timed lookups, " + std::to_string(untimed) +
                              " untimed");
    }
}

// The sum of the owners of `done` lookups cycling through inputs (a power of two of them),
// untimed: whole passes over the inputs plus a prefix of one.
template <class Prepared, class Input, class Lookup>
auto replayed_sum(const Prepared& prepared, std::span<const Input> inputs, const Lookup& lookup, std::size_t done)
    -> std::uint64_t {
    const std::size_t rest = done % inputs.size();
    std::uint64_t pass = 0;
    std::uint64_t prefix = 0;
    for (std::size_t j = 0; j < std::min(done, inputs.size()); ++j) {
        const auto bits = owner_bits(lookup(prepared, inputs[j]));
        pass += bits;
        prefix += j < rest ? bits : 0;
    }
    return static_cast<std::uint64_t>(done / inputs.size()) * pass + prefix;
}

// The size of the structure under test as counters: bytes per ring point, or bytes in all.
template <class Prepared>
void count_memory(benchmark::State& state, const Prepared& prepared) {
    if constexpr (requires { prepared.memory_bytes(); }) {
        const auto bytes = static_cast<double>(prepared.memory_bytes());
        state.counters["bytes"] = bytes;
        if constexpr (requires { prepared.points(); }) {
            state.counters["bytes_per_point"] = bytes / static_cast<double>(prepared.points().size());
        }
    }
}
}  // namespace detail

/// No reference: only the timed lookups against the same lookups untimed.
struct no_reference {};

namespace detail {
// reference where there is one, else lookup itself.
template <class Lookup, class Reference>
[[nodiscard]] auto checker(const Lookup& lookup, const Reference& reference) -> const auto& {
    if constexpr (std::is_same_v<Reference, no_reference>) {
        return lookup;
    } else {
        return reference;
    }
}
}  // namespace detail

/// Throughput: times lookup(prepared, input) over inputs (a power of two of them: the loop
/// cycles through them with a mask), independent lookups the CPU may overlap. Then, untimed,
/// repeats the lookups on every input the loop used and checks the sum; with a reference (a
/// strategy a baseline copies), also that the reference names the same owner for each input.
template <class Prepared, class Input, class Lookup, class Reference = no_reference>
void time_lookups(benchmark::State& state, const std::string& name, const Prepared& prepared,
                  std::span<const Input> inputs, const Lookup& lookup, const Reference& reference = {}) {
    const std::size_t mask = inputs.size() - 1;
    std::uint64_t sum = 0;
    std::size_t i = 0;
    for (auto _ : state) {
        sum += detail::owner_bits(lookup(prepared, inputs[i++ & mask]));
    }
    detail::count_memory(state, prepared);
    const auto done = static_cast<std::size_t>(state.iterations());
    if constexpr (!std::is_same_v<Reference, no_reference>) {
        for (std::size_t j = 0; j < std::min(done, inputs.size()); ++j) {
            if (detail::owner_bits(lookup(prepared, inputs[j])) != detail::owner_bits(reference(prepared, inputs[j]))) {
                return detail::fail(state, name, "input " + std::to_string(j) + ": its reference picks another owner");
            }
        }
    }
    detail::check_sum(state, name, sum, detail::replayed_sum(prepared, inputs, lookup, done));
}

/// Paired throughput: lookup `a` and its baseline `b` in alternating blocks of 4,096 lookups
/// within one timed loop, each block timed on its own, so that whatever slows the machine (the
/// VM's neighbours, its clock) meets both alike, which separate benchmarks a minute apart do not.
/// Counters: `a_ns` and `b_ns` a lookup, and their `ratio`. The sums are checked as in
/// time_lookups. Both input sets hold a multiple of 4,096 inputs.
template <class PreparedA, class InputA, class LookupA, class PreparedB, class InputB, class LookupB>
void time_paired(benchmark::State& state, const std::string& name, const PreparedA& pa, std::span<const InputA> ia,
                 const LookupA& a, const PreparedB& pb, std::span<const InputB> ib, const LookupB& b) {
    constexpr std::size_t block = 4096;
    using clock = std::chrono::steady_clock;
    std::uint64_t sum_a = 0;
    std::uint64_t sum_b = 0;
    clock::duration time_a{};
    clock::duration time_b{};
    std::size_t at = 0;
    const auto run_a = [&] {
        const auto t0 = clock::now();
        for (std::size_t k = 0; k < block; ++k) {
            sum_a += detail::owner_bits(a(pa, ia[(at + k) & (ia.size() - 1)]));
        }
        time_a += clock::now() - t0;
    };
    const auto run_b = [&] {
        const auto t0 = clock::now();
        for (std::size_t k = 0; k < block; ++k) {
            sum_b += detail::owner_bits(b(pb, ib[(at + k) & (ib.size() - 1)]));
        }
        time_b += clock::now() - t0;
    };
    bool a_first = true;  // the order alternates: neither side always finds the keys just read
    for (auto _ : state) {
        if (a_first) {
            run_a();
            run_b();
        } else {
            run_b();
            run_a();
        }
        a_first = !a_first;
        at += block;
    }
    const double lookups = static_cast<double>(at);
    const auto ns = [&](clock::duration d) { return std::chrono::duration<double, std::nano>(d).count() / lookups; };
    state.counters["a_ns"] = ns(time_a);
    state.counters["b_ns"] = ns(time_b);
    state.counters["ratio"] = ns(time_a) / ns(time_b);
    detail::count_memory(state, pa);
    detail::check_sum(state, name + " (a)", sum_a, detail::replayed_sum(pa, ia, a, at));
    detail::check_sum(state, name + " (b)", sum_b, detail::replayed_sum(pb, ib, b, at));
}

/// Key i of inputs with its first 8 bytes XORed with mix: how a latency chain makes each key
/// depend on the previous owner while its position in inputs stays sequential (so the chain
/// holds the hash and the lookup, not loads of the key set).
[[nodiscard]] inline auto chained_key(std::string_view key, std::uint64_t mix) noexcept -> std::array<char, key_length> {
    std::array<char, key_length> k;
    std::memcpy(k.data(), key.data(), key_length);
    std::uint64_t head;
    std::memcpy(&head, k.data(), sizeof head);
    head ^= mix;
    std::memcpy(k.data(), &head, sizeof head);
    return k;
}

/// Latency: a dependent chain over the 16-byte keys. Lookup k + 1 is of chained_key(key k + 1,
/// owner k), so no lookup can start before the previous one has named its owner. Untimed,
/// walks the same chain with the reference (or lookup) and checks the sum.
template <class Prepared, class Lookup, class Reference = no_reference>
void time_chain(benchmark::State& state, const std::string& name, const Prepared& prepared,
                std::span<const std::string_view> inputs, const Lookup& lookup, const Reference& reference = {}) {
    const std::size_t mask = inputs.size() - 1;
    const std::size_t length = runtime_key_length();
    std::uint64_t sum = 0;
    std::uint64_t bits = 0;
    std::size_t i = 0;
    for (auto _ : state) {
        const auto k = chained_key(inputs[i++ & mask], bits);
        bits = detail::owner_bits(lookup(prepared, std::string_view(k.data(), length)));
        sum += bits;
    }
    detail::count_memory(state, prepared);
    std::uint64_t untimed = 0;
    bits = 0;
    for (std::size_t j = 0; j < static_cast<std::size_t>(state.iterations()); ++j) {
        const auto k = chained_key(inputs[j & mask], bits);
        bits = detail::owner_bits(detail::checker(lookup, reference)(prepared, std::string_view(k.data(), k.size())));
        untimed += bits;
    }
    detail::check_sum(state, name, sum, untimed);
}

/// Fresh keys: each lookup is of a key made from a counter in the timed loop (fresh_key), one
/// no lookup in this process has seen, so a structure larger than the caches misses them as
/// a service's does. Untimed, looks the same keys up with the reference (or lookup).
template <class Prepared, class Lookup, class Reference = no_reference>
void time_fresh(benchmark::State& state, const std::string& name, const Prepared& prepared, const Lookup& lookup,
                const Reference& reference = {}) {
    const std::size_t length = runtime_key_length();
    const std::uint64_t first = detail::next_fresh_key;
    std::uint64_t n = first;
    std::uint64_t sum = 0;
    for (auto _ : state) {
        sum += detail::owner_bits(lookup(prepared, fresh_key(n++).view(length)));
    }
    detail::next_fresh_key = n;
    detail::count_memory(state, prepared);
    std::uint64_t untimed = 0;
    for (std::uint64_t k = first; k < n; ++k) {
        untimed += detail::owner_bits(detail::checker(lookup, reference)(prepared, fresh_key(k).view()));
    }
    detail::check_sum(state, name, sum, untimed);
}

/// The batch the batched loops look up at once.
inline constexpr std::size_t batch_size = 256;

namespace detail {
inline void count_batches(benchmark::State& state) {
    const auto lookups = static_cast<double>(state.iterations()) * static_cast<double>(batch_size);
    state.SetItemsProcessed(static_cast<std::int64_t>(lookups));
    state.counters["batch"] = static_cast<double>(batch_size);
    state.counters["per_lookup"] = benchmark::Counter(lookups, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
}  // namespace detail

/// Batched: times batch(prepared, inputs, out) over consecutive batches of batch_size inputs
/// (inputs.size() a multiple of it). Untimed, checks every output the loop produced against
/// one(prepared, input), the one-at-a-time lookup the batch must equal, and the sum.
template <class Prepared, class Input, class Batch, class One>
void time_batches(benchmark::State& state, const std::string& name, const Prepared& prepared,
                  std::span<const Input> inputs, const Batch& batch, const One& one) {
    using out_type = std::invoke_result_t<const One&, const Prepared&, const Input&>;
    const std::size_t batches = inputs.size() / batch_size;
    std::vector<out_type> out(batch_size);
    std::uint64_t sum = 0;
    std::size_t b = 0;
    for (auto _ : state) {
        (void)batch(prepared, inputs.subspan(b * batch_size, batch_size), std::span<out_type>(out));
        for (const auto o : out) {
            sum += detail::owner_bits(o);
        }
        b = b + 1 == batches ? 0 : b + 1;
    }
    detail::count_memory(state, prepared);
    detail::count_batches(state);
    const auto done = static_cast<std::size_t>(state.iterations());
    std::uint64_t pass = 0;
    std::uint64_t prefix = 0;
    for (std::size_t j = 0; j < std::min(done, batches); ++j) {
        const auto in = inputs.subspan(j * batch_size, batch_size);
        (void)batch(prepared, in, std::span<out_type>(out));
        for (std::size_t k = 0; k < batch_size; ++k) {
            const auto bits = detail::owner_bits(out[k]);
            if (bits != detail::owner_bits(one(prepared, in[k]))) {
                return detail::fail(state, name, "input " + std::to_string(j * batch_size + k) +
                                                     ": the batch and the one-at-a-time lookup differ");
            }
            pass += bits;
            prefix += j < done % batches ? bits : 0;
        }
    }
    detail::check_sum(state, name, sum, static_cast<std::uint64_t>(done / batches) * pass + prefix);
}

/// Batched fresh keys: each iteration makes batch_size fresh keys into a buffer, then looks
/// them up with batch(prepared, keys, out). Untimed, the same keys one(prepared, key) at a time.
template <class Prepared, class Batch, class One>
void time_fresh_batches(benchmark::State& state, const std::string& name, const Prepared& prepared,
                        const Batch& batch, const One& one) {
    using out_type = std::invoke_result_t<const One&, const Prepared&, std::string_view>;
    std::vector<std::array<char, key_length>> bytes(batch_size);
    std::vector<std::string_view> views;
    for (const auto& k : bytes) {
        views.emplace_back(k.data(), runtime_key_length());
    }
    std::vector<out_type> out(batch_size);
    const std::uint64_t first = detail::next_fresh_key;
    std::uint64_t n = first;
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (auto& k : bytes) {
            k = fresh_key(n++).bytes;
        }
        (void)batch(prepared, std::span<const std::string_view>(views), std::span<out_type>(out));
        for (const auto o : out) {
            sum += detail::owner_bits(o);
        }
    }
    detail::next_fresh_key = n;
    detail::count_memory(state, prepared);
    detail::count_batches(state);
    std::uint64_t untimed = 0;
    for (std::uint64_t k = first; k < n; ++k) {
        untimed += detail::owner_bits(one(prepared, fresh_key(k).view()));
    }
    detail::check_sum(state, name, sum, untimed);
}

// ---- The lookups, as closures (inlined into the loops above).

/// The owner of a point, and of a key (hashed by the strategy's key hash, as callers do).
inline constexpr auto pick_owner = [](const auto& s, std::uint64_t point) noexcept { return s.pick(point); };
inline constexpr auto locate_owner = [](const auto& s, std::string_view key) noexcept {
    return &keyplace::locate(s, key);
};
/// The owner's index of a key, as locate() finds it before it turns the index into a node.
inline constexpr auto locate_index_owner = [](const auto& s, std::string_view key) noexcept {
    return keyplace::detail::pick_of_key(s, key);
};
/// The key's XXH3 alone, the hash floor (nothing prepared).
inline constexpr auto hash_owner = [](int, std::string_view key) noexcept { return keyplace::xxh3{}(key); };
inline constexpr auto no_structure = [](const benchmark::State&) { return 0; };
/// The memory floor's lookup: the hash, then one load at it.
inline constexpr auto load_owner = [](const load_table& t, std::string_view key) noexcept {
    return t.load(keyplace::xxh3{}(key));
};
/// One load at a prepared point.
inline constexpr auto point_load = [](const load_table& t, std::uint64_t point) noexcept { return t.load(point); };
/// The batched forms.
inline constexpr auto pick_batch_owners = [](const auto& s, std::span<const std::uint64_t> in,
                                             std::span<keyplace::node_index> out) noexcept {
    return keyplace::pick_batch(s, in, out);
};
inline constexpr auto locate_batch_owners = [](const auto& s, std::span<const std::string_view> in,
                                               std::span<const keyplace::node*> out) noexcept {
    return keyplace::locate_batch(s, in, out);
};
/// The memory floor of a batch: the same hashes and loads, issued independently.
inline constexpr auto load_batch = [](const load_table& t, std::span<const std::string_view> in,
                                      std::span<std::uint64_t> out) noexcept {
    for (std::size_t i = 0; i < in.size(); ++i) {
        out[i] = t.load(keyplace::xxh3{}(in[i]));
    }
    return in.size();
};

// ---- Registration: a name, what to build from the benchmark's arguments (untimed), the loop.

/// Throughput of lookup over inputs on what prepare(state) builds.
template <class Input, class Prepare, class Lookup, class Reference = no_reference>
auto lookup_benchmark(const std::string& name, std::span<const Input> inputs, Prepare prepare, Lookup lookup,
                      Reference reference = {}) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = prepare(state);
        time_lookups(state, name, prepared, inputs, lookup, reference);
    });
}
/// pick() of the strategy make(state) builds, over the prepared points.
template <class Make>
auto pick_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return lookup_benchmark(name, points(), make, pick_owner);
}
/// locate() of the strategy make(state) builds, over the 16-byte keys: hashing included.
template <class Make>
auto locate_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return lookup_benchmark(name, keys(), make, locate_owner);
}
/// The key's hash alone: the floor every locate is measured against.
inline auto hash_benchmark(const std::string& name) -> benchmark::internal::Benchmark* {
    return lookup_benchmark(name, keys(), no_structure, hash_owner);
}

/// Latency chain of lookup(prepare(state), key) over the 16-byte keys (see time_chain).
template <class Prepare, class Lookup, class Reference = no_reference>
auto chain_benchmark(const std::string& name, Prepare prepare, Lookup lookup, Reference reference = {})
    -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = prepare(state);
        time_chain(state, name, prepared, keys(), lookup, reference);
    });
}

/// Fresh keys located in the strategy make(state) builds (see time_fresh).
template <class Make>
auto fresh_locate_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = make(state);
        time_fresh(state, name, prepared, locate_owner);
    });
}
/// Its memory floor: fresh keys hashed and loaded from a load_table of the strategy's size.
template <class Make>
auto fresh_floor_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const load_table table(make(state).memory_bytes());
        time_fresh(state, name, table, load_owner);
    });
}

/// locate() on make(state) paired with the key's hash alone (time_paired).
template <class Make>
auto paired_locate_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto s = make(state);
        time_paired(state, name, s, keys(), locate_owner, 0, keys(), hash_owner);
    });
}
/// pick() on make(state) over the prepared points, paired with the key's hash alone.
template <class Make>
auto paired_pick_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto s = make(state);
        time_paired(state, name, s, points(), pick_owner, 0, keys(), hash_owner);
    });
}
/// The locate floor of make(state) (hash + one load, as locate_floor_benchmark) paired with the hash alone.
template <class Make>
auto paired_floor_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const load_table table(make(state).memory_bytes());
        time_paired(state, name, table, keys(), load_owner, 0, keys(), hash_owner);
    });
}

/// The throughput floor of a locate on make(state): over the same prepared keys, the key's hash
/// and one load at it from a table as large as the structure (no structure can answer with less).
template <class Make>
auto locate_floor_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const load_table table(make(state).memory_bytes());
        time_lookups(state, name, table, keys(), load_owner);
    });
}

/// The same floor without the hash: one load at each prepared point from that table.
template <class Make>
auto pick_floor_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const load_table table(make(state).memory_bytes());
        time_lookups(state, name, table, points(), point_load);
    });
}

/// pick_batch over the prepared points, batch_size at a time.
template <class Make>
auto pick_batch_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = make(state);
        time_batches(state, name, prepared, points(), pick_batch_owners, pick_owner);
    });
}
/// locate_batch over the prepared keys, batch_size at a time.
template <class Make>
auto locate_batch_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = make(state);
        time_batches(state, name, prepared, keys(), locate_batch_owners, locate_owner);
    });
}
/// locate_batch over batches of fresh keys, and its floor (the same loads, independent).
template <class Make>
auto fresh_locate_batch_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const auto prepared = make(state);
        time_fresh_batches(state, name, prepared, locate_batch_owners, locate_owner);
    });
}
template <class Make>
auto fresh_floor_batch_benchmark(const std::string& name, Make make) -> benchmark::internal::Benchmark* {
    return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) {
        const load_table table(make(state).memory_bytes());
        time_fresh_batches(state, name, table, load_batch, load_owner);
    });
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
