// keyplace — which node owns a key. The placement concepts every strategy models, and locate().
#ifndef KEYPLACE_CONCEPTS_HPP_INCLUDED
#define KEYPLACE_CONCEPTS_HPP_INCLUDED

#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

KEYPLACE_NAMESPACE_BEGIN

/// An immutable, copyable placement built from a node list. Queries are const, noexcept,
/// allocation-free and safe from any number of threads. pick() takes a hashed key (a point)
/// and returns an index into nodes(); S::key_hash is the hash locate() applies to key bytes.
template <class S>
concept placement_strategy =
    std::copyable<S> && hasher<typename S::key_hash> &&
    requires(const S& s, std::uint64_t point) {
        { s.size() } noexcept -> std::same_as<std::size_t>;
        { s.nodes() } noexcept -> std::same_as<std::span<const node>>;
        { s.pick(point) } noexcept -> std::same_as<node_index>;
    };

namespace detail {
/// A visitor of a preference walk: called with each node in turn, returns whether to go on.
struct walk_visitor_archetype {
    auto operator()(node_index) const noexcept -> bool { return false; }
};
}  // namespace detail

/// A strategy that can list distinct nodes in preference order (replicas, retries).
/// pick_n writes min(out.size(), size()) distinct indices, the first being pick(point),
/// and returns how many it wrote. walk(point, visit) calls visit(node_index) -> bool in
/// preference order until it returns false; it may repeat a node already visited (a ring
/// passes a node's other points) but visits every node before it ends.
template <class S>
concept ordered_placement_strategy =
    placement_strategy<S> &&
    requires(const S& s, std::uint64_t point, std::span<node_index> out,
             const detail::walk_visitor_archetype& visit) {
        { s.pick_n(point, out) } noexcept -> std::same_as<std::size_t>;
        { s.walk(point, visit) } noexcept;
    };

namespace detail {
/// pick_n from a walk: the first distinct nodes it visits.
template <class S>
[[nodiscard]] auto collect_distinct(const S& s, std::uint64_t point, std::span<node_index> out) noexcept
    -> std::size_t {
    const std::size_t want = std::min(out.size(), s.size());
    std::size_t got = 0;
    if (want == 0) {
        return 0;
    }
    s.walk(point, [&](node_index i) noexcept {
        const auto taken = out.first(got);
        if (std::find(taken.begin(), taken.end(), i) == taken.end()) {
            out[got++] = i;
        }
        return got < want;
    });
    return got;
}
}  // namespace detail

namespace detail {
/// A ring's walk: visits owners[start], owners[start + 1], ... once around, wrapping, until
/// visit returns false.
template <class Visit>
void walk_circle(std::span<const node_index> owners, std::size_t start, Visit& visit) noexcept {
    const std::size_t total = owners.size();
    std::size_t i = start;
    for (std::size_t step = 0; step < total; ++step) {
        if (!visit(owners[i])) {
            return;
        }
        i = (i + 1 == total) ? 0 : i + 1;
    }
}
}  // namespace detail

/// The node that owns key (string bytes, a byte span, or an integer hashed as its
/// little-endian bytes) under strategy s, hashing it with the strategy's declared key hash.
template <placement_strategy S, class Key>
[[nodiscard]] auto locate(const S& s, const Key& key) noexcept -> const node& {
    const auto point = hash_key(typename S::key_hash{}, key);
    return s.nodes()[s.pick(point).value];
}

/// Distinct nodes for key in s's preference order (see pick_n), hashing it with the
/// strategy's key hash: writes min(out.size(), s.size()) indices and returns that count.
template <ordered_placement_strategy S, class Key>
[[nodiscard]] auto locate_n(const S& s, const Key& key, std::span<node_index> out) noexcept
    -> std::size_t {
    return s.pick_n(hash_key(typename S::key_hash{}, key), out);
}

KEYPLACE_NAMESPACE_END

#endif
