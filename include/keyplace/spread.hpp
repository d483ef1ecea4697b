// keyplace — which node owns a key. Hot-key spreading over any ordered strategy: a read of a hot
// key goes to one of the first k nodes of the key's preference order, chosen by a salt (a request
// or client number), so k copies share its reads; writes go to all k (locate_n / pick_n).
#ifndef KEYPLACE_SPREAD_HPP_INCLUDED
#define KEYPLACE_SPREAD_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

KEYPLACE_NAMESPACE_BEGIN

/// The most copies a hot key can be spread over.
inline constexpr std::size_t max_spread_width = 64;

/// How many of the first nodes of a key's preference order share its reads: 1 to
/// max_spread_width, checked once when made so that the lookups can be noexcept.
class spread_width {
public:
    /// Throws keyplace::error (invalid_argument) for k = 0 or k above max_spread_width.
    [[nodiscard]] static auto make(std::size_t k) -> spread_width {
        error_info err;
        auto w = try_make(k, err);
        if (!w) {
            detail::raise(err);
        }
        return *w;
    }
    [[nodiscard]] static auto try_make(std::size_t k, error_info& err) -> std::optional<spread_width> {
        if (k == 0 || k > max_spread_width) {
            err = detail::fail(errc::invalid_argument, "spread width " + std::to_string(k) + " is outside 1.." +
                                                           std::to_string(max_spread_width));
            return std::nullopt;
        }
        err.clear();
        return spread_width(k);
    }
    [[nodiscard]] constexpr auto value() const noexcept -> std::size_t { return k_; }

private:
    explicit constexpr spread_width(std::size_t k) noexcept : k_(k) {}
    std::size_t k_;
};

/// The spread contract (doc/guide.md, "Hot keys"): which of k candidates serves (point, salt).
/// x = mix(point XOR mix(salt + 0x9e3779b97f4a7c15)), where mix is SplitMix64's output function
/// (so the inner term is SplitMix64's first output seeded with salt), and the index is
/// floor(x * k / 2^64) (Lemire's multiply-shift). For a fixed point, salt -> x is a bijection,
/// so over salts every index < k is equally likely (to within k / 2^64). Needs k >= 1.
[[nodiscard]] constexpr auto spread_index(std::uint64_t point, std::uint64_t salt, std::size_t k) noexcept
    -> std::size_t {
    const std::uint64_t x = detail::splitmix64_mix(point ^ detail::splitmix64_mix(salt + 0x9e3779b97f4a7c15ULL));
    return static_cast<std::size_t>(detail::mul_wide(x, static_cast<std::uint64_t>(k)).hi);
}

/// The node that serves this read of a hashed key: entry spread_index(point, salt, m) of the
/// first m = min(k, holders()) nodes of the preference order (pick_n). k = 1 is pick(point);
/// k above the holders spreads over every holder. O(cost of pick_n with m slots); allocates nothing.
template <ordered_placement_strategy S>
[[nodiscard]] auto pick_spread(const S& s, std::uint64_t point, spread_width k, std::uint64_t salt) noexcept
    -> node_index {
    if (k.value() == 1) {
        return s.pick(point);
    }
    std::array<node_index, max_spread_width> first{};
    const std::size_t m = s.pick_n(point, std::span<node_index>(first.data(), k.value()));
    return first[m > 1 ? spread_index(point, salt, m) : 0];
}

/// pick_spread of the key hashed with the strategy's key hash. Not for a strategy whose key
/// point does not decide its owner (go-mpchash: detail::needs_key_bytes): its point's order is
/// not the one its keys are served in, so this does not compile for it.
template <ordered_placement_strategy S, class Key>
    requires(!detail::needs_key_bytes<S>)
[[nodiscard]] auto locate_spread(const S& s, const Key& key, spread_width k, std::uint64_t salt) noexcept
    -> const node& {
    return s.node(pick_spread(s, static_cast<std::uint64_t>(hash_key(typename S::key_hash{}, key)), k, salt));
}

/// The same with k checked on each call: throws keyplace::error (invalid_argument) for k = 0 or
/// k above max_spread_width. Make a spread_width once for a noexcept lookup.
template <ordered_placement_strategy S>
[[nodiscard]] auto pick_spread(const S& s, std::uint64_t point, std::size_t k, std::uint64_t salt) -> node_index {
    return pick_spread(s, point, spread_width::make(k), salt);
}
template <ordered_placement_strategy S, class Key>
[[nodiscard]] auto locate_spread(const S& s, const Key& key, std::size_t k, std::uint64_t salt) -> const node& {
    return locate_spread(s, key, spread_width::make(k), salt);
}

KEYPLACE_NAMESPACE_END

#endif
