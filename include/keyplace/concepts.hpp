// keyplace — which node owns a key. The placement concepts every strategy models, the
// capabilities generic code asks for (holders, regions), and locate().
#ifndef KEYPLACE_CONCEPTS_HPP_INCLUDED
#define KEYPLACE_CONCEPTS_HPP_INCLUDED

#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

KEYPLACE_NAMESPACE_BEGIN

/// An immutable, copyable placement built from a node list. Queries are const, noexcept,
/// allocation-free and safe from any number of threads. pick() takes a hashed key (a point)
/// and returns an index into nodes(); S::key_hash is the hash locate() applies to key bytes.
/// holders() is how many nodes pick() can return and holds(i) whether node i is one of them: a
/// node of a compat ring whose share rounds to no point, or of an Envoy locality of weight 0,
/// is a member that holds nothing.
template <class S>
concept placement_strategy =
    std::copyable<S> && hasher<typename S::key_hash> &&
    requires(const S& s, std::uint64_t point, node_index i) {
        { s.size() } noexcept -> std::same_as<std::size_t>;
        { s.nodes() } noexcept -> std::same_as<std::span<const node>>;
        { s.node(i) } noexcept -> std::same_as<const node&>;
        { s.pick(point) } noexcept -> std::same_as<node_index>;
        { s.holders() } noexcept -> std::same_as<std::size_t>;
        { s.holds(i) } noexcept -> std::same_as<bool>;
    };

namespace detail {
/// A visitor of a preference walk: called with each node in turn, returns whether to go on.
struct walk_visitor_archetype {
    auto operator()(node_index) const noexcept -> bool { return false; }
};
}  // namespace detail

/// A strategy that can list distinct nodes in preference order (replicas, retries).
/// walk(point, visit) calls visit(node_index) -> bool in preference order until it returns
/// false; it visits exactly the holders (it may repeat one: a ring passes a node's other points)
/// and every holder before it ends. pick_n writes the first min(out.size(), holders()) distinct
/// nodes of that walk, the first being pick(point), and returns how many it wrote.
template <class S>
concept ordered_placement_strategy =
    placement_strategy<S> &&
    requires(const S& s, std::uint64_t point, std::span<node_index> out,
             const detail::walk_visitor_archetype& visit) {
        { s.pick_n(point, out) } noexcept -> std::same_as<std::size_t>;
        { s.walk(point, visit) } noexcept;
    };

/// Which point of a ring owns a key's point h.
enum class lookup_rule : std::uint8_t {
    at_or_after,  ///< the first point >= h (wrapping): libmemcached, Envoy, Cassandra, keyplace
    after,        ///< the first point > h (wrapping): Python's bisect_right (hash_ring)
};

/// Ownership regions of a ring: point i owns the arc that ends at it, (points[i-1], points[i]]
/// under at_or_after, [points[i-1], points[i]) under after, point 0 also the wrap. Points are
/// sorted in Point's order (signed tokens on the same circle in signed order); the circle has
/// 2^(8 * sizeof(Point)) values.
template <class Point>
struct arc_regions {
    std::span<const Point> points;
    std::span<const node_index> owners;
    lookup_rule rule = lookup_rule::at_or_after;
};

/// Ownership regions of a table or a modulus: the points congruent to r modulo `modulus`, for
/// r = 0 .. modulus - 1, all belong to pick(r) (Maglev slots, Redis slots, modulo residues).
struct residue_regions {
    std::uint64_t modulus = 1;
};

/// A strategy that can enumerate its ownership regions exactly: ownership, movement and
/// co-ownership are then exact (analysis.hpp), not sampled.
template <class S>
concept region_strategy = placement_strategy<S> && requires(const S& s) {
    { s.regions() } noexcept;
};

namespace detail {
/// pick_n from a walk: the first distinct nodes it visits, at most the holders.
template <class S>
[[nodiscard]] auto collect_distinct(const S& s, std::uint64_t point, std::span<node_index> out) noexcept
    -> std::size_t {
    const std::size_t want = out.size() < s.holders() ? out.size() : s.holders();
    std::size_t got = 0;
    if (want == 0) {
        return 0;
    }
    s.walk(point, [&](node_index i) noexcept {
        for (std::size_t k = 0; k < got; ++k) {
            if (out[k] == i) {
                return true;
            }
        }
        out[got++] = i;
        return got < want;
    });
    return got;
}
}  // namespace detail

