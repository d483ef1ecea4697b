// keyplace — which node owns a key. Envoy's consistent-hashing load balancers, entry for entry:
// RING_HASH (a ketama-style ring, XXH64 or MurmurHash2 entries) and MAGLEV (Eisenbud et al.,
// NSDI 2016, with Envoy's weighted fill), as envoyproxy/envoy builds them in
// source/extensions/load_balancing_policies/{ring_hash,maglev,common/thread_aware_lb_impl.cc}
// (Envoy main; older releases hold the same code under source/common/upstream/), checked
// against the vectors of Envoy's ring_hash_lb_test.cc and maglev_lb_test.cc.
//
// Envoy computes entry counts in IEEE double arithmetic; to be bit-compatible these types do
// too, the one exception to keyplace's integer-only placement rule. The operations are single
// correctly rounded +, *, /, ceil and comparisons, so any IEEE-754 binary64 target without
// -ffast-math (and without x87 excess precision) agrees with Envoy's x86-64/aarch64 builds.
#ifndef KEYPLACE_COMPAT_ENVOY_HPP_INCLUDED
#define KEYPLACE_COMPAT_ENVOY_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/murmur2.hpp>
#include <keyplace/detail/rounding.hpp>
#include <keyplace/detail/engine/slot_table.hpp>
#include <keyplace/detail/engine/sorted_ring.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__FAST_MATH__)
#error "keyplace/compat/envoy.hpp needs IEEE-754 arithmetic: compile without -ffast-math"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "keyplace/compat/envoy.hpp needs FLT_EVAL_METHOD == 0 (no excess precision; use SSE2 on x86)"
#endif

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// The weight of one Envoy locality (LocalityLbEndpoints.load_balancing_weight). A node's
/// locality is its `where`: region, zone, and rack standing for Envoy's sub_zone.
struct envoy_locality_weight {
    location where;
    std::uint32_t weight = 1;
};

/// Envoy's RingHash.hash_function for the ring entries (request keys are always XXH64).
enum class envoy_hash_function {
    xx_hash,        ///< XXH64, seed 0 (DEFAULT_HASH, XX_HASH)
    murmur_hash_2,  ///< MurmurHash2-64 seed 0xc70f6907, = libstdc++ std::hash<std::string>
};

/// Envoy's limits: RingHash.{minimum,maximum}_ring_size <= 8M, Maglev.table_size <= 5000011.
inline constexpr std::uint64_t envoy_max_ring_size = std::uint64_t{8} * 1024 * 1024;
inline constexpr std::uint64_t envoy_max_table_size = 5000011;

struct envoy_ring_hash_config {
    std::uint64_t min_ring_size = 1024;
    std::uint64_t max_ring_size = envoy_max_ring_size;
    envoy_hash_function hash_function = envoy_hash_function::xx_hash;
    /// Non-empty: locality weighted balancing (locality_weighted_lb_config). Every node's
    /// `where` must be listed (in any order); a node of a zero-weight locality holds no entry.
    /// The ring then takes hosts locality by locality, in Envoy's order: local_locality first,
    /// then by (region, zone, sub_zone); within a locality, in node order.
    std::vector<envoy_locality_weight> locality_weights{};
    /// The Envoy proxy's own locality (its bootstrap node.locality), if it has one.
    std::optional<location> local_locality{};
};

struct envoy_maglev_config {
    std::uint64_t table_size = 65537;  ///< prime, <= 5000011 (Envoy's DefaultTableSize)
    std::vector<envoy_locality_weight> locality_weights{};  ///< as in envoy_ring_hash_config
};

/// MurmurHash2-64 as a keyplace hasher (libstdc++'s std::hash<std::string> on 64-bit targets).
struct murmur2_64 {
    std::uint64_t seed = detail::std_hash_seed;

    [[nodiscard]] constexpr auto operator()(std::string_view bytes) const noexcept -> std::uint64_t {
        return detail::murmur2_64(bytes, seed);
    }
    [[nodiscard]] auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint64_t {
        return detail::murmur2_64(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), seed);
    }
};

}  // namespace compat

