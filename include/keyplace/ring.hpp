// keyplace — which node owns a key. basic_ring<Traits>: the hash ring with virtual nodes
// (Karger et al., "Consistent Hashing and Random Trees", STOC 1997), and keyplace::ring, its
// native configuration (placement contract v1, README).
#ifndef KEYPLACE_RING_HPP_INCLUDED
#define KEYPLACE_RING_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Ring parameters. vnodes is the number of points a node of weight 1 gets.
struct ring_config {
    std::uint32_t vnodes = 160;
};

/// The most points one ring may hold (2^28, 3 GiB of points and owners). Builds and
/// derivations that would exceed it fail with errc::too_many_points before allocating.
inline constexpr std::size_t ring_max_points = std::size_t{1} << 28;

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
        count = static_cast<std::size_t>(std::llround(exact));
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

/// A hash ring: every node owns points on a circle of Traits::point_type values; a key
/// belongs to the first point at or after its hash, wrapping past the last point to the
/// first. Immutable after build; with()/without() derive new rings.
///
/// Memory: sizeof(point_type) + 4 bytes per point (12 for the native ring), plus a prefix
/// index of about one byte per point that makes lookups O(1) expected, plus the nodes.
template <ring_traits Traits>
class basic_ring {
public:
    using traits_type = Traits;
    using point_type = typename Traits::point_type;
    using key_hash = typename Traits::key_hash;

    /// Builds a ring. O(T log T) for T points. Throws keyplace::error: empty list, empty or
    /// duplicate id, weight not finite and > 0 or rounding to 0 points, vnodes == 0, more
    /// than ring_max_points points.
    [[nodiscard]] static auto build(std::span<const node> nodes, ring_config config = {})
        -> basic_ring {
        basic_ring r;
        if (auto f = r.assign(nodes, config)) {
            detail::throw_error(std::move(f));
        }
        return r;
    }
    [[nodiscard]] static auto build(std::initializer_list<node> nodes, ring_config config = {})
        -> basic_ring {
        return build(std::span<const node>(nodes.begin(), nodes.size()), config);
    }

    /// As build(), reporting failure through ec (and an empty optional) instead of throwing.
    [[nodiscard]] static auto try_build(std::span<const node> nodes, ring_config config,
                                        std::error_code& ec) -> std::optional<basic_ring> {
        basic_ring r;
        return detail::report(r.assign(nodes, config), std::move(r), ec);
    }
    [[nodiscard]] static auto try_build(std::span<const node> nodes, std::error_code& ec)
        -> std::optional<basic_ring> {
        return try_build(nodes, ring_config{}, ec);
    }

    /// A new ring with n added; this ring is unchanged. O(T + c log c) for c new points:
    /// the new points are merged into the sorted arrays, nothing is re-sorted.
    /// Throws as build() does, and errc::duplicate_id if n's id is a member.
    [[nodiscard]] auto with(const node& n) const -> basic_ring {
        basic_ring r;
        if (auto f = r.assign_with(*this, n)) {
            detail::throw_error(std::move(f));
        }
        return r;
    }
    [[nodiscard]] auto try_with(const node& n, std::error_code& ec) const
        -> std::optional<basic_ring> {
        basic_ring r;
        return detail::report(r.assign_with(*this, n), std::move(r), ec);
    }

    /// A new ring without the node id; this ring is unchanged. O(T). Throws
    /// errc::unknown_id if id is not a member, errc::empty_membership if it is the last.
    [[nodiscard]] auto without(std::string_view id) const -> basic_ring {
        basic_ring r;
        if (auto f = r.assign_without(*this, id)) {
            detail::throw_error(std::move(f));
        }
        return r;
    }
    [[nodiscard]] auto try_without(std::string_view id, std::error_code& ec) const
        -> std::optional<basic_ring> {
        basic_ring r;
        return detail::report(r.assign_without(*this, id), std::move(r), ec);
    }

