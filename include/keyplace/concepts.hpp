// keyplace — which node owns a key. The placement concepts every strategy models, and locate().
#ifndef KEYPLACE_CONCEPTS_HPP_INCLUDED
#define KEYPLACE_CONCEPTS_HPP_INCLUDED

#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

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

/// A strategy that can list distinct nodes in preference order (replicas, retries).
/// pick_n writes min(out.size(), size()) distinct indices, the first being pick(point),
/// and returns how many it wrote.
template <class S>
concept ordered_placement_strategy =
    placement_strategy<S> && requires(const S& s, std::uint64_t point, std::span<node_index> out) {
        { s.pick_n(point, out) } noexcept -> std::same_as<std::size_t>;
    };

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
