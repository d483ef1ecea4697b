// keyplace — which node owns a key. Multi-probe consistent hashing: Appleton & O'Reilly,
// "Multi-probe consistent hashing" (arXiv 1505.00062, 2015): one point per node, K probes per
// key, the node whose point follows a probe most closely wins (placement contract v1, doc/contract.md).
#ifndef KEYPLACE_MULTIPROBE_HPP_INCLUDED
#define KEYPLACE_MULTIPROBE_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/detail/engine/sorted_ring.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Multi-probe parameters: the number of probes per key, 1 .. multiprobe_max_probes. More probes
/// balance better (max/mean about 1.09 at 21, 1.06 at 41, doc/benchmarks.md) and cost a successor search each.
struct multiprobe_config {
    std::uint32_t probes = 21;
};

/// The most probes a key may take (a walk keeps one cursor per probe on the stack: 16 KiB).
inline constexpr std::uint32_t multiprobe_max_probes = 1024;

/// A key's probes: probe i is start + i * step, modulo 2^64.
struct probe_sequence {
    std::uint64_t start = 0;
    std::uint64_t step = 0;
};

/// What to do with two nodes whose points are equal.
enum class shared_point : std::uint8_t {
    refuse,     ///< a build error (errc::duplicate_token) naming both nodes
    last_wins,  ///< the point belongs to the later node in the order given (go-mpchash's map)
};

/// What basic_multiprobe needs from a configuration: the key hash, the node order, a node's one
/// point, the probes of a hashed key, and the rule for shared points.
template <class T>
concept multiprobe_traits =
    hasher<typename T::key_hash> && requires(std::string_view id, std::uint64_t point) {
        { T::name } -> std::convertible_to<std::string_view>;
        { T::order } -> std::convertible_to<detail::node_order>;
        { T::on_shared } -> std::convertible_to<shared_point>;
        { T::node_point(id) } -> std::same_as<std::uint64_t>;
        { T::point_probes(point) } noexcept -> std::same_as<probe_sequence>;
    };

/// The native multi-probe configuration (contract v1): nodes sorted by id; a node's point is
/// P_0(id) = XXH3-64(le32(len(id)) ++ id ++ le32(0)), the ring's first point of the node; a key
/// point k probes from k in steps of XXH3-64(le64(k)) | 1 (odd, so the probes of a key are
/// distinct); two nodes on one point are refused.
struct native_multiprobe_traits {
    using key_hash = xxh3;
    static constexpr std::string_view name = "multiprobe";
    static constexpr detail::node_order order = detail::node_order::by_id;
    static constexpr shared_point on_shared = shared_point::refuse;

    [[nodiscard]] static auto node_point(std::string_view id) -> std::uint64_t { return detail::node_hasher(id)(0); }
    [[nodiscard]] static auto point_probes(std::uint64_t point) noexcept -> probe_sequence {
        std::array<unsigned char, 8> le{};
        for (std::size_t b = 0; b < le.size(); ++b) {
            le[b] = static_cast<unsigned char>(point >> (8 * b));
        }
        return {point, XXH3_64bits(le.data(), le.size()) | 1U};
    }
};

