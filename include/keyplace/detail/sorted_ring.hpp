// keyplace — which node owns a key. The sorted-ring engine (Karger et al., STOC 1997): points of
// any integer width on a circle, their owners, a prefix index, the lookup (first point >= h, or
// first point > h), the walk, holders and arc regions. Every ring is a configuration of it: the
// native ring, ketama's continuums, Envoy's ring hash, Cassandra's token ring. Not API.
#ifndef KEYPLACE_DETAIL_SORTED_RING_HPP_INCLUDED
#define KEYPLACE_DETAIL_SORTED_RING_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/engine_strategy.hpp>
#include <keyplace/detail/lifecycle.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The most points one ring may hold (2^28: 3 GiB of 64-bit points and owners). Builds and
/// derivations that would exceed it fail with errc::too_many_points before allocating.
inline constexpr std::size_t ring_max_points = std::size_t{1} << 28;

/// One point of a ring and the index (into the node list) of the node that owns it.
template <std::integral Point>
struct ring_point {
    Point point;
    std::uint32_t owner;
};

namespace detail {

[[nodiscard]] inline auto too_many_points(std::size_t total) -> failure {
    return fail(errc::too_many_points, "the ring would hold " + std::to_string(total) + " points; the limit is " +
                                           std::to_string(ring_max_points));
}

/// Points sorted by (point, owner index) — equal points from different nodes go by node index,
/// libmemcached's rule — with, index for index, their owners. Point is compared in its own
/// order (a signed Cassandra token as signed); keys are hashes carried as 64 bits and converted
/// to Point modulo 2^bits.
template <std::integral Point>
class sorted_ring {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Point>;  // detail/lazy.hpp

public:
    using point_type = Point;
    using entry = ring_point<Point>;

    /// Takes unsorted entries over `nodes` nodes. Fails on no entries, more than
    /// ring_max_points, or an owner that is not a node.
    auto assign(lazy_vector<entry> entries, std::size_t nodes, lookup_rule rule) -> failure {
        if (entries.empty()) {
            return fail(errc::no_points, "the ring has no points");
        }
        if (entries.size() > ring_max_points) {
            return too_many_points(entries.size());
        }
        for (const entry& e : entries) {
            if (e.owner >= nodes) {
                return fail(errc::invalid_argument, "a point names owner " + std::to_string(e.owner) + " of " +
                                                        std::to_string(nodes) + " nodes");
            }
        }
        std::sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
            return a.point != b.point ? a.point < b.point : a.owner < b.owner;
        });
        points_.resize(entries.size());
        owners_.resize(entries.size());
        counts_.assign(nodes, 0);
        for (std::size_t i = 0; i < entries.size(); ++i) {
            points_[i] = entries[i].point;
            owners_[i] = node_index{entries[i].owner};
            ++counts_[entries[i].owner];
        }
        rule_ = rule;
        finish();
        return {};
    }

    /// from with node new_index inserted (owners at or above it shift up) holding `fresh`, sorted:
    /// a merge, O(T + c); equal points keep the (point, owner) order.
    void assign_merged(const sorted_ring& from, std::span<const Point> fresh, std::uint32_t new_index) {
        const std::size_t old_total = from.points_.size();
        const std::size_t count = fresh.size();
        points_.assign(old_total + count, Point{});
        owners_.assign(old_total + count, node_index{});
        std::size_t i = 0;
        std::size_t j = 0;
        for (std::size_t out = 0; out < points_.size(); ++out) {
            bool take_old = j == count;
            std::uint32_t old_owner = 0;
            if (i < old_total) {
                old_owner = from.owners_[i].value;
                old_owner += old_owner >= new_index ? 1U : 0U;
                take_old = take_old || from.points_[i] < fresh[j] ||
                           (from.points_[i] == fresh[j] && old_owner < new_index);
            }
            if (take_old) {
                points_[out] = from.points_[i++];
                owners_[out] = node_index{old_owner};
            } else {
                points_[out] = fresh[j++];
                owners_[out] = node_index{new_index};
            }
        }
        counts_ = from.counts_;
        counts_.insert(counts_.begin() + new_index, static_cast<std::uint32_t>(count));
        rule_ = from.rule_;
        finish();
    }

    /// from without node gone's points (owners above it shift down). O(T). Fails if no point
    /// would remain (a configuration whose point_count gave the other nodes none).
    auto assign_erased(const sorted_ring& from, std::uint32_t gone) -> failure {
        if (from.counts_[gone] == from.points_.size()) {
            return fail(errc::no_points, "without its only node with points the ring would have no points");
        }
        points_.clear();
        owners_.clear();
        points_.reserve(from.points_.size());
        owners_.reserve(from.points_.size());
        for (std::size_t i = 0; i < from.points_.size(); ++i) {
            const std::uint32_t o = from.owners_[i].value;
            if (o != gone) {
                points_.push_back(from.points_[i]);
                owners_.push_back(node_index{o > gone ? o - 1 : o});
            }
        }
        counts_ = from.counts_;
        counts_.erase(counts_.begin() + gone);
        rule_ = from.rule_;
        finish();
        return {};
    }

    [[nodiscard]] auto points() const noexcept -> std::span<const Point> { return points_; }
    [[nodiscard]] auto owners() const noexcept -> std::span<const node_index> { return owners_; }
    [[nodiscard]] auto rule() const noexcept -> lookup_rule { return rule_; }
    /// Points held by node i.
    [[nodiscard]] auto count(node_index i) const noexcept -> std::size_t { return counts_[i.value]; }
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return holders_; }
    [[nodiscard]] auto regions() const noexcept -> arc_regions<Point> { return {points_, owners_, rule_}; }
    /// Bytes of the points, owners and prefix index.
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return points_.capacity() * sizeof(Point) + owners_.capacity() * sizeof(node_index) +
               index_.capacity() * sizeof(std::uint32_t);
    }

    /// The index of the entry that owns a key's point: the first point >= it (the first of a run
    /// of equal points), or > it under lookup_rule::after; 0 past the last point. O(1) expected
    /// (a prefix index, then a branch-free halving in its bucket of about four points).
    [[nodiscard]] auto entry_of(std::uint64_t hash) const noexcept -> std::size_t {
        auto p = static_cast<Point>(hash);
        if (rule_ == lookup_rule::after) {
            if (p == std::numeric_limits<Point>::max()) {
                return 0;
            }
            ++p;
        }
        const auto k = static_cast<std::size_t>(key(p) >> index_shift_);
        const std::size_t lo = index_[k];
        std::size_t n = index_[k + 1] - lo;
        if (n == 0) {
            return lo == points_.size() ? 0 : lo;
        }
        // std::lower_bound's answer in [lo, lo + n) by a branch-free halving: a conditional move
        // a step rather than a mispredicted branch; base ends on the last point < p, or on lo.
        const Point* base = points_.data() + lo;
        while (n > 1) {
            const std::size_t half = n / 2;
            base = base[half] < p ? base + half : base;
            n -= half;
        }
        const auto at = static_cast<std::size_t>(base - points_.data()) + (*base < p ? 1U : 0U);
        return at == points_.size() ? 0 : at;
    }

    [[nodiscard]] auto pick(std::uint64_t hash) const noexcept -> node_index { return owners_[entry_of(hash)]; }
    void pick_batch(const std::uint64_t* points, node_index* out, std::size_t n) const noexcept {
        for (std::size_t i = 0; i < n; ++i) {
            out[i] = pick(points[i]);
        }
    }

    /// Visits the owners of the points from entry_of(hash) on, once around, until visit returns
    /// false: every holder, a node once per point.
    template <class Visit>
    void walk(std::uint64_t hash, Visit& visit) const noexcept {
        const std::size_t total = owners_.size();
        std::size_t i = entry_of(hash);
        for (std::size_t step = 0; step < total; ++step) {
            if (!visit(owners_[i])) {
                return;
            }
            i = (i + 1 == total) ? 0 : i + 1;
        }
    }