namespace detail {

/// A node taking part in an Envoy build (in a locality of weight > 0) and its normalized weight.
struct envoy_host_weight {
    std::uint32_t node;
    double weight;
};

/// Envoy's normalized host weights (thread_aware_lb_impl.cc): nw = w * share / sum(w in the
/// group), share = locality weight / sum of locality weights (1.0 without localities), in
/// Envoy's order: node order, or locality order then node order within each locality.
struct envoy_weights {
    std::vector<envoy_host_weight> hosts;
    double min = 1.0;
    double max = 0.0;
};

template <class = void>  // instantiated only where used
auto envoy_locality_name(const location& where) -> std::string {
    return "locality " + quote(where.region) + "/" + quote(where.zone) + "/" + quote(where.rack);
}

/// Appends the hosts of one group (all nodes, or one locality) with their normalized weights.
template <class Tag = void>  // instantiated only where used (detail/lazy.hpp)
auto envoy_normalize_group(std::span<const node> nodes, const std::vector<dependent_t<std::uint32_t, Tag>>& members,
                                  double share, const std::string& group, envoy_weights& out) -> failure {
    std::uint64_t sum = 0;
    for (const std::uint32_t i : members) {
        sum += static_cast<std::uint64_t>(nodes[i].weight);
    }
    if (sum > std::numeric_limits<std::uint32_t>::max()) {
        return fail(errc::invalid_weight, "the weights of " + group + " sum to " + std::to_string(sum) +
                                              ", above Envoy's limit 4294967295");
    }
    for (const std::uint32_t i : members) {
        const double nw = nodes[i].weight * share / static_cast<double>(sum);
        out.hosts.push_back({i, nw});
        out.min = std::min(out.min, nw);
        out.max = std::max(out.max, nw);
    }
    return {};
}

/// Validates Envoy's weights (whole numbers 1 to 2^32-1, load_balancing_weight) and the
/// locality weights, and normalizes. nodes is already a valid membership. Localities are taken
/// in Envoy's order (upstream_impl.cc builds it from a std::map with LocalityLess): the Envoy
/// node's own locality (local) first, then by (region, zone, sub_zone); only localities that
/// hold nodes are in Envoy's list, so only their weights are summed. O(n * L + L log L).
template <class Tag = void>  // instantiated only where used (detail/lazy.hpp)
auto envoy_normalize(std::span<const node> nodes, std::span<const compat::envoy_locality_weight> localities,
                            const location* local, envoy_weights& out) -> failure {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const node& n = nodes[i];
        if (!(n.weight <= 4294967295.0 && n.weight == detail::floor_nonnegative(n.weight))) {
            return fail(errc::invalid_weight, "node " + quote(n.id) + ": weight " + format_weight(n.weight) +
                                                  " is not a whole number from 1 to 4294967295 (Envoy's "
                                                  "load_balancing_weight)")
                .at_node(i);
        }
    }
    envoy_weights w;
    if (localities.empty()) {
        std::vector<dependent_t<std::uint32_t, Tag>> all(nodes.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
            all[i] = static_cast<std::uint32_t>(i);
        }
        if (auto f = envoy_normalize_group(nodes, all, 1.0, "the nodes", w)) {
            return f;
        }
        out = std::move(w);
        return {};
    }
    std::vector<dependent_t<compat::envoy_locality_weight, Tag>> order(localities.begin(), localities.end());
    // Envoy's order: the local locality first, then by (region, zone, sub_zone).
    const auto before = [local](const location& a, const location& b) {
        const bool a_local = local != nullptr && a == *local;
        const bool b_local = local != nullptr && b == *local;
        if (a_local != b_local) {
            return a_local;
        }
        if (a.region != b.region) {
            return a.region < b.region;
        }
        return a.zone != b.zone ? a.zone < b.zone : a.rack < b.rack;
    };
    std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) { return before(x.where, y.where); });
    const auto twice = std::adjacent_find(order.begin(), order.end(),
                                          [](const auto& a, const auto& b) { return a.where == b.where; });
    if (twice != order.end()) {
        return fail(errc::duplicate_domain, envoy_locality_name(twice->where) + " has more than one weight");
    }
    std::vector<dependent_t<std::vector<std::uint32_t>, Tag>> members(order.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto it = std::find_if(order.begin(), order.end(),
                                     [&](const compat::envoy_locality_weight& l) { return l.where == nodes[i].where; });
        if (it == order.end()) {
            return fail(errc::unknown_domain, "node " + quote(nodes[i].id) + " is in " +
                                                    envoy_locality_name(nodes[i].where) + ", which has no weight");
        }
        members[static_cast<std::size_t>(it - order.begin())].push_back(static_cast<std::uint32_t>(i));
    }
    std::uint64_t sum = 0;
    for (std::size_t l = 0; l < order.size(); ++l) {
        sum += members[l].empty() ? 0 : order[l].weight;
    }
    if (sum > std::numeric_limits<std::uint32_t>::max()) {
        return fail(errc::invalid_weight, "the locality weights sum to " + std::to_string(sum) +
                                                ", above Envoy's limit 4294967295");
    }
    for (std::size_t l = 0; l < order.size(); ++l) {
        if (order[l].weight == 0 || members[l].empty()) {
            continue;  // Envoy skips a zero-weight locality's hosts: they hold no entries
        }
        const double share = static_cast<double>(order[l].weight) / static_cast<double>(sum);
        if (auto f = envoy_normalize_group(nodes, members[l], share, envoy_locality_name(order[l].where), w)) {
            return f;
        }
    }
    if (w.hosts.empty()) {
        return fail(errc::no_points, "no node is in a locality of weight > 0");
    }
    out = std::move(w);
    return {};
}