    /// Number of nodes.
    [[nodiscard]] auto size() const noexcept -> std::size_t { return nodes_.size(); }
    /// The nodes, sorted by id; node_index values index this span.
    [[nodiscard]] auto nodes() const noexcept -> std::span<const node> { return nodes_; }
    /// The ring's points in ring order, and the owner of each.
    [[nodiscard]] auto points() const noexcept -> std::span<const point_type> { return points_; }
    [[nodiscard]] auto owners() const noexcept -> std::span<const node_index> { return owners_; }
    [[nodiscard]] auto config() const noexcept -> const ring_config& { return config_; }
    /// Bytes held by the points, owners and prefix index (the node list not counted).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return points_.capacity() * sizeof(point_type) + owners_.capacity() * sizeof(node_index) +
               index_.capacity() * sizeof(std::uint32_t);
    }

    /// The index of the node with this id, if it is a member. O(log N).
    [[nodiscard]] auto find(std::string_view id) const noexcept -> std::optional<node_index> {
        const std::size_t i = detail::find_sorted(nodes_, id);
        if (i == nodes_.size()) {
            return std::nullopt;
        }
        return node_index{static_cast<std::uint32_t>(i)};
    }

    /// The index into points() of the entry that owns point: the first point >= point, or 0
    /// past the last point. O(1) expected.
    [[nodiscard]] auto entry_of(point_type point) const noexcept -> std::size_t { return entry_for(point); }

    /// The owner of a hashed key: the first point >= point, wrapping to the first point.
    /// O(1) expected (a prefix index and a short scan), O(log T) at worst.
    [[nodiscard]] auto pick(point_type point) const noexcept -> node_index {
        return owners_[entry_for(point)];
    }

    /// Distinct owners clockwise from pick(point): writes min(out.size(), size()) indices and
    /// returns that count. O(T * out.size()) in the worst case, typically a few points.
    [[nodiscard]] auto pick_n(point_type point, std::span<node_index> out) const noexcept
        -> std::size_t {
        return detail::collect_distinct(*this, point, out);
    }

    /// Visits the owners of the points clockwise from pick(point), once around the ring;
    /// a node with several points is visited at each. visit(node_index) returns whether to go on.
    template <class Visit>
    void walk(point_type point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        detail::walk_circle(owners_, entry_for(point), visit);
    }

