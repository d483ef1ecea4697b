// keyplace — which node owns a key. A strategy over an engine (the sorted ring or the slot
// table): the lifecycle plus the query surface every engine shares, written once. Not API.
#ifndef KEYPLACE_DETAIL_ENGINE_ENGINE_STRATEGY_HPP_INCLUDED
#define KEYPLACE_DETAIL_ENGINE_ENGINE_STRATEGY_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// Asks the cache for the line at address, without waiting for it.
inline void prefetch(const void* address) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address);
#else
    (void)address;
#endif
}

/// out[i] = read(where(points[i])) for i < n, in blocks of 16: a block's where() computed and
/// each address(where) prefetched before the first read, so the block's cache misses overlap.
/// The engines' pick_batch.
template <class Where, class Address, class Read>
void prefetched_batch(const std::uint64_t* points, node_index* out, std::size_t n, const Where& where,
                      const Address& address, const Read& read) noexcept {
    constexpr std::size_t block = 16;
    std::uint64_t at_block[block];
    for (std::size_t at = 0; at < n; at += block) {
        const std::size_t m = n - at < block ? n - at : block;
        for (std::size_t i = 0; i < m; ++i) {
            at_block[i] = where(points[at + i]);
            prefetch(address(at_block[i]));
        }
        for (std::size_t i = 0; i < m; ++i) {
            out[at + i] = read(at_block[i]);
        }
    }
}

/// Engine provides pick(point), pick_batch(points, out, n), walk(point, visit&), holders(),
/// count(node_index), regions() and memory_bytes(); Derived fills engine_ (and nodes_) in its assign().
template <class Derived, class Engine, hasher KeyHash, class Member, class Config, derivation Derives,
          node_order Order>
class engine_strategy : public lifecycle<Derived, Member, Config, Derives, Order> {
public:
    using key_hash = KeyHash;

    /// The owner of a hashed key. O(1) expected.
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index { return engine_.pick(point); }
    /// out[i] = pick(points[i]) for i < n = min(points.size(), out.size()); returns n. Overlaps
    /// the memory accesses of neighbouring lookups (software prefetch).
    [[nodiscard]] auto pick_batch(std::span<const std::uint64_t> points, std::span<node_index> out) const noexcept
        -> std::size_t {
        const std::size_t n = points.size() < out.size() ? points.size() : out.size();
        engine_.pick_batch(points.data(), out.data(), n);
        return n;
    }
    /// The first min(out.size(), holders()) distinct nodes of walk(point).
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept -> std::size_t {
        return collect_distinct(*this, point, out);
    }
    /// Visits the nodes in preference order from pick(point) on — a ring's owners clockwise, a
    /// table's slots onward — once around, a node again at each of its points or slots, until
    /// visit(node_index) returns false.
    template <class Visit>
    void walk(std::uint64_t point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        engine_.walk(point, visit);
    }
    /// Nodes that hold at least one point or slot (the ones pick can return), and whether node
    /// i does.
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return engine_.holders(); }
    [[nodiscard]] auto holds(node_index i) const noexcept -> bool { return engine_.count(i) != 0; }
    /// The ownership regions (ring arcs or table slots): analysis is exact over them.
    [[nodiscard]] auto regions() const noexcept { return engine_.regions(); }
    /// Bytes of the lookup structure (per-node state and the node list not counted).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t { return engine_.memory_bytes(); }

protected:
    engine_strategy() = default;

    /// Points or slots per node, by node index.
    [[nodiscard]] auto counts_per_node() const -> std::vector<std::size_t> {
        std::vector<std::size_t> out(this->size());
        for (std::size_t i = 0; i < out.size(); ++i) {
            out[i] = static_cast<std::size_t>(engine_.count(node_index{static_cast<std::uint32_t>(i)}));
        }
        return out;
    }

    Engine engine_;
};

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