private:
    using key_type = std::make_unsigned_t<Point>;
    static constexpr unsigned point_bits = 8 * sizeof(Point);

    // The point as an unsigned key in the same order (a signed point's sign bit flipped).
    [[nodiscard]] static constexpr auto key(Point p) noexcept -> key_type {
        if constexpr (std::is_signed_v<Point>) {
            return static_cast<key_type>(static_cast<key_type>(p) ^ (key_type{1} << (point_bits - 1)));
        } else {
            return p;
        }
    }

    // Bucket k of the prefix index holds the points whose key's top bits are k; index_[k] is its
    // first entry, so the answer lies in [index_[k], index_[k + 1]]. About one bucket per four
    // points (at least two), so the index costs about one byte per point.
    void finish() {
        unsigned bits = 1;
        while (bits < point_bits && (std::size_t{1} << (bits + 2)) < points_.size()) {
            ++bits;
        }
        index_shift_ = point_bits - bits;
        const std::size_t buckets = std::size_t{1} << bits;
        index_.assign(buckets + 1, 0);
        std::size_t at = 0;
        for (std::size_t k = 0; k < buckets; ++k) {
            while (at < points_.size() && static_cast<std::size_t>(key(points_[at]) >> index_shift_) < k) {
                ++at;
            }
            index_[k] = static_cast<std::uint32_t>(at);
        }
        index_[buckets] = static_cast<std::uint32_t>(points_.size());
        holders_ = static_cast<std::size_t>(
            std::count_if(counts_.begin(), counts_.end(), [](std::uint32_t c) { return c != 0; }));
    }

    lazy_vector<Point> points_;
    lazy_vector<node_index> owners_;
    lazy_vector<std::uint32_t> counts_;  // points per node
    lazy_vector<std::uint32_t> index_;   // prefix index: first entry of each bucket, plus the end
    unsigned index_shift_ = 0;
    lookup_rule rule_ = lookup_rule::at_or_after;
    std::size_t holders_ = 0;
};

/// A strategy that is a sorted ring: the shared query surface plus the ring's own.
template <class Derived, std::integral Point, hasher KeyHash, class Member, class Config, derivation Derives,
          node_order Order>
class ring_strategy
    : public engine_strategy<Derived, sorted_ring<Point>, KeyHash, Member, Config, Derives, Order> {
public:
    using point_type = Point;

    /// The index into points() of the entry that owns a hash.
    [[nodiscard]] auto entry_of(std::uint64_t hash) const noexcept -> std::size_t {
        return this->engine_.entry_of(hash);
    }
    /// The points in ring order and, index for index, their owners.
    [[nodiscard]] auto points() const noexcept -> std::span<const Point> { return this->engine_.points(); }
    [[nodiscard]] auto owners() const noexcept -> std::span<const node_index> { return this->engine_.owners(); }
    [[nodiscard]] auto rule() const noexcept -> lookup_rule { return this->engine_.rule(); }
    /// Points per node, by node index.
    [[nodiscard]] auto points_per_node() const -> std::vector<std::size_t> { return this->counts_per_node(); }

protected:
    ring_strategy() = default;
};

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
