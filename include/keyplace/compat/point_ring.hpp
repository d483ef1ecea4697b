// keyplace — which node owns a key. compat::point_ring: a ring over points a reference system
// chose itself, kept in the caller's node order: a configuration of the sorted-ring engine.
#ifndef KEYPLACE_COMPAT_POINT_RING_HPP_INCLUDED
#define KEYPLACE_COMPAT_POINT_RING_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/engine/sorted_ring.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// The most points a point_ring may hold (as every ring).
inline constexpr std::size_t point_ring_max_points = ring_max_points;

using keyplace::ring_point;

/// The points of a point_ring, each with the index of its owner in the node list, and the
/// lookup rule.
template <std::integral Point>
struct given_points {
    std::vector<ring_point<Point>> points;
    lookup_rule rule = lookup_rule::at_or_after;

    given_points() = default;
    given_points(std::vector<ring_point<Point>> p, lookup_rule r = lookup_rule::at_or_after)  // NOLINT: implicit
        : points(std::move(p)), rule(r) {}
    given_points(std::initializer_list<ring_point<Point>> p)  // NOLINT: implicit
        : points(p) {}
};

/// A ring over explicit points: the sorted-ring engine with points the caller chose, nodes kept
/// in the order given (the reference systems' "server index"). Point is the reference system's
/// point type (std::uint32_t for ketama, std::uint64_t for Envoy, std::int64_t for Cassandra
/// tokens, compared as signed); KeyHash turns key bytes into a point (locate() applies it).
/// Equal points from different nodes are ordered by node index, libmemcached's rule; systems
/// that leave that order unspecified (libketama, twemproxy, Envoy) agree with us wherever their
/// points are distinct. A node may hold no point: it is then never picked, and the walk and
/// pick_n pass only the holders. build(nodes, points) throws keyplace::error on an empty node
/// list, an empty, over-long or duplicate id, a weight not finite and > 0, no points
/// (errc::no_points), more than point_ring_max_points points, or a point whose owner is not a
/// node. It does not derive: give the points again.
template <std::integral Point, hasher KeyHash>
class point_ring : public detail::ring_strategy<point_ring<Point, KeyHash>, Point, KeyHash, node, given_points<Point>,
                                                detail::derivation::none, detail::node_order::as_given> {
    friend detail::lifecycle<point_ring, node, given_points<Point>, detail::derivation::none,
                             detail::node_order::as_given>;

public:
    using entry = ring_point<Point>;

private:
    point_ring() = default;

    auto assign(std::span<const node> input, const given_points<Point>& given) -> detail::failure {
        detail::lazy_vector<node, point_ring> sorted;  // validates only: the ring keeps the given order
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (auto f = this->engine_.assign(given.points, input.size(), given.rule)) {
            return f;
        }
        this->nodes_.assign(input.begin(), input.end());
        return {};
    }
};

/// The rule of chosen points (strategy "tokens", whose points are a node's own choice, unlike
/// the compat rings' derived points): every node holds at least one (no_points) and no point is
/// listed twice (duplicate_token), naming the node and the point.
template <std::integral Point, hasher KeyHash>
[[nodiscard]] auto check_chosen_points(const point_ring<Point, KeyHash>& ring) -> error_info {
    std::vector<bool> holds(ring.size(), false);
    for (const node_index o : ring.owners()) {
        holds[o.value] = true;
    }
    for (std::size_t i = 0; i < holds.size(); ++i) {
        if (!holds[i]) {
            return detail::fail(errc::no_points, "node " + detail::quote(ring.nodes()[i].id) + " has no tokens").at_node(i);
        }
    }
    return detail::distinct_points(ring.points(), ring.owners(), ring.nodes(), "token");
}

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
