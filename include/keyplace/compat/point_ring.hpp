// keyplace — which node owns a key. compat::point_ring: a ring over points a reference system
// chose itself (ketama continuum points, Envoy ring entries, Cassandra tokens), kept in the
// caller's node order, with the lookup all of them share: the first point at or after the key's
// point, wrapping past the last point to the first.
#ifndef KEYPLACE_COMPAT_POINT_RING_HPP_INCLUDED
#define KEYPLACE_COMPAT_POINT_RING_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// The most points a point_ring may hold (2^28, as keyplace::ring).
inline constexpr std::size_t point_ring_max_points = std::size_t{1} << 28;

/// One point of a point_ring and the index (into the node list) of the node that owns it.
template <std::integral Point>
struct ring_point {
    Point point;
    std::uint32_t owner;
};

/// A ring over explicit points. Point is the reference system's point type (std::uint32_t for
/// ketama, std::uint64_t for Envoy, std::int64_t for Cassandra tokens, compared as signed);
/// KeyHash turns key bytes into a point (locate() applies it). Nodes keep the order given:
/// that order is the reference systems' "server index". Points are sorted by (point, owner
/// index), so equal points from different nodes are ordered by node index, libmemcached's
/// rule; systems that leave that order unspecified (libketama, twemproxy, Envoy) agree with us
/// wherever their points are distinct. A node may hold no point: it is then never picked, and
/// pick_n lists only the nodes that hold points.
template <std::integral Point, hasher KeyHash>
class point_ring {
public:
    using point_type = Point;
    using key_hash = KeyHash;
    using entry = ring_point<Point>;

    /// Builds the ring from the nodes (in order) and their points. Throws keyplace::error on an
    /// empty node list, an empty, over-long or duplicate id, a weight not finite and > 0, no
    /// points, more than point_ring_max_points points, or a point whose owner is not a node.
    [[nodiscard]] static auto build(std::span<const node> nodes, std::vector<entry> points)
        -> point_ring {
        point_ring r;
        if (auto f = r.assign(nodes, std::move(points))) {
            detail::throw_error(std::move(f));
        }
        return r;
    }

    /// As build(), reporting failure through ec (and an empty optional) instead of throwing.
    [[nodiscard]] static auto try_build(std::span<const node> nodes, std::vector<entry> points,
                                        std::error_code& ec) -> std::optional<point_ring> {
        point_ring r;
        return detail::report(r.assign(nodes, std::move(points)), std::move(r), ec);
    }

    [[nodiscard]] auto size() const noexcept -> std::size_t { return nodes_.size(); }
    [[nodiscard]] auto nodes() const noexcept -> std::span<const node> { return nodes_; }
    /// The sorted points and, index for index, their owners.
    [[nodiscard]] auto points() const noexcept -> std::span<const Point> { return points_; }
    [[nodiscard]] auto owners() const noexcept -> std::span<const node_index> { return owners_; }
    /// How many points each node holds, by node index.
    [[nodiscard]] auto points_per_node() const -> std::vector<std::size_t> {
        std::vector<std::size_t> counts(nodes_.size(), 0);
        for (const node_index o : owners_) {
            ++counts[o.value];
        }
        return counts;
    }
    /// Bytes held by the points, owners and nodes (not counting id strings' heap storage).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return points_.capacity() * sizeof(Point) + owners_.capacity() * sizeof(node_index) +
               nodes_.capacity() * sizeof(node);
    }

    /// The key's point as Point: hashes are carried as std::uint64_t and converted (modulo
    /// 2^bits, so a Cassandra token's two's-complement bits give back the signed token).
    [[nodiscard]] static constexpr auto to_point(std::uint64_t hash) noexcept -> Point {
        return static_cast<Point>(hash);
    }

    /// The index into points() of the entry that owns point: the first point >= point (the
    /// first of a run of equal points), or 0 past the last point. O(log T).
    [[nodiscard]] auto entry_of(std::uint64_t hash) const noexcept -> std::size_t {
        // std::lower_bound's answer by a branch-free halving (a conditional move a step rather
        // than a mispredicted branch): base ends on the last point < p, or on the first point.
        const Point p = to_point(hash);
        const Point* base = points_.data();
        std::size_t n = points_.size();
        while (n > 1) {
            const std::size_t half = n / 2;
            base = base[half] < p ? base + half : base;
            n -= half;
        }
        const auto at = static_cast<std::size_t>(base - points_.data()) + (*base < p ? 1U : 0U);
        return at == points_.size() ? 0 : at;
    }

    /// The owner of a hashed key: the first point >= point, wrapping to the first point.
    [[nodiscard]] auto pick(std::uint64_t hash) const noexcept -> node_index {
        return owners_[entry_of(hash)];
    }

    /// Distinct owners clockwise from pick(point): writes up to out.size() indices (at most the
    /// number of nodes that hold points) and returns that count.
    [[nodiscard]] auto pick_n(std::uint64_t hash, std::span<node_index> out) const noexcept
        -> std::size_t {
        return detail::collect_distinct(*this, hash, out.first(std::min(out.size(), holders_)));
    }

    /// Visits the owners of the points clockwise from pick(point), once around the ring.
    template <class Visit>
    void walk(std::uint64_t hash, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        detail::walk_circle(owners_, entry_of(hash), visit);
    }

private:
    point_ring() = default;

    auto assign(std::span<const node> input, std::vector<entry> entries) -> detail::failure {
        std::vector<node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (entries.empty()) {
            return detail::fail(errc::invalid_argument, "the ring has no points");
        }
        if (entries.size() > point_ring_max_points) {
            return detail::fail(errc::too_many_points,
                                "the ring would hold " + std::to_string(entries.size()) +
                                    " points; the limit is " + std::to_string(point_ring_max_points));
        }
        for (const entry& e : entries) {
            if (e.owner >= input.size()) {
                return detail::fail(errc::invalid_argument,
                                    "a point names owner " + std::to_string(e.owner) + " of " +
                                        std::to_string(input.size()) + " nodes");
            }
        }
        std::sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
            return a.point != b.point ? a.point < b.point : a.owner < b.owner;
        });
        std::vector<Point> points(entries.size());
        std::vector<node_index> owners(entries.size());
        std::vector<bool> holds(input.size(), false);
        std::size_t holders = 0;
        for (std::size_t i = 0; i < entries.size(); ++i) {
            points[i] = entries[i].point;
            owners[i] = node_index{entries[i].owner};
            if (!holds[entries[i].owner]) {
                holds[entries[i].owner] = true;
                ++holders;
            }
        }
        points_ = std::move(points);
        owners_ = std::move(owners);
        nodes_.assign(input.begin(), input.end());
        holders_ = holders;
        return {};
    }

    std::vector<Point> points_;
    std::vector<node_index> owners_;
    std::vector<node> nodes_;
    std::size_t holders_ = 0;
};

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
