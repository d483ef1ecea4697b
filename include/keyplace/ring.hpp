// keyplace — which node owns a key. basic_ring<Traits>: the hash ring with virtual nodes
// (Karger et al., "Consistent Hashing and Random Trees", STOC 1997), and keyplace::ring, its
// native configuration (placement contract v1, doc/contract.md).
#ifndef KEYPLACE_RING_HPP_INCLUDED
#define KEYPLACE_RING_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/rounding.hpp>
#include <keyplace/detail/engine/sorted_ring.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Ring parameters. vnodes is the number of points a node of weight 1 gets.
struct ring_config {
    std::uint32_t vnodes = 160;
};

/// What basic_ring needs from a configuration: the point type, the key hash, how many points
/// a node gets, and how its points are derived. Ties between equal points are broken by node
/// index (the id order), so the ring is independent of input order.
template <class T>
concept ring_traits =
    std::unsigned_integral<typename T::point_type> && hasher<typename T::key_hash> &&
    requires(const node& n, const ring_config& c, std::size_t& count,
             std::span<typename T::point_type> out) {
        { T::point_count(n, c, count) } -> std::same_as<detail::failure>;
        { T::derive_points(n, out) } -> std::same_as<void>;
    };

/// The native ring (contract v1): a node of weight w gets llround(vnodes * w) points (one
/// IEEE-754 binary64 product, halves rounded away from zero); point j of a node is
/// XXH3-64(le32(len(id)) ++ id ++ le32(j)), an encoding no two (id, j) pairs share.
struct native_ring_traits {
    using point_type = std::uint64_t;
    using key_hash = xxh3;

    [[nodiscard]] static auto point_count(const node& n, const ring_config& c, std::size_t& count)
        -> detail::failure {
        const double exact = static_cast<double>(c.vnodes) * n.weight;
        if (!(exact < static_cast<double>(ring_max_points) + 0.5)) {
            return detail::fail(errc::too_many_points,
                                "node " + detail::quote(n.id) + ": weight " +
                                    detail::format_weight(n.weight) + " at " +
                                    std::to_string(c.vnodes) +
                                    " vnodes exceeds the ring limit of " +
                                    std::to_string(ring_max_points) + " points");
        }
        count = static_cast<std::size_t>(detail::round_half_away(exact));
        if (count == 0) {
            return detail::fail(errc::invalid_weight,
                                "node " + detail::quote(n.id) + ": weight " +
                                    detail::format_weight(n.weight) + " at " +
                                    std::to_string(c.vnodes) +
                                    " vnodes rounds to 0 points; it needs at least 1");
        }
        return {};
    }

    static void derive_points(const node& n, std::span<point_type> out) {
        detail::node_hasher hash(n.id);
        for (std::size_t j = 0; j < out.size(); ++j) {
            out[j] = hash(static_cast<std::uint32_t>(j));
        }
    }
};

/// A hash ring: every node owns points on a circle of Traits::point_type values; a key belongs
/// to the first point at or after its hash, wrapping past the last point to the first. Nodes are
/// sorted by id, so input order never matters. Immutable after build; with()/without() derive new
/// rings by merging points, without re-sorting. A configuration of the sorted-ring engine.
///
/// Memory: sizeof(point_type) + 4 bytes per point (12 for the native ring), plus a prefix
/// index of one to two bytes per point and a direct owner table (doc/benchmarks.md, "Memory of a build"), plus 4
/// bytes per node; the points are generated and sorted in place, so a build's peak is that
/// steady size plus a byte or two a point.
///
/// build() throws keyplace::error: empty list, empty, over-long or duplicate id, weight not
/// finite and > 0 or rounding to 0 points, vnodes outside 1..ring_max_points, more than
/// ring_max_points points; O(T log T) for T points. with(n): O(T + c log c) for c new points;
/// without(id): O(T).
template <ring_traits Traits>
class basic_ring
    : public detail::ring_strategy<basic_ring<Traits>, typename Traits::point_type, typename Traits::key_hash, node,
                                   ring_config, detail::derivation::any, detail::node_order::by_id> {
    using base = detail::ring_strategy<basic_ring<Traits>, typename Traits::point_type, typename Traits::key_hash,
                                       node, ring_config, detail::derivation::any, detail::node_order::by_id>;
    friend detail::lifecycle<basic_ring, node, ring_config, detail::derivation::any, detail::node_order::by_id>;

public:
    using traits_type = Traits;
    using point_type = typename Traits::point_type;

private:
    basic_ring() = default;

    static auto check_config(const ring_config& c) -> detail::failure {
        if (c.vnodes == 0 || c.vnodes > ring_max_points) {
            return detail::fail(errc::invalid_vnodes, "vnodes " + std::to_string(c.vnodes) + " is outside 1.." +
                                                          std::to_string(ring_max_points));
        }
        return {};
    }

    auto assign(std::span<const node> input, const ring_config& config) -> detail::failure {
        if (auto f = check_config(config)) {
            return f;
        }
        detail::lazy_vector<node, basic_ring> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        std::vector<std::size_t> counts(sorted.size());
        std::size_t total = 0;
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (auto f = Traits::point_count(sorted[i], config, counts[i])) {
                return detail::in_input_order(std::move(f).at_node(i), input);
            }
            total += counts[i];
            if (total > ring_max_points) {
                return detail::too_many_points(total);
            }
        }
        // The total order is (point, node index, vnode index); two entries equal in point and
        // node are indistinguishable in the arrays, so the engine's (point, owner) order suffices.
        const auto generate = [&](std::span<point_type> points, std::span<node_index> owners) {
            std::size_t at = 0;
            for (std::size_t i = 0; i < sorted.size(); ++i) {
                Traits::derive_points(sorted[i], points.subspan(at, counts[i]));
                std::fill_n(owners.begin() + static_cast<std::ptrdiff_t>(at), counts[i],
                            node_index{static_cast<std::uint32_t>(i)});
                at += counts[i];
            }
        };
        if (auto f = this->engine_.assign_generated(total, sorted.size(), lookup_rule::at_or_after, generate)) {
            return f;
        }
        this->nodes_ = std::move(sorted);
        this->config_ = config;
        return {};
    }

    // The lifecycle has checked n and that its id is new.
    auto assign_with(const basic_ring& from, const node& n) -> detail::failure {
        std::size_t count = 0;
        if (auto f = Traits::point_count(n, from.config_, count)) {
            return f;
        }
        const std::size_t old_total = from.points().size();
        if (count > ring_max_points - old_total) {
            return detail::too_many_points(old_total + count);
        }
        std::vector<point_type> fresh(count);
        Traits::derive_points(n, fresh);
        std::sort(fresh.begin(), fresh.end());
        const auto k = static_cast<std::uint32_t>(detail::insert_sorted(this->nodes_, from.nodes_, n));
        this->engine_.assign_merged(from.engine_, fresh, k);
        this->config_ = from.config_;
        return {};
    }

    auto assign_without(const basic_ring& from, node_index gone) -> detail::failure {
        if (auto f = this->engine_.assign_erased(from.engine_, gone.value)) {
            return f;
        }
        this->nodes_ = from.nodes_;
        this->nodes_.erase(this->nodes_.begin() + static_cast<std::ptrdiff_t>(gone.value));
        this->config_ = from.config_;
        return {};
    }
};

/// The native hash ring: XXH3-64 points and keys, contract v1.
using ring = basic_ring<native_ring_traits>;


KEYPLACE_NAMESPACE_END

#endif