private:
    basic_ring() = default;

    // The first entry whose point is >= point, wrapping to 0: exactly std::lower_bound's answer,
    // found through the prefix index. Bucket k of the index holds the points whose top
    // index_bits_ bits are k; index_[k] is its first entry, so the answer lies in
    // [index_[k], index_[k + 1]] and that range holds about four points.
    [[nodiscard]] auto entry_for(point_type point) const noexcept -> std::size_t {
        const auto k = static_cast<std::size_t>(point >> index_shift_);
        std::size_t lo = index_[k];
        const std::size_t hi = index_[k + 1];
        if (hi - lo > linear_scan_limit) {
            lo = static_cast<std::size_t>(std::lower_bound(points_.begin() + static_cast<std::ptrdiff_t>(lo),
                                                           points_.begin() + static_cast<std::ptrdiff_t>(hi), point) -
                                          points_.begin());
        } else {
            while (lo < hi && points_[lo] < point) {
                ++lo;
            }
        }
        return lo == points_.size() ? 0 : lo;
    }

    static constexpr std::size_t linear_scan_limit = 16;
    static constexpr unsigned point_bits = 8 * sizeof(point_type);

    // About one bucket per four points (at least two buckets), so the index costs about one
    // byte per point.
    void build_index() {
        unsigned bits = 1;
        while (bits < point_bits && (std::size_t{1} << (bits + 2)) < points_.size()) {
            ++bits;
        }
        index_shift_ = point_bits - bits;
        const std::size_t buckets = std::size_t{1} << bits;
        index_.assign(buckets + 1, 0);
        std::size_t at = 0;
        for (std::size_t k = 0; k < buckets; ++k) {
            while (at < points_.size() && static_cast<std::size_t>(points_[at] >> index_shift_) < k) {
                ++at;
            }
            index_[k] = static_cast<std::uint32_t>(at);
        }
        index_[buckets] = static_cast<std::uint32_t>(points_.size());
    }

    static auto check_config(const ring_config& c) -> detail::failure {
        if (c.vnodes == 0 || c.vnodes > ring_max_points) {
            return detail::fail(errc::invalid_vnodes,
                                "vnodes " + std::to_string(c.vnodes) + " is outside 1.." +
                                    std::to_string(ring_max_points));
        }
        return {};
    }

    static auto too_many(std::size_t total) -> detail::failure {
        return detail::fail(errc::too_many_points,
                            "the ring would hold " + std::to_string(total) +
                                " points; the limit is " + std::to_string(ring_max_points));
    }

    struct entry {
        point_type point;
        std::uint32_t owner;
    };

    void take_entries(const std::vector<entry>& entries) {
        points_.resize(entries.size());
        owners_.resize(entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            points_[i] = entries[i].point;
            owners_[i] = node_index{entries[i].owner};
        }
    }

    auto assign(std::span<const node> input, const ring_config& config) -> detail::failure {
        if (auto f = check_config(config)) {
            return f;
        }
        std::vector<node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        std::vector<std::size_t> counts(sorted.size());
        std::size_t total = 0;
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (auto f = Traits::point_count(sorted[i], config, counts[i])) {
                return f;
            }
            total += counts[i];
            if (total > ring_max_points) {
                return too_many(total);
            }
        }
        std::vector<entry> entries(total);
        std::vector<point_type> scratch;
        std::size_t at = 0;
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            scratch.resize(counts[i]);
            Traits::derive_points(sorted[i], scratch);
            for (const point_type p : scratch) {
                entries[at++] = entry{p, static_cast<std::uint32_t>(i)};
            }
        }
        // The total order is (point, node index, vnode index); two entries equal in point
        // and node are indistinguishable in the arrays, so sorting on (point, node) suffices.
        std::sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
            return a.point != b.point ? a.point < b.point : a.owner < b.owner;
        });
        take_entries(entries);
        build_index();
        nodes_ = std::move(sorted);
        config_ = config;
        return {};
    }

    auto assign_with(const basic_ring& from, const node& n) -> detail::failure {
        if (auto f = detail::check_node(n)) {
            return f;
        }
        if (from.find(n.id)) {
            return detail::fail(errc::duplicate_id,
                                "node id " + detail::quote(n.id) + " is already a member");
        }
        std::size_t count = 0;
        if (auto f = Traits::point_count(n, from.config_, count)) {
            return f;
        }
        const std::size_t old_total = from.points_.size();
        if (count > ring_max_points - old_total) {
            return too_many(old_total + count);
        }
        std::vector<point_type> fresh(count);
        Traits::derive_points(n, fresh);
        std::sort(fresh.begin(), fresh.end());

        const std::size_t k = static_cast<std::size_t>(
            std::lower_bound(from.nodes_.begin(), from.nodes_.end(), n.id,
                             [](const node& a, const std::string& id) { return a.id < id; }) -
            from.nodes_.begin());
        const auto new_index = static_cast<std::uint32_t>(k);

        std::vector<point_type> points(old_total + count);
        std::vector<node_index> owners(old_total + count);
        std::size_t i = 0;
        std::size_t j = 0;
        for (std::size_t out = 0; out < points.size(); ++out) {
            bool take_old = j == count;
            std::uint32_t old_owner = 0;
            if (i < old_total) {
                old_owner = from.owners_[i].value;
                old_owner += old_owner >= new_index ? 1U : 0U;
                take_old = take_old || from.points_[i] < fresh[j] ||
                           (from.points_[i] == fresh[j] && old_owner < new_index);
            }
            if (take_old) {
                points[out] = from.points_[i++];
                owners[out] = node_index{old_owner};
            } else {
                points[out] = fresh[j++];
                owners[out] = node_index{new_index};
            }
        }
        std::vector<node> nodes;
        nodes.reserve(from.nodes_.size() + 1);
        nodes.insert(nodes.end(), from.nodes_.begin(), from.nodes_.begin() + static_cast<std::ptrdiff_t>(k));
        nodes.push_back(n);
        nodes.insert(nodes.end(), from.nodes_.begin() + static_cast<std::ptrdiff_t>(k), from.nodes_.end());

        nodes_ = std::move(nodes);
        points_ = std::move(points);
        owners_ = std::move(owners);
        config_ = from.config_;
        build_index();
        return {};
    }

    auto assign_without(const basic_ring& from, std::string_view id) -> detail::failure {
        const auto found = from.find(id);
        if (!found) {
            return detail::fail(errc::unknown_id,
                                "node id " + detail::quote(id) + " is not a member");
        }
        if (from.nodes_.size() == 1) {
            return detail::fail(errc::empty_membership,
                                "removing " + detail::quote(id) +
                                    " would leave the ring without nodes");
        }
        const std::uint32_t gone = found->value;
        std::vector<point_type> points;
        std::vector<node_index> owners;
        points.reserve(from.points_.size());
        owners.reserve(from.points_.size());
        for (std::size_t i = 0; i < from.points_.size(); ++i) {
            const std::uint32_t o = from.owners_[i].value;
            if (o != gone) {
                points.push_back(from.points_[i]);
                owners.push_back(node_index{o > gone ? o - 1 : o});
            }
        }
        std::vector<node> nodes = from.nodes_;
        nodes.erase(nodes.begin() + static_cast<std::ptrdiff_t>(gone));

        nodes_ = std::move(nodes);
        points_ = std::move(points);
        owners_ = std::move(owners);
        config_ = from.config_;
        build_index();
        return {};
    }

    std::vector<node> nodes_;
    std::vector<point_type> points_;
    std::vector<node_index> owners_;
    std::vector<std::uint32_t> index_;  // prefix index: first entry of each bucket, plus the end
    unsigned index_shift_ = 0;
    ring_config config_{};
};

/// The native hash ring: XXH3-64 points and keys, contract v1.
using ring = basic_ring<native_ring_traits>;

static_assert(ordered_placement_strategy<ring>);

KEYPLACE_NAMESPACE_END

#endif