/// Multi-probe consistent hashing: every node has one point on the 2^64 circle; a key probes K
/// points; for each probe the node whose point is the first strictly after it (wrapping) is at
/// distance point - probe (mod 2^64); the nearest wins, the earliest probe on a tie. Memory is
/// one point per node; a lookup is K successor searches over the sorted points (the sorted-ring
/// engine under lookup_rule::after). Adding a node moves keys only to it; removing one moves only
/// its keys. No weights: every weight must be 1.
///
/// Preference order (walk, pick_n): node j's distance from a key is the least, over the probes,
/// of (P_j - probe) mod 2^64, a point equal to the probe counting 2^64 (a full turn); nodes come
/// in increasing distance, ties to the earlier probe, then to the lower node index. The first is
/// pick(). walk merges the K clockwise walks from the probes' successors (a node again at each
/// probe's pass): O(K) a step.
///
/// build() throws keyplace::error: empty list, empty, over-long or duplicate id, a weight other
/// than 1 (errc::invalid_weight), probes outside 1..1024 (errc::invalid_argument), two nodes on
/// one point under shared_point::refuse (errc::duplicate_token). O(N log N); with() O(N) when
/// points are refused to share, else a rebuild; without() O(N).
template <multiprobe_traits Traits>
class basic_multiprobe : public detail::lifecycle<basic_multiprobe<Traits>, node, multiprobe_config,
                                                  detail::derivation::any, Traits::order> {
    using base = detail::lifecycle<basic_multiprobe, node, multiprobe_config, detail::derivation::any, Traits::order>;
    friend base;

public:
    using key_hash = typename Traits::key_hash;
    using traits_type = Traits;
    /// Whether the configuration hashes a key's bytes itself (Traits::key_probes), so that a
    /// key's point alone does not give its owner (detail::needs_key_bytes).
    static constexpr bool needs_key_bytes =
        requires(std::span<const std::byte> k) { { Traits::key_probes(k) } noexcept -> std::same_as<probe_sequence>; };

    /// Nodes that own their point (all, unless shared_point::last_wins gave one's point away).
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return engine_.holders(); }
    [[nodiscard]] auto holds(node_index i) const noexcept -> bool { return engine_.count(i) != 0; }
    /// The points in circle order and, index for index, their owners.
    [[nodiscard]] auto points() const noexcept -> std::span<const std::uint64_t> { return engine_.points(); }
    [[nodiscard]] auto owners() const noexcept -> std::span<const node_index> { return engine_.owners(); }
    /// Probes per key.
    [[nodiscard]] auto probes() const noexcept -> std::uint32_t { return this->config_.probes; }
    /// Bytes of the lookup structure (the sorted-ring engine: points, owners, index).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t { return engine_.memory_bytes(); }

    /// The owner of a hashed key: pick_probes(Traits::point_probes(point)). O(K) expected.
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        return pick_probes(Traits::point_probes(point));
    }

    /// The owner for an explicit probe sequence: of the K probes' strict successors, the nearest;
    /// the earliest probe on a tie.
    [[nodiscard]] auto pick_probes(probe_sequence s) const noexcept -> node_index {
        const std::span<const std::uint64_t> pts = engine_.points();
        std::uint64_t probe = s.start;
        std::size_t best = engine_.entry_of(probe);
        std::uint64_t best_gap = gap_of(pts[best], probe);
        for (std::uint32_t i = 1; i < this->config_.probes; ++i) {
            probe += s.step;
            const std::size_t e = engine_.entry_of(probe);
            const std::uint64_t gap = gap_of(pts[e], probe);
            // Selects, not branches: which probe is nearest is a coin toss the predictor loses.
            const bool nearer = gap < best_gap;
            best_gap = nearer ? gap : best_gap;
            best = nearer ? e : best;
        }
        return engine_.owners()[best];
    }

    /// The first min(out.size(), holders()) distinct nodes of walk(point).
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept -> std::size_t {
        return pick_n_probes(Traits::point_probes(point), out);
    }
    [[nodiscard]] auto pick_n_probes(probe_sequence s, std::span<node_index> out) const noexcept -> std::size_t {
        return detail::collect_distinct(probe_walk{*this, s}, 0, out);
    }

    /// The probes of key bytes: Traits::key_probes(key) where the configuration hashes the key
    /// bytes itself (go-mpchash hashes them twice), else point_probes(key_hash(key)).
    [[nodiscard]] static auto key_probes(std::span<const std::byte> key) noexcept -> probe_sequence {
        if constexpr (requires { { Traits::key_probes(key) } noexcept -> std::same_as<probe_sequence>; }) {
            return Traits::key_probes(key);
        } else {
            return Traits::point_probes(key_hash{}(key));
        }
    }
    /// The owner of key bytes, and its preference order: what keyplace::locate and locate_n use.
    [[nodiscard]] auto pick_key(std::span<const std::byte> key) const noexcept -> node_index {
        return pick_probes(key_probes(key));
    }
    [[nodiscard]] auto pick_n_key(std::span<const std::byte> key, std::span<node_index> out) const noexcept
        -> std::size_t {
        return pick_n_probes(key_probes(key), out);
    }

    /// Visits nodes in preference order (see the class comment) until visit(node_index) returns
    /// false or every probe has passed every point once.
    template <class Visit>
    void walk(std::uint64_t point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        walk_probes(Traits::point_probes(point), visit);
    }
    /// walk() for key bytes: the preference order pick_key and pick_n_key take the first of
    /// (what replica_placer walks for a strategy that places a key by its bytes).
    template <class Visit>
    void walk_key(std::span<const std::byte> key, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        walk_probes(key_probes(key), visit);
    }

    template <class Visit>
    void walk_probes(probe_sequence s, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        const std::span<const std::uint64_t> pts = engine_.points();
        const std::span<const node_index> own = engine_.owners();
        const std::size_t total = pts.size();
        const std::uint32_t k = this->config_.probes;
        std::array<cursor, multiprobe_max_probes> at;  // only the first k are used and set
        std::uint64_t probe = s.start;
        for (std::uint32_t i = 0; i < k; ++i, probe += s.step) {
            at[i] = cursor{probe, engine_.entry_of(probe), 0};
        }
        for (;;) {
            std::uint32_t best = k;
            std::uint64_t best_gap = 0;
            for (std::uint32_t i = 0; i < k; ++i) {
                if (at[i].steps == total) {
                    continue;
                }
                const std::uint64_t gap = gap_of(pts[at[i].entry], at[i].probe);
                if (best == k || gap < best_gap) {
                    best = i;
                    best_gap = gap;
                }
            }
            if (best == k || !visit(own[at[best].entry])) {
                return;
            }
            cursor& c = at[best];
            c.entry = c.entry + 1 == total ? 0 : c.entry + 1;
            ++c.steps;
        }
    }

