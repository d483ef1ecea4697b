// keyplace — which node owns a key. The sorted-ring engine (Karger et al., STOC 1997): points of
// any integer width on a circle, their owners, a direct owner table and a prefix index, the
// lookup (first point >= h, or first point > h), the walk, holders and arc regions. Every ring
// is a configuration of it: the native ring, ketama's continuums, Envoy's ring hash,
// Cassandra's token ring. Not API.
#ifndef KEYPLACE_DETAIL_ENGINE_SORTED_RING_HPP_INCLUDED
#define KEYPLACE_DETAIL_ENGINE_SORTED_RING_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/engine/engine_strategy.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
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
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The most points one ring may hold (2^28: 3 GiB of 64-bit points and owners, the lookup tables
/// on top; memory_bytes() says how much). Builds and derivations that would exceed it fail with
/// errc::too_many_points before allocating.
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

    /// Builds from `total` points over `nodes` nodes written in place: generate(points, owners)
    /// (a std::span<Point> and a std::span<node_index> of total each) sets every point and its
    /// owner, in any order; then settle(points, owners), if given, may change owners in the sorted
    /// arrays. Fails on no points or more than ring_max_points (before allocating), or an owner
    /// that is not a node. Sorted in place, so the build's peak is the steady size, not a second
    /// copy of the points.
    template <class Generate, class Settle = std::nullptr_t>
    auto assign_generated(std::size_t total, std::size_t nodes, lookup_rule rule, Generate&& generate,
                          Settle&& settle = nullptr) -> failure {
        if (total == 0) {
            return fail(errc::no_points, "the ring has no points");
        }
        if (total > ring_max_points) {
            return too_many_points(total);
        }
        points_.resize(total);
        owners_.resize(total);
        generate(std::span<Point>(points_), std::span<node_index>(owners_));
        counts_.assign(nodes, 0);
        for (const node_index o : owners_) {
            if (o.value >= nodes) {
                return fail(errc::invalid_argument, "a point names owner " + std::to_string(o.value) + " of " +
                                                        std::to_string(nodes) + " nodes");
            }
        }
        sort_in_place();
        if constexpr (!std::is_same_v<std::remove_cvref_t<Settle>, std::nullptr_t>) {
            settle(std::span<const Point>(points_), std::span<node_index>(owners_));
        }
        for (const node_index o : owners_) {
            ++counts_[o.value];
        }
        rule_ = rule;
        finish();
        return {};
    }

    /// Makes the builds that follow (and the rings derived from them) rings for searches only:
    /// entry_of, walk and regions, not pick or pick_batch. They have a prefix index of at least
    /// four buckets a point rather than about one per four points, so a bucket holds at most
    /// three points or so and a search is two steps, and no direct owner table (multi-probe,
    /// which searches K times a key and never asks for an owner directly). Call before
    /// assign_generated.
    void for_searches_only() noexcept { searches_only_ = true; }

    /// Takes unsorted entries over `nodes` nodes (assign_generated from a list).
    auto assign(std::span<const entry> entries, std::size_t nodes, lookup_rule rule) -> failure {
        return assign_generated(entries.size(), nodes, rule, [entries](std::span<Point> p, std::span<node_index> o) {
            for (std::size_t i = 0; i < entries.size(); ++i) {
                p[i] = entries[i].point;
                o[i] = node_index{entries[i].owner};
            }
        });
    }

    /// from with node new_index inserted (owners at or above it shift up) holding `fresh`, sorted:
    /// a merge, O(T + c); equal points keep the (point, owner) order.
    void assign_merged(const sorted_ring& from, std::span<const Point> fresh, std::uint32_t new_index) {
        const std::size_t old_total = from.points_.size();
        const std::size_t count = fresh.size();
        points_.assign(old_total + count, Point{});
        owners_.assign(old_total + count, node_index{});
        searches_only_ = from.searches_only_;
        lazy_vector<std::size_t> changed;  // the fresh points' entries
        changed.reserve(count);
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
                changed.push_back(out);
            }
        }
        counts_ = from.counts_;
        counts_.insert(counts_.begin() + new_index, static_cast<std::uint32_t>(count));
        rule_ = from.rule_;
        finish_from(from, changed, new_index, 1);
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
        searches_only_ = from.searches_only_;
        lazy_vector<std::size_t> changed;  // the entries that follow a removed point (size(): the wrap)
        changed.reserve(from.counts_[gone]);
        for (std::size_t i = 0; i < from.points_.size(); ++i) {
            const std::uint32_t o = from.owners_[i].value;
            if (o != gone) {
                points_.push_back(from.points_[i]);
                owners_.push_back(node_index{o > gone ? o - 1 : o});
            } else if (changed.empty() || changed.back() != points_.size()) {
                changed.push_back(points_.size());
            }
        }
        counts_ = from.counts_;
        counts_.erase(counts_.begin() + gone);
        rule_ = from.rule_;
        finish_from(from, changed, gone + 1, -1);
        return {};
    }

    [[nodiscard]] auto points() const noexcept -> std::span<const Point> { return points_; }
    [[nodiscard]] auto owners() const noexcept -> std::span<const node_index> { return owners_; }
    [[nodiscard]] auto rule() const noexcept -> lookup_rule { return rule_; }
    /// Points held by node i.
    [[nodiscard]] auto count(node_index i) const noexcept -> std::size_t { return counts_[i.value]; }
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return holders_; }
    [[nodiscard]] auto regions() const noexcept -> arc_regions<Point> { return {points_, owners_, rule_}; }
    /// Bytes of the points, owners, prefix index and direct owner table.
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return points_.capacity() * sizeof(Point) + owners_.capacity() * sizeof(node_index) +
               index_.capacity() * sizeof(std::uint32_t) + direct16_.capacity() * sizeof(std::uint16_t) +
               direct32_.capacity() * sizeof(std::uint32_t) + direct64_.capacity() * sizeof(std::uint64_t) +
               record_fractions_.capacity() * sizeof(std::uint16_t) + record_owners_.capacity() * sizeof(node_index) +
               record_refs_.capacity() * sizeof(std::uint32_t);
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
        return entry_at_or_after(p);
    }

    /// The owner of a key's point, entry_of's owner: one entry of the direct owner table (and
    /// its neighbour, in the same cache line but at a line's end), a record, or the exact index
    /// for the few keys the table cannot settle. Not on a ring for searches only.
    [[nodiscard]] auto pick(std::uint64_t hash) const noexcept -> node_index {
        const std::uint64_t w = widened(hash);
        switch (direct_width_) {
            case 2: return direct_pick(direct16_.data(), w);
            case 4: return direct_pick(direct32_.data(), w);
            default: return direct_pick(direct64_.data(), w);
        }
    }

    /// out[i] = pick(points[i]) for i < n: in blocks, every key's table entry prefetched before
    /// the first is read, so the blocks' cache misses overlap.
    void pick_batch(const std::uint64_t* points, node_index* out, std::size_t n) const noexcept {
        switch (direct_width_) {
            case 2: direct_batch(direct16_.data(), points, out, n); break;
            case 4: direct_batch(direct32_.data(), points, out, n); break;
            default: direct_batch(direct64_.data(), points, out, n); break;
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

    // The first entry whose point is >= p, 0 past the last.
    [[nodiscard]] auto entry_at_or_after(Point p) const noexcept -> std::size_t {
        const std::size_t k = bucket_of(p);
        const std::size_t lo = index_[k];
        const std::size_t hi = index_[k + 1];
        if (search_steps_ <= fixed_search_steps) {
            // The points below p in [lo, hi), counted a bit at a time from the top: every bucket
            // holds fewer than 2^search_steps_ points, so the same search_steps_ steps settle any
            // key, without a branch on the bucket's size (a loop whose length is the ring's, not
            // the key's: multi-probe's K searches a key then overlap rather than mispredict).
            // A read past the bucket meets a later bucket's point, above p, so it adds nothing;
            // one past the array reads the last point, and if that is below p so is every point
            // from lo on, the steps overshoot, and the answer is hi (the min).
            std::size_t at = lo;
            const std::size_t last = points_.size() - 1;
            for (std::size_t step = std::size_t{1} << search_steps_ >> 1; step != 0; step >>= 1) {
                // A mask, not a ?: that g++ turns into a branch on the point comparison.
                const auto below = static_cast<std::size_t>(points_[std::min(at + step - 1, last)] < p);
                at += step & (0 - below);
            }
            at = std::min(at, hi);
            return at == points_.size() ? 0 : at;
        }
        std::size_t n = hi - lo;
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

    [[nodiscard]] auto bucket_of(Point p) const noexcept -> std::size_t {
        return static_cast<std::size_t>(key(p) >> index_shift_);
    }

    // The prefix index of the points as they stand: a histogram of the buckets, then its running
    // sum (no branch on the points). In point order only once they are sorted.
    void build_index() {
        unsigned bits = 1;
        const std::size_t enough = searches_only_ ? points_.size() * 4 : points_.size();
        while (bits < point_bits && (std::size_t{1} << (bits + (searches_only_ ? 0 : 2))) < enough) {
            ++bits;
        }
        index_shift_ = point_bits - bits;
        const std::size_t buckets = std::size_t{1} << bits;
        index_.assign(buckets + 1, 0);
        for (const Point p : points_) {
            ++index_[bucket_of(p) + 1];
        }
        std::uint32_t most = 0;
        for (std::size_t k = 1; k <= buckets; ++k) {
            most = std::max(most, index_[k]);
            index_[k] += index_[k - 1];
        }
        search_steps_ = 0;
        while ((std::size_t{1} << search_steps_) <= most) {
            ++search_steps_;
        }
    }

    [[nodiscard]] auto entry_less(std::size_t i, std::size_t j) const noexcept -> bool {
        return points_[i] != points_[j] ? points_[i] < points_[j] : owners_[i].value < owners_[j].value;
    }
    void swap_entries(std::size_t i, std::size_t j) noexcept {
        std::swap(points_[i], points_[j]);
        std::swap(owners_[i], owners_[j]);
    }

    // Sorts points_ and owners_ together by (point, owner) without a copy of either: the points
    // go to the prefix index's buckets (their top bits, so bucket order is point order) by cycles
    // of swaps (an American flag sort), first into at most 1024 groups of buckets, then within
    // each group (in cache), so the scratch is a cursor per group; then each bucket, about four
    // points, is sorted by insertion, or by heap sort above 16 (clustered points, such as a
    // Cassandra ring's chosen tokens: O(n log n) still).
    void sort_in_place() {
        build_index();
        const unsigned bits = point_bits - index_shift_;
        const unsigned coarse = std::min(bits, 10U);
        const std::size_t width = std::size_t{1} << (bits - coarse);
        distribute(0, std::size_t{1} << coarse, width);
        if (width > 1) {
            for (std::size_t group = 0; group < (std::size_t{1} << coarse); ++group) {
                distribute(group * width, width, 1);
            }
        }
        for (std::size_t k = 0; k + 1 < index_.size(); ++k) {
            sort_range(index_[k], index_[k + 1]);
        }
    }

    // Moves each point of buckets [first, first + groups * width) into its group of `width`
    // buckets (first a multiple of width), by cycles of swaps.
    void distribute(std::size_t first, std::size_t groups, std::size_t width) {
        lazy_vector<std::uint32_t> cursor(groups);
        for (std::size_t g = 0; g < groups; ++g) {
            cursor[g] = index_[first + g * width];
        }
        const std::size_t base = first / width;
        for (std::size_t g = 0; g < groups; ++g) {
            const std::size_t end = index_[first + (g + 1) * width];
            while (cursor[g] < end) {
                const std::size_t to = bucket_of(points_[cursor[g]]) / width - base;
                if (to == g) {
                    ++cursor[g];
                } else {
                    swap_entries(cursor[g], cursor[to]++);
                }
            }
        }
    }

    void sort_range(std::size_t lo, std::size_t hi) noexcept {
        constexpr std::size_t by_insertion = 16;
        if (hi - lo <= by_insertion) {
            for (std::size_t i = lo + 1; i < hi; ++i) {
                for (std::size_t j = i; j > lo && entry_less(j, j - 1); --j) {
                    swap_entries(j, j - 1);
                }
            }
            return;
        }
        // Heap sort of [lo, hi): a max-heap, then the largest swapped to the end, n times.
        const std::size_t n = hi - lo;
        const auto sift = [&](std::size_t root, std::size_t size) {
            for (std::size_t child = 2 * root + 1; child < size; child = 2 * root + 1) {
                if (child + 1 < size && entry_less(lo + child, lo + child + 1)) {
                    ++child;
                }
                if (!entry_less(lo + root, lo + child)) {
                    return;
                }
                swap_entries(lo + root, lo + child);
                root = child;
            }
        };
        for (std::size_t root = n / 2; root-- > 0;) {
            sift(root, n);
        }
        for (std::size_t size = n; size-- > 1;) {
            swap_entries(lo, lo + size);
            sift(0, size);
        }
    }

    // Bucket k of the prefix index holds the points whose key's top bits are k; index_[k] is its
    // first entry, so the answer lies in [index_[k], index_[k + 1]]. About one bucket per four
    // points (at least two), so the index costs about one byte per point.
    void finish() {
        settle();
        if (!searches_only_) {
            fill_all();
        }
    }

    // The prefix index, the holders, the bump and the direct table's size, for the points as
    // they stand.
    void settle() {
        build_index();
        holders_ = static_cast<std::size_t>(
            std::count_if(counts_.begin(), counts_.end(), [](std::uint32_t c) { return c != 0; }));
        bump_ = rule_ == lookup_rule::after ? 1 : 0;
        direct_shift_ = 64 - direct_bits(points_.size());
    }

    // The entry width to try first: the narrowest that holds the owners and the record
    // references; but 32-bit entries (whose exact 16-bit fractions send fewer keys to the exact
    // index) while their table is at most 2^16 entries, 256 KiB: there the table's size costs
    // less than those keys (measured at 100 and 300 nodes x 160 points: 32-bit entries 0.5 ns
    // faster at 16,000 points, 16-bit ones 1.3 ns faster at 48,000).
    [[nodiscard]] auto planned_width() const noexcept -> unsigned {
        if (counts_.size() > max_owners<std::uint32_t> || points_.size() > (std::size_t{1} << 27)) {
            return 8;
        }
        return counts_.size() > max_owners<std::uint16_t> || direct_shift_ >= 64 - 16 ? 4 : 2;
    }

    // The direct table built whole: in the planned width, or 32-bit ones where 16-bit entries
    // run out of record references.
    void fill_all() {
        // (= {} would assign an empty initializer list and keep the capacity.)
        direct16_ = lazy_vector<std::uint16_t>();
        direct32_ = lazy_vector<std::uint32_t>();
        direct64_ = lazy_vector<std::uint64_t>();
        patched_records_ = 0;
        direct_width_ = planned_width();
        if (direct_width_ == 2 && fill_direct(direct16_)) {
            return;
        }
        if (direct_width_ == 8) {
            (void)fill_direct(direct64_);
        } else {
            direct_width_ = 4;
            (void)fill_direct(direct32_);
        }
    }

    // finish() for a ring derived from `from` by one node's points added or removed. changed
    // lists, in order, each entry whose gap to the entry before it changed (a fresh point, or the
    // point that follows a removed one; 0 or size(): the wrap); owners at or above `threshold`
    // moved by delta. Where the direct table keeps its size and width, it is from's, its owners
    // renumbered, with only the buckets from each changed gap's point before to its point after
    // refilled: O(table / word + changes x gap) rather than a pass over every point. Those
    // buckets' old records stay behind, unused; a derivation from a ring whose appended records
    // are more than a quarter of its records (or one where 16-bit entries run out of record
    // references) builds the table whole.
    void finish_from(const sorted_ring& from, std::span<const std::size_t> changed, std::uint32_t threshold,
                     int delta) {
        settle();
        if (searches_only_) {
            return;
        }
        if (direct_shift_ != from.direct_shift_ || planned_width() != from.direct_width_ ||
            from.patched_records_ > from.record_owners_.size() / 4 || changed.size() > points_.size() / 16) {
            fill_all();
            return;
        }
        direct_width_ = from.direct_width_;
        patched_records_ = from.patched_records_;
        // Room for the records the refilled buckets append (a few a change), so that the first
        // does not double the arrays.
        const std::size_t room = from.record_owners_.size() + 8 * changed.size() + record_points;
        record_fractions_.reserve(room);
        record_fractions_.assign(from.record_fractions_.begin(),  // without the padding: it goes
                                 from.record_fractions_.begin() +  // back on at the end
                                     static_cast<std::ptrdiff_t>(from.record_owners_.size()));
        if (from.direct_width_ == 2) {
            record_refs_.reserve(from.record_refs_.size() + 8 * changed.size());
            record_refs_.assign(from.record_refs_.begin(), from.record_refs_.end());
        }
        record_owners_.reserve(room);
        record_owners_.resize(from.record_owners_.size());
        for (std::size_t i = 0; i < record_owners_.size(); ++i) {
            const std::uint32_t o = from.record_owners_[i].value;
            record_owners_[i] = node_index{o >= threshold ? static_cast<std::uint32_t>(static_cast<int>(o) + delta) : o};
        }
        bool kept = false;
        switch (direct_width_) {
            case 2: kept = patch_direct(direct16_, from.direct16_, changed, threshold, delta); break;
            case 4: kept = patch_direct(direct32_, from.direct32_, changed, threshold, delta); break;
            default: kept = patch_direct(direct64_, from.direct64_, changed, threshold, delta); break;
        }
        if (!kept) {
            fill_all();
        }
    }

    // The bucket of the direct table that holds entry i's point.
    [[nodiscard]] auto direct_bucket(std::size_t i) const noexcept -> std::size_t {
        return static_cast<std::size_t>(widened_point(i) >> direct_shift_);
    }

    // The first entry in the bucket of entry i.
    [[nodiscard]] auto bucket_start(std::size_t i) const noexcept -> std::size_t {
        const std::size_t k = direct_bucket(i);
        while (i > 0 && direct_bucket(i - 1) == k) {
            --i;
        }
        return i;
    }

    template <class E>
    [[nodiscard]] auto patch_direct(std::vector<E>& table, const std::vector<E>& old,
                                    std::span<const std::size_t> changed, std::uint32_t threshold, int delta) -> bool {
        table = old;
        for (E& e : table) {  // a plain entry's owner moves by delta: 2 in the entry (bit 0 is the flag)
            const bool moves = ((e & 1U) == 0) & (((static_cast<std::uint64_t>(e) >> 1) & owner_mask<E>) >= threshold);
            e = moves ? static_cast<E>(delta > 0 ? e + 2U : e - 2U) : e;
        }
        const std::size_t total = points_.size();
        const std::size_t buckets = table.size() - 1;
        const std::size_t records_before = record_owners_.size();
        bool wrap = false;
        // Regions [first, last] of buckets, merged where they meet; `at` the first entry in first.
        std::size_t first = 0;
        std::size_t last = 0;
        std::size_t at = 0;
        bool open = false;
        for (const std::size_t c : changed) {
            if (c == 0 || c == total) {
                wrap = true;
                continue;
            }
            const std::size_t a = direct_bucket(c - 1);
            const std::size_t b = direct_bucket(c);
            if (open && a <= last) {
                last = std::max(last, b);
                continue;
            }
            if (open && !fill_buckets<false>(table.data(), first, last + 1, at)) {
                return false;
            }
            first = a;
            last = b;
            at = bucket_start(c - 1);
            open = true;
        }
        if (open && !fill_buckets<false>(table.data(), first, last + 1, at)) {
            return false;
        }
        if (wrap) {  // the buckets after the last point and up to the first take point 0's owner
            if (!fill_buckets<false>(table.data(), direct_bucket(total - 1), buckets, bucket_start(total - 1)) ||
                !fill_buckets<false>(table.data(), 0, direct_bucket(0) + 1, 0)) {
                return false;
            }
        }
        table[buckets] = plain_entry<E>(owners_[0], 0);
        patched_records_ += record_owners_.size() - records_before;
        record_fractions_.resize(record_owners_.size() + record_points);  // in_record reads record_points
        return true;
    }

    // ---- The direct owner table: 2^b equal buckets of the key space, b = round(log2 T) + 2
    // (2.8 to 5.7 buckets per point), within [2, 26] and at most the point's bits; one entry per
    // bucket plus one.
    // - A bucket with no point or one point: the owner of the first point at or after the
    //   bucket's start (wrapping), and s, the F key bits after the bucket's b of its point (all
    //   ones when it has none). A key's F bits there, t, are taken at most 2^F - 2. t < s: the
    //   key is below the bucket's point (or there is none), and entry k's owner is the answer;
    //   t > s: above it, and the answer is the first point at or after the next bucket's start,
    //   entry k + 1's owner. t == s cannot tell (the key may equal the point): the exact index
    //   decides (2^-F of the keys in one-point buckets). A point whose F bits are all ones is
    //   given a record instead.
    // - A bucket of several points (about 1 in 25 buckets, 1-5% of keys): a record of the
    //   points' next 16 key bits and n + 1 owners, the bucket's n points' and the first point's
    //   after it (n <= 4; a bucket of more has a record of its first owner only, and its keys
    //   go to the exact index). A key counts the bucket's points below it (one equal in those
    //   bits: the exact index decides) and takes that owner. The records are small arrays of
    //   their own, so the rare keys they serve leave the table in the cache. The entry refers
    //   to its record by offset and n; a 16-bit entry by a record number, through
    //   record_refs_. Read as entry k + 1, the record's first owner is the answer.
    // - Entry 2^b: the owner of point 0, the wrap.
    // Entry: bit 0 the record flag; above it the owner (O bits) and s (F bits), or the record
    // reference. 16-bit entries (O = 10, F = 5) over at most 1024 nodes and 32768 records, in a
    // table of more than 2^16 entries; else 32-bit (O = 15, F = 16) over at most 32768 nodes
    // and 2^27 points; else 64-bit (O = 32, F = 31).
    static constexpr unsigned direct_max_bits = 26;
    static constexpr std::size_t record_points = 4;
    static constexpr std::size_t max_records16 = std::size_t{1} << 15;

    template <class E>
    static constexpr unsigned owner_bits = sizeof(E) == 2 ? 10 : sizeof(E) == 4 ? 15 : 32;
    template <class E>
    static constexpr std::size_t max_owners = std::size_t{1} << owner_bits<E>;
    template <class E>
    static constexpr unsigned fraction_bits = 8 * sizeof(E) - owner_bits<E> - 1;
    template <class E>
    static constexpr std::uint64_t owner_mask = (std::uint64_t{1} << owner_bits<E>) - 1;
    template <class E>
    static constexpr std::uint64_t fraction_mask = (std::uint64_t{1} << fraction_bits<E>) - 1;

    // The key of a hash's point (bumped by one under lookup_rule::after: the first point > p is
    // the first >= p + 1, and the largest point's successor wraps to the smallest, whose first
    // point >= it is entry 0 as the wrap wants), left-aligned in 64 bits.
    [[nodiscard]] auto widened(std::uint64_t hash) const noexcept -> std::uint64_t {
        const auto k = static_cast<key_type>(key(static_cast<Point>(hash)) + bump_);
        return static_cast<std::uint64_t>(k) << (64 - point_bits);
    }
    [[nodiscard]] auto widened_point(std::size_t i) const noexcept -> std::uint64_t {
        return static_cast<std::uint64_t>(key(points_[i])) << (64 - point_bits);
    }
    template <class E>
    [[nodiscard]] auto fraction(std::uint64_t w) const noexcept -> std::uint64_t {
        return (w >> (direct_shift_ - fraction_bits<E>)) & fraction_mask<E>;
    }
    [[nodiscard]] auto record_fraction(std::uint64_t w) const noexcept -> std::uint16_t {
        return static_cast<std::uint16_t>(w >> (direct_shift_ - 16));
    }
    // A record entry's reference: offset << 3 | n.
    template <class E>
    [[nodiscard]] auto record_ref(E e) const noexcept -> std::size_t {
        if constexpr (sizeof(E) == 2) {
            return record_refs_[static_cast<std::size_t>(e >> 1)];
        } else {
            return static_cast<std::size_t>(e >> 1);
        }
    }

    template <class E>
    [[nodiscard]] auto direct_pick(const E* table, std::uint64_t w) const noexcept -> node_index {
        const auto k = static_cast<std::size_t>(w >> direct_shift_);
        const E here = table[k];
        const std::uint64_t f = fraction<E>(w);
        const std::uint64_t t = f == fraction_mask<E> ? f - 1 : f;
        const std::uint64_t s = static_cast<std::uint64_t>(here) >> (owner_bits<E> + 1);
        // Rare branches only; the choice between the entries is an index, not a 50:50 branch.
        if (((here & 1U) != 0) | (t == s)) [[unlikely]] {
            return (here & 1U) != 0 ? in_record(record_ref(here), w) : owners_[exact(w)];
        }
        const E chosen = table[k + static_cast<std::size_t>(t > s)];
        if ((chosen & 1U) != 0) [[unlikely]] {
            return record_owners_[record_ref(chosen) >> 3];
        }
        return node_index{static_cast<std::uint32_t>((static_cast<std::uint64_t>(chosen) >> 1) & owner_mask<E>)};
    }

    // The owner for the widened key w in a bucket with a record, reference ref.
    [[nodiscard]] auto in_record(std::size_t ref, std::uint64_t w) const noexcept -> node_index {
        const std::size_t n = ref & 7U;
        const std::size_t at = ref >> 3;
        const std::uint16_t t = record_fraction(w);
        std::size_t below = 0;
        bool equal = n == 0;
        for (std::size_t j = 0; j < record_points; ++j) {
            const std::uint16_t f = record_fractions_[at + j];
            below += static_cast<std::size_t>((j < n) & (f < t));
            equal |= (j < n) & (f == t);
        }
        return equal ? owners_[exact(w)] : record_owners_[at + below];
    }

    // b for T points: round(log2 T) + 2 within [2, 26], and no finer than the points themselves
    // (an 8-bit ring has 256 values).
    [[nodiscard]] static auto direct_bits(std::size_t total) noexcept -> unsigned {
        unsigned floor_log2 = 0;
        while ((total >> (floor_log2 + 1)) != 0) {
            ++floor_log2;
        }
        // round(log2 T): up when T >= 2^(floor + 1/2), i.e. T^2 >= 2^(2 floor + 1) (T <= 2^28).
        const bool up = static_cast<std::uint64_t>(total) * total >= (std::uint64_t{2} << (2 * floor_log2));
        return std::clamp(floor_log2 + (up ? 1U : 0U) + 2, 2U, std::min(direct_max_bits, point_bits));
    }

    template <class E>
    [[nodiscard]] static auto plain_entry(node_index owner, std::uint64_t s) noexcept -> E {
        return static_cast<E>((s << (owner_bits<E> + 1)) | (std::uint64_t{owner.value} << 1));
    }

    // Fills the table in one pass over the points. False (and nothing kept) if 16-bit entries
    // would need more than max_records16 records.
    template <class E>
    [[nodiscard]] auto fill_direct(std::vector<E>& table) -> bool {
        const std::size_t buckets = std::size_t{1} << (64 - direct_shift_);
        record_fractions_.clear();
        record_owners_.clear();
        record_refs_.clear();
        table.resize(buckets + 1 + empty_run);
        if (!fill_buckets<true>(table.data(), 0, buckets, 0)) {
            table = std::vector<E>();
            return false;
        }
        table[buckets] = plain_entry<E>(owners_[0], 0);
        table.resize(buckets + 1);
        record_fractions_.resize(record_owners_.size() + record_points);  // in_record reads record_points
        record_fractions_.shrink_to_fit();
        record_owners_.shrink_to_fit();
        record_refs_.shrink_to_fit();
        return true;
    }

    static constexpr std::size_t empty_run = 8;  // empty entries written at once, whatever the gap

    // Writes entries [first, end) of the table, at the first entry whose point's bucket is
    // >= first: a group of points per bucket that has any, appending its record if it needs one;
    // the empty buckets before a group take its first point's owner, those after the last
    // group the owner of the first point at or after `end` (wrapping). With Slack, the table
    // has empty_run entries past `end` to spare, and gaps are written in runs of that many
    // without a branch on their length. False if 16-bit entries would need more than
    // max_records16 records.
    template <bool Slack, class E>
    [[nodiscard]] auto fill_buckets(E* out, std::size_t first, std::size_t end, std::size_t at) -> bool {
        const std::size_t total = points_.size();
        std::size_t next = first;  // the first entry not yet written
        for (; at < total;) {
            const std::uint64_t w = widened_point(at);
            const auto k = static_cast<std::size_t>(w >> direct_shift_);
            if (k >= end) {
                break;
            }
            std::size_t stop = at + 1;
            while (stop < total && direct_bucket(stop) == k) {
                ++stop;
            }
            const E empty = plain_entry<E>(owners_[at], fraction_mask<E>);
            if constexpr (Slack) {
                for (std::size_t i = 0; i < empty_run; ++i) {  // most gaps are shorter
                    out[next + i] = empty;
                }
                next += empty_run;
            }
            for (; next < k; ++next) {
                out[next] = empty;
            }
            next = k;
            const std::uint64_t s = fraction<E>(w);
            if (stop - at == 1 && s != fraction_mask<E>) {
                out[next++] = plain_entry<E>(owners_[at], s);
            } else {
                const std::size_t n = stop - at <= record_points ? stop - at : 0;
                const std::size_t ref = record_owners_.size() << 3 | n;
                if constexpr (sizeof(E) == 2) {
                    if (record_refs_.size() == max_records16) {
                        return false;
                    }
                }
                for (std::size_t i = at; i < at + n; ++i) {
                    record_fractions_.push_back(record_fraction(widened_point(i)));
                    record_owners_.push_back(owners_[i]);
                }
                record_fractions_.push_back(0);  // the two arrays keep equal offsets
                record_owners_.push_back(owners_[n == 0 ? at : stop < total ? stop : 0]);
                if constexpr (sizeof(E) == 2) {
                    out[next++] = static_cast<E>(record_refs_.size() << 1 | 1U);
                    record_refs_.push_back(static_cast<std::uint32_t>(ref));
                } else {
                    out[next++] = static_cast<E>(ref << 1 | 1U);
                }
            }
            at = stop;
        }
        const E empty = plain_entry<E>(owners_[at < total ? at : 0], fraction_mask<E>);
        for (; next < end; ++next) {
            out[next] = empty;
        }
        return true;
    }

    template <class E>
    void direct_batch(const E* table, const std::uint64_t* points, node_index* out, std::size_t n) const noexcept {
        prefetched_batch(
            points, out, n, [this](std::uint64_t hash) { return widened(hash); },
            [this, table](std::uint64_t w) { return table + (w >> direct_shift_); },
            [this, table](std::uint64_t w) { return direct_pick(table, w); });
    }

    // The entry of the first point whose key is >= the widened key w, 0 past the last.
    [[nodiscard]] auto exact(std::uint64_t w) const noexcept -> std::size_t {
        const auto k = static_cast<key_type>(w >> (64 - point_bits));
        if constexpr (std::is_signed_v<Point>) {
            return entry_at_or_after(static_cast<Point>(k ^ (key_type{1} << (point_bits - 1))));
        } else {
            return entry_at_or_after(static_cast<Point>(k));
        }
    }

    lazy_vector<Point> points_;
    lazy_vector<node_index> owners_;
    lazy_vector<std::uint32_t> counts_;  // points per node
    lazy_vector<std::uint32_t> index_;   // prefix index: first entry of each bucket, plus the end
    lazy_vector<std::uint16_t> direct16_;  // the direct owner table, in one of three widths
    lazy_vector<std::uint32_t> direct32_;
    lazy_vector<std::uint64_t> direct64_;
    lazy_vector<std::uint16_t> record_fractions_;  // its records
    lazy_vector<node_index> record_owners_;
    lazy_vector<std::uint32_t> record_refs_;  // 16-bit entries' record numbers to references
    unsigned index_shift_ = 0;
    // The fewest bits that count the points of the fullest bucket; at most fixed_search_steps,
    // the search takes that many steps, else it halves the key's bucket.
    unsigned search_steps_ = 0;
    bool searches_only_ = false;  // for_searches_only(): a fine index, no direct table
    static constexpr unsigned fixed_search_steps = 5;
    unsigned direct_shift_ = 62;  // 64 - b
    key_type bump_ = 0;           // 1 under lookup_rule::after
    unsigned direct_width_ = 2;  // bytes per entry
    std::size_t patched_records_ = 0;  // record entries a derivation appended (its old ones unused)
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

/// Fails if a ring sorted by (point, owner) lists a point twice (duplicate_token, naming the
/// point and its owners among nodes): a repeat sits next to its first occurrence. A node that
/// lists it twice is where() the error is.
template <class Point>
[[nodiscard]] auto distinct_points(std::span<const Point> points, std::span<const node_index> owners,
                                   std::span<const node> nodes, std::string_view what) -> failure {
    for (std::size_t i = 1; i < points.size(); ++i) {
        if (points[i] == points[i - 1]) {
            const auto& a = nodes[owners[i - 1].value].id;
            const auto& b = nodes[owners[i].value].id;
            if (owners[i] == owners[i - 1]) {
                return fail(errc::duplicate_token,
                            "node " + quote(a) + " lists " + std::string(what) + " " + std::to_string(points[i]) + " twice")
                    .at_node(owners[i].value);
            }
            return fail(errc::duplicate_token, std::string(what) + " " + std::to_string(points[i]) +
                                                   " is owned by both " + quote(a) + " and " + quote(b));
        }
    }
    return {};
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