namespace detail {
/// A strategy whose lookup needs more of a key than one 64-bit point (go-mpchash hashes the key
/// bytes twice) takes the bytes: pick_key(bytes), pick_n_key(bytes, out).
template <class S>
concept key_bytes_strategy = requires(const S& s, std::span<const std::byte> bytes, std::span<node_index> out) {
    { s.pick_key(bytes) } noexcept -> std::same_as<node_index>;
    { s.pick_n_key(bytes, out) } noexcept -> std::same_as<std::size_t>;
};

/// A key_bytes_strategy whose owner one 64-bit point of the key does not decide (go-mpchash
/// hashes the bytes twice): its pick(point), walk(point) and pick_n(point) follow another rule
/// than its keys, so whatever places keys must hand it their bytes. (Native multi-probe takes
/// bytes too, but its pick_key is pick of the key's point.)
template <class S>
concept needs_key_bytes = key_bytes_strategy<S> && S::needs_key_bytes;

/// f(bytes) for a key's bytes as hash_key() hashes them.
template <class Key, class F>
[[nodiscard]] auto with_key_bytes(const Key& key, F&& f) noexcept {
    if constexpr (integer_key<Key>) {
        const auto bytes = key_bytes(key);
        return f(std::span<const std::byte>(bytes));
    } else if constexpr (std::is_convertible_v<const Key&, std::span<const std::byte>>) {
        return f(std::span<const std::byte>(key));
    } else {
        return f(key_bytes(std::string_view(key)));
    }
}
}  // namespace detail

namespace detail {
/// The index of locate()'s node.
template <placement_strategy S, class Key>
[[nodiscard]] auto pick_of_key(const S& s, const Key& key) noexcept -> node_index {
    if constexpr (key_bytes_strategy<S>) {
        return with_key_bytes(key, [&](std::span<const std::byte> b) noexcept { return s.pick_key(b); });
    } else {
        return s.pick(hash_key(typename S::key_hash{}, key));
    }
}
}  // namespace detail

/// The node that owns key (string bytes, a byte span, or an integer hashed as its
/// little-endian bytes) under strategy s, hashing it with the strategy's declared key hash.
template <placement_strategy S, class Key>
[[nodiscard]] auto locate(const S& s, const Key& key) noexcept -> const node& {
    return s.node(detail::pick_of_key(s, key));
}

/// Looks up n = min(points.size(), out.size()) points, out[i] = s.pick(points[i]), and returns
/// n. Every ring and table strategy has a member pick_batch that overlaps the memory accesses of
/// neighbouring lookups (software prefetch), worth it once the structure outgrows the L2 cache;
/// the result is the same as one pick() at a time.
template <placement_strategy S>
[[nodiscard]] auto pick_batch(const S& s, std::span<const std::uint64_t> points, std::span<node_index> out) noexcept
    -> std::size_t {
    if constexpr (requires { { s.pick_batch(points, out) } noexcept -> std::same_as<std::size_t>; }) {
        return s.pick_batch(points, out);
    } else {
        const std::size_t n = points.size() < out.size() ? points.size() : out.size();
        for (std::size_t i = 0; i < n; ++i) {
            out[i] = s.pick(points[i]);
        }
        return n;
    }
}

/// Locates n = min(keys.size(), out.size()) keys, out[i] = &locate(s, keys[i]), and returns n:
/// hashes a block of keys, then looks the block up with pick_batch.
template <placement_strategy S, class Key>
[[nodiscard]] auto locate_batch(const S& s, std::span<const Key> keys, std::span<const node*> out) noexcept
    -> std::size_t {
    constexpr std::size_t block = 16;
    const std::size_t n = keys.size() < out.size() ? keys.size() : out.size();
    if constexpr (detail::key_bytes_strategy<S>) {
        for (std::size_t i = 0; i < n; ++i) {
            out[i] = &locate(s, keys[i]);
        }
        return n;
    }
    std::uint64_t points[block];
    node_index owners[block];
    for (std::size_t at = 0; at < n; at += block) {
        const std::size_t m = n - at < block ? n - at : block;
        for (std::size_t i = 0; i < m; ++i) {
            points[i] = hash_key(typename S::key_hash{}, keys[at + i]);
        }
        (void)pick_batch(s, std::span<const std::uint64_t>(points, m), std::span<node_index>(owners, m));
        for (std::size_t i = 0; i < m; ++i) {
            out[at + i] = &s.node(owners[i]);
        }
    }
    return n;
}

/// Distinct nodes for key in s's preference order (see pick_n), hashing it with the
/// strategy's key hash: writes min(out.size(), s.holders()) indices and returns that count.
template <ordered_placement_strategy S, class Key>
[[nodiscard]] auto locate_n(const S& s, const Key& key, std::span<node_index> out) noexcept
    -> std::size_t {
    if constexpr (detail::key_bytes_strategy<S>) {
        return detail::with_key_bytes(key, [&](std::span<const std::byte> b) noexcept { return s.pick_n_key(b, out); });
    } else {
        return s.pick_n(hash_key(typename S::key_hash{}, key), out);
    }
}

KEYPLACE_NAMESPACE_END

#endif