/// a * b rounded to double before any later addition: keeps the compiler from fusing
/// `target += a * b` into one FMA (-ffp-contract), as Envoy's x86-64 builds (no FMA in the
/// baseline instruction set) compute it.
[[nodiscard]] inline auto envoy_rounded_product(double a, double b) noexcept -> double {
    volatile double p = a * b;
    return p;
}

}  // namespace detail

namespace compat {

/// Envoy's RING_HASH load balancer. Node ids are Envoy's host hash keys: the string Envoy hashes
/// for a host, which is the envoy.lb metadata `hash_key` if set, else the hostname with
/// use_hostname_for_hashing, else the address as `ip:port` ("127.0.0.1:90"). Weights are
/// Envoy's load_balancing_weight (whole numbers). Nodes keep the given order, which is Envoy's
/// host order: with weights that do not divide the ring evenly it decides which hosts get the
/// extra entries. Entry i of a host is the hash of "<id>_<i>"; pick(hash) is the first entry at
/// or after hash, wrapping. Request hashes are XXH64 (seed 0) of the hashed request value,
/// whatever the ring's hash function, so key_hash is xxh64. Envoy leaves the order of equal
/// entry hashes unspecified (std::sort); here they go by node index, so the two agree wherever
/// entry hashes are distinct (64-bit hashes: a tie is about R^2 / 2^65 likely). Hosts of a
/// locality of weight 0 hold no entry: they are members, not holders.
///
/// build() throws keyplace::error naming the value: the node errors of every strategy, a weight
/// that is not a whole number 1 to 2^32-1 (invalid_weight), weights (or locality weights)
/// summing above 2^32-1, a ring size of 0 or above 8M or min_ring_size > max_ring_size (Envoy's
/// message, invalid_ring_size), a node in an unlisted locality (unknown_domain), a locality
/// listed twice (duplicate_domain), or no node in a locality of weight > 0 (no_points).
/// O(R log R) for R ring entries. with() appends a host and without() removes one, rebuilding
/// as Envoy does on a host set change.
template <class Unused = void>
class basic_envoy_ring_hash
    : public detail::ring_strategy<basic_envoy_ring_hash<Unused>, std::uint64_t, xxh64, keyplace::node, envoy_ring_hash_config,
                                   detail::derivation::any, detail::node_order::as_given> {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

    friend detail::lifecycle<basic_envoy_ring_hash, keyplace::node, envoy_ring_hash_config, detail::derivation::any,
                             detail::node_order::as_given>;

public:
    /// Ring entries (Envoy's ring_hash_lb.size stat, save for rounding of ceil(scale)).
    [[nodiscard]] auto ring_size() const noexcept -> std::size_t { return this->points().size(); }

    /// Envoy's choice for retry attempt `attempt` (0 = pick(hash)) when a retry host predicate
    /// rejected the earlier ones: the entry `attempt` places after pick's, modulo the ring size
    /// (it may name the same node again).
    [[nodiscard]] auto pick_retry(std::uint64_t hash, std::uint32_t attempt) const noexcept -> node_index {
        return this->owners()[(this->entry_of(hash) + attempt) % this->ring_size()];
    }

private:
    basic_envoy_ring_hash() = default;

    static auto check_sizes(const envoy_ring_hash_config& c) -> detail::failure {
        for (const auto& [name, value] : {std::pair{"minimum_ring_size", c.min_ring_size},
                                          std::pair{"maximum_ring_size", c.max_ring_size}}) {
            if (value == 0 || value > envoy_max_ring_size) {
                return detail::fail(errc::invalid_ring_size, std::string("ring hash: ") + name + " (" +
                                                                 std::to_string(value) + ") is not from 1 to 8388608");
            }
        }
        if (c.min_ring_size > c.max_ring_size) {
            return detail::fail(errc::invalid_ring_size, "ring hash: minimum_ring_size (" +
                                                             std::to_string(c.min_ring_size) +
                                                             ") > maximum_ring_size (" +
                                                             std::to_string(c.max_ring_size) + ")");
        }
        return {};
    }

    auto assign(std::span<const keyplace::node> input, const envoy_ring_hash_config& config) -> detail::failure {
        if (auto f = check_sizes(config)) {
            return f;
        }
        lazy_vector<keyplace::node> sorted;  // only validates: the ring keeps Envoy's host order
        detail::envoy_weights w;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        const location* local = config.local_locality ? &*config.local_locality : nullptr;
        if (auto f = detail::envoy_normalize(input, config.locality_weights, local, w)) {
            return f;
        }
        // Scale so the lightest host gets a whole number of entries, capped at max_ring_size.
        const double scale = std::min(detail::ceil_nonnegative(w.min * static_cast<double>(config.min_ring_size)) / w.min,
                                      static_cast<double>(config.max_ring_size));
        // Envoy's entry counts, host by host: visited once to count them, once to hash them.
        const auto each_entry = [&](auto&& emit) {
            double current = 0.0;
            double target = 0.0;
            for (const auto& [owner, nw] : w.hosts) {
                target += detail::envoy_rounded_product(scale, nw);
                for (std::uint64_t i = 0; current < target; ++i, current += 1.0) {
                    emit(owner, i);
                }
            }
        };
        std::size_t total = 0;
        each_entry([&total](std::uint32_t, std::uint64_t) { ++total; });
        const auto generate = [&](std::span<std::uint64_t> points, std::span<node_index> owners) {
            std::string buf;
            std::size_t stem = 0;
            std::size_t at = 0;
            each_entry([&](std::uint32_t owner, std::uint64_t i) {
                if (i == 0) {
                    buf.assign(input[owner].id);
                    buf += '_';
                    stem = buf.size();
                }
                char digits[24];
                const auto end = std::to_chars(digits, digits + sizeof digits, i).ptr;
                buf.resize(stem);
                buf.append(digits, end);
                points[at] = config.hash_function == envoy_hash_function::murmur_hash_2 ? detail::murmur2_64(buf)
                                                                                       : xxh64{}(std::string_view(buf));
                owners[at++] = node_index{owner};
            });
        };
        if (auto f = this->engine_.assign_generated(total, input.size(), lookup_rule::at_or_after, generate)) {
            return f;
        }
        this->nodes_.assign(input.begin(), input.end());
        this->config_ = config;
        return {};
    }
};

/// (A template only so that translation units that do not use it do not compile it.)
using envoy_ring_hash = basic_envoy_ring_hash<>;

/// Envoy's MAGLEV load balancer. Node ids are Envoy's host hash keys (see envoy_ring_hash),
/// weights its load_balancing_weight. Hosts are placed in key order (Envoy sorts by key, then
/// by host pointer: duplicate keys would make its table depend on memory addresses, so they
/// are rejected here), so nodes() is sorted by id and the input order does not matter. Host
/// i's permutation is offset = XXH64(id, 0) % M, skip = XXH64(id, 1) % (M - 1) + 1; the table
/// is filled by Envoy's weighted rounds (in round r host i takes its next free preferred slot
/// unless r * nw_i < target_i, then target_i += max nw); pick(hash) = table[hash % M]. One host
/// (Envoy's "degenerate" table) is picked for every hash without storing a table. Envoy does
/// not require M >= the host count, nor do we: hosts a full table leaves out hold no entries,
/// and neither do hosts of a locality of weight 0.
///
/// build() throws keyplace::error naming the value: the errors of envoy_ring_hash (ring sizes
/// aside), and a table size that is not prime (Envoy's message, table_size_not_prime) or above
/// 5000011 (invalid_table_size). O(M log M) expected, whatever the weights (the fill visits a
/// host only in the rounds it takes a slot in, with Envoy's exact test). with() and without()
/// rebuild.
template <class Unused = void>
class basic_envoy_maglev : public detail::table_strategy<basic_envoy_maglev<Unused>, xxh64, keyplace::node, envoy_maglev_config,
                                                   detail::derivation::any, detail::node_order::by_id> {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

    friend detail::lifecycle<basic_envoy_maglev, keyplace::node, envoy_maglev_config, detail::derivation::any,
                             detail::node_order::by_id>;

public:
    /// A host's permutation: its first preferred slot and its step, for table size m >= 2.
    [[nodiscard]] static auto offset(std::string_view id, std::uint64_t m) noexcept -> std::uint64_t {
        return xxh64{0}(id) % m;
    }
    [[nodiscard]] static auto skip(std::string_view id, std::uint64_t m) noexcept -> std::uint64_t {
        return xxh64{1}(id) % (m - 1) + 1;
    }
    /// Whether one host takes every hash (no table is stored).
    [[nodiscard]] auto degenerate() const noexcept -> bool { return this->entry_width() == 0; }

    /// Envoy's choice for retry attempt `attempt` (0 = pick(hash)): the hash xor 2^64 - attempt,
    /// then table[... % M] (it may name the same node again).
    [[nodiscard]] auto pick_retry(std::uint64_t hash, std::uint32_t attempt) const noexcept -> node_index {
        return this->pick(hash ^ (std::uint64_t{0} - attempt));
    }

private:
    basic_envoy_maglev() = default;

    auto assign(std::span<const keyplace::node> input, const envoy_maglev_config& config) -> detail::failure {
        const std::uint64_t m = config.table_size;
        if (m > envoy_max_table_size) {  // first: primality of a huge value costs up to 2^31 divisions
            return detail::fail(errc::invalid_table_size,
                                "maglev table size " + std::to_string(m) + " is above Envoy's limit 5000011");
        }
        if (!detail::is_prime(m)) {
            return detail::fail(errc::table_size_not_prime,
                                "The table size of maglev must be prime number: " + std::to_string(m));
        }
        lazy_vector<keyplace::node> sorted;
        detail::envoy_weights w;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (auto f = detail::envoy_normalize(sorted, config.locality_weights, nullptr, w)) {
            return detail::in_input_order(std::move(f), input);
        }
        // Key order (node index order, the ids being sorted), whatever the locality order.
        std::sort(w.hosts.begin(), w.hosts.end(),
                  [](const detail::envoy_host_weight& a, const detail::envoy_host_weight& b) { return a.node < b.node; });
        if (w.hosts.size() == 1) {
            this->engine_.assign_uniform(w.hosts.front().node, m, sorted.size());
        } else {
            lazy_vector<std::uint64_t> offsets;
            lazy_vector<std::uint64_t> skips;
            lazy_vector<double> target(w.hosts.size(), 0.0);
            for (const auto& host : w.hosts) {
                offsets.push_back(offset(sorted[host.node].id, m));
                skips.push_back(skip(sorted[host.node].id, m));
            }
            // Envoy's turn rule: in round r host h takes a slot unless r * nw_h < target_h, and
            // then target_h += max nw. Its next turn after round r is the first r' > r that passes
            // the same test; r' * nw is monotone in r', so the quotient's ceiling, stepped to the
            // exact first round, finds it without asking every round.
            const auto envoy_targets = [&](std::uint64_t round, std::size_t h) -> std::uint64_t {
                target[h] += w.max;
                const double nw = w.hosts[h].weight;
                const auto turn = [&](std::uint64_t r) { return !(static_cast<double>(r) * nw < target[h]); };
                const double estimate = detail::ceil_nonnegative(target[h] / nw);
                constexpr std::uint64_t never = std::uint64_t{1} << 62;  // Envoy would loop that long first
                if (!(estimate < static_cast<double>(never))) {
                    return never;
                }
                std::uint64_t r = std::max(round + 1, static_cast<std::uint64_t>(estimate));
                while (r > round + 1 && turn(r - 1)) {
                    --r;
                }
                while (!turn(r)) {
                    ++r;
                }
                return r;
            };
            this->engine_.assign_filled(m, sorted.size(), [&](auto slots) {
                detail::populate_slots(offsets, skips, slots, envoy_targets);
                for (auto& slot : slots) {
                    slot = static_cast<std::remove_reference_t<decltype(slot)>>(w.hosts[slot].node);
                }
            });
        }
        this->nodes_ = std::move(sorted);
        this->config_ = config;
        return {};
    }
};

/// (A template only so that translation units that do not use it do not compile it.)
using envoy_maglev = basic_envoy_maglev<>;

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