private:
    // A walk from given probes, as collect_distinct takes one (it ignores the point).
    struct probe_walk {
        const basic_multiprobe& over;
        probe_sequence probes;
        [[nodiscard]] auto holders() const noexcept -> std::size_t { return over.holders(); }
        template <class Visit>
        void walk(std::uint64_t, Visit&& visit) const noexcept {
            over.walk_probes(probes, visit);
        }
    };

    struct cursor {
        std::uint64_t probe;
        std::size_t entry;
        std::size_t steps;
    };

    // The distance from a probe to a point strictly after it, minus one: a point equal to the
    // probe is a full turn away (2^64, here 2^64 - 1), every other point (p - probe) - 1.
    [[nodiscard]] static constexpr auto gap_of(std::uint64_t p, std::uint64_t probe) noexcept -> std::uint64_t {
        return p - probe - 1U;
    }

    basic_multiprobe() = default;

    static auto check_config(const multiprobe_config& c) -> detail::failure {
        if (c.probes == 0 || c.probes > multiprobe_max_probes) {
            return detail::fail(errc::invalid_argument, "probes " + std::to_string(c.probes) + " is outside 1.." +
                                                            std::to_string(multiprobe_max_probes));
        }
        return {};
    }

    [[nodiscard]] static auto shared_failure(const node& a, const node& b, std::uint64_t point) -> detail::failure {
        return detail::fail(errc::duplicate_token, "nodes " + detail::quote(a.id) + " and " + detail::quote(b.id) +
                                                       " share the point " + std::to_string(point) + "; " +
                                                       std::string(Traits::name) + " needs one point per node");
    }

    auto assign(std::span<const node> input, const multiprobe_config& config) -> detail::failure {
        if (auto f = check_config(config)) {
            return f;
        }
        detail::lazy_vector<node, basic_multiprobe> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (auto f = detail::unit_weights(input, Traits::name)) {
            return f;
        }
        std::vector<node> members = Traits::order == detail::node_order::by_id
                                        ? std::move(sorted)
                                        : std::vector<node>(input.begin(), input.end());
        if (members.size() > ring_max_points) {
            return detail::fail(errc::too_many_nodes, std::to_string(members.size()) + " nodes; " +
                                                          std::string(Traits::name) + " takes at most " +
                                                          std::to_string(ring_max_points));
        }
        std::vector<std::uint64_t> own(members.size());
        for (std::size_t i = 0; i < members.size(); ++i) {
            own[i] = Traits::node_point(members[i].id);
        }
        const auto generate = [&](std::span<std::uint64_t> pts, std::span<node_index> owners) {
            for (std::size_t i = 0; i < own.size(); ++i) {
                pts[i] = own[i];
                owners[i] = node_index{static_cast<std::uint32_t>(i)};
            }
        };
        // Sorted by (point, owner): a run of equal points ends with the latest node given.
        detail::failure shared{};
        const auto settle = [&](std::span<const std::uint64_t> pts, std::span<node_index> owners) {
            for (std::size_t i = 1; i < pts.size(); ++i) {
                if (pts[i] != pts[i - 1]) {
                    continue;
                }
                if constexpr (Traits::on_shared == shared_point::refuse) {
                    if (!shared) {
                        shared = shared_failure(members[owners[i - 1].value], members[owners[i].value], pts[i]);
                    }
                } else {
                    std::size_t first = i - 1;
                    while (first > 0 && pts[first - 1] == pts[i]) {
                        --first;
                    }
                    for (std::size_t j = first; j < i; ++j) {
                        owners[j] = owners[i];
                    }
                }
            }
        };
        detail::sorted_ring<std::uint64_t> engine;
        engine.for_searches_only();  // K searches a key, two steps each; no owner table
        if (auto f = engine.assign_generated(own.size(), members.size(), lookup_rule::after, generate, settle)) {
            return f;
        }
        if (shared) {
            return shared;
        }
        engine_ = std::move(engine);
        this->nodes_ = std::move(members);
        this->config_ = config;
        return {};
    }

    // Incremental only where points never share (the native rule): one point merged in, O(N).
    // The lifecycle has checked n and that its id is new.
    auto assign_with(const basic_multiprobe& from, const node& n) -> detail::failure
        requires(Traits::on_shared == shared_point::refuse && Traits::order == detail::node_order::by_id)
    {
        if (auto f = detail::unit_weights(std::span<const node>(&n, 1), Traits::name)) {
            return f;
        }
        const std::uint64_t p = Traits::node_point(n.id);
        const auto pts = from.engine_.points();
        const auto hit = std::lower_bound(pts.begin(), pts.end(), p);
        if (hit != pts.end() && *hit == p) {
            return shared_failure(from.nodes_[from.engine_.owners()[static_cast<std::size_t>(hit - pts.begin())].value],
                                  n, p);
        }
        const auto k = static_cast<std::uint32_t>(detail::insert_sorted(this->nodes_, from.nodes_, n));
        engine_.assign_merged(from.engine_, std::span<const std::uint64_t>(&p, 1), k);
        this->config_ = from.config_;
        return {};
    }

    auto assign_without(const basic_multiprobe& from, node_index gone) -> detail::failure
        requires(Traits::on_shared == shared_point::refuse && Traits::order == detail::node_order::by_id)
    {
        if (auto f = engine_.assign_erased(from.engine_, gone.value)) {
            return f;
        }
        this->nodes_ = from.nodes_;
        this->nodes_.erase(this->nodes_.begin() + static_cast<std::ptrdiff_t>(gone.value));
        this->config_ = from.config_;
        return {};
    }

    detail::sorted_ring<std::uint64_t> engine_;
};

/// Native multi-probe consistent hashing, contract v1.
using multiprobe = basic_multiprobe<native_multiprobe_traits>;

KEYPLACE_NAMESPACE_END

#endif
