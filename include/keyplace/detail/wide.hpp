// keyplace — which node owns a key. Exact 128-bit products and quotients of 64-bit values, so
// placement decisions compare ratios without rounding (doc/contract.md).
#ifndef KEYPLACE_DETAIL_WIDE_HPP_INCLUDED
#define KEYPLACE_DETAIL_WIDE_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <compare>
#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// An unsigned 128-bit value as two words; compares as a number.
struct u128 {
    std::uint64_t hi;
    std::uint64_t lo;
    friend constexpr auto operator<=>(const u128&, const u128&) noexcept = default;
};

/// a + b (modulo 2^128).
[[nodiscard]] constexpr auto add(const u128& a, const u128& b) noexcept -> u128 {
    const std::uint64_t lo = a.lo + b.lo;
    return {a.hi + b.hi + (lo < a.lo ? 1U : 0U), lo};
}

/// The exact product of two 64-bit values from 32-bit halves (any compiler).
[[nodiscard]] constexpr auto mul_wide_portable(std::uint64_t a, std::uint64_t b) noexcept -> u128 {
    const std::uint64_t a_lo = a & 0xffffffffU;
    const std::uint64_t a_hi = a >> 32;
    const std::uint64_t b_lo = b & 0xffffffffU;
    const std::uint64_t b_hi = b >> 32;
    const std::uint64_t ll = a_lo * b_lo;
    const std::uint64_t lh = a_lo * b_hi;
    const std::uint64_t hl = a_hi * b_lo;
    const std::uint64_t hh = a_hi * b_hi;
    const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffU) + (hl & 0xffffffffU);
    return {hh + (lh >> 32) + (hl >> 32) + (mid >> 32), (mid << 32) | (ll & 0xffffffffU)};
}

/// The exact product of two 64-bit values.
[[nodiscard]] constexpr auto mul_wide(std::uint64_t a, std::uint64_t b) noexcept -> u128 {
#if defined(__SIZEOF_INT128__)
    __extension__ using wide = unsigned __int128;
    const wide p = static_cast<wide>(a) * b;
    return {static_cast<std::uint64_t>(p >> 64), static_cast<std::uint64_t>(p)};
#else
    return mul_wide_portable(a, b);
#endif
}

/// a - b (modulo 2^128).
[[nodiscard]] constexpr auto sub(const u128& a, const u128& b) noexcept -> u128 {
    return {a.hi - b.hi - (a.lo < b.lo ? 1U : 0U), a.lo - b.lo};
}

/// a * b (modulo 2^128).
[[nodiscard]] constexpr auto mul(const u128& a, std::uint64_t b) noexcept -> u128 {
    const u128 low = mul_wide(a.lo, b);
    return {low.hi + a.hi * b, low.lo};
}

/// floor(n / d) for d > 0 when the quotient fits in 64 bits, by bitwise long division (any
/// compiler).
[[nodiscard]] constexpr auto div_floor_portable(const u128& n, const u128& d) noexcept -> std::uint64_t {
    std::uint64_t q = 0;
    u128 r{0, 0};
    for (int i = 127; i >= 0; --i) {
        const bool carry = (r.hi >> 63U) != 0;  // 2r + bit >= 2^128 > d
        const std::uint64_t bit = i >= 64 ? (n.hi >> static_cast<unsigned>(i - 64)) & 1U : (n.lo >> static_cast<unsigned>(i)) & 1U;
        r = {(r.hi << 1U) | (r.lo >> 63U), (r.lo << 1U) | bit};
        q <<= 1U;
        if (carry || r >= d) {
            r = sub(r, d);
            q |= 1U;
        }
    }
    return q;
}

/// floor(n / d) for d > 0 when the quotient fits in 64 bits.
[[nodiscard]] constexpr auto div_floor(const u128& n, const u128& d) noexcept -> std::uint64_t {
#if defined(__SIZEOF_INT128__)
    __extension__ using wide = unsigned __int128;
    const wide wn = (static_cast<wide>(n.hi) << 64U) | n.lo;
    const wide wd = (static_cast<wide>(d.hi) << 64U) | d.lo;
    return static_cast<std::uint64_t>(wn / wd);
#else
    return div_floor_portable(n, d);
#endif
}
[[nodiscard]] constexpr auto div_floor(const u128& n, std::uint64_t d) noexcept -> std::uint64_t {
    return div_floor(n, u128{0, d});
}

/// ceil(n / d) for d > 0 when the quotient fits in 64 bits.
[[nodiscard]] constexpr auto div_ceil(const u128& n, const u128& d) noexcept -> std::uint64_t {
    const std::uint64_t q = div_floor(n, d);
    return mul(d, q) == n ? q : q + 1;
}

/// Whether a * b < c * d, exactly (products up to 2^128).
[[nodiscard]] constexpr auto product_less(std::uint64_t a, std::uint64_t b, std::uint64_t c,
                                          std::uint64_t d) noexcept -> bool {
#if defined(__SIZEOF_INT128__)
    __extension__ using wide = unsigned __int128;
    return static_cast<wide>(a) * b < static_cast<wide>(c) * d;
#else
    const u128 left = mul_wide(a, b);
    const u128 right = mul_wide(c, d);
    return left.hi < right.hi || (left.hi == right.hi && left.lo < right.lo);
#endif
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
