// keyplace — which node owns a key. Integer arithmetic for placement decisions: exact 64x64
// products, a fixed-point log2 defined by an integer algorithm, weight quantization, primality.
// Nothing here depends on the floating-point environment (DESIGN.md §4).
#ifndef KEYPLACE_DETAIL_MATH_HPP_INCLUDED
#define KEYPLACE_DETAIL_MATH_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <string>

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

/// Whether a * b < c * d, exactly (products up to 2^128).
/// floor(n / d) for d > 0 when the quotient fits in 64 bits (bitwise long division).
[[nodiscard]] constexpr auto div_floor(const u128& n, std::uint64_t d) noexcept -> std::uint64_t {
    std::uint64_t q = 0;
    std::uint64_t r = 0;
    for (int i = 127; i >= 0; --i) {
        const bool carry = (r >> 63U) != 0;
        const std::uint64_t bit = i >= 64 ? (n.hi >> static_cast<unsigned>(i - 64)) & 1U : (n.lo >> static_cast<unsigned>(i)) & 1U;
        r = (r << 1U) | bit;
        q <<= 1U;
        if (carry || r >= d) {
            r -= d;
            q |= 1U;
        }
    }
    return q;
}

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

/// x mod d for 64-bit x and a fixed divisor 1 <= d < 2^32 without a division instruction:
/// Lemire, Kaser & Kurz, "Faster Remainder by Direct Computation" (2019), with a 128-bit
/// multiplier. Exact for every x; where the compiler has no 128-bit integers it uses %.
class fast_mod {
public:
    constexpr fast_mod() noexcept = default;
    constexpr explicit fast_mod(std::uint64_t d) noexcept : d_(d) {
#if defined(__SIZEOF_INT128__)
        __extension__ using wide = unsigned __int128;
        const wide m = ~wide{0} / d + 1;
        m_hi_ = static_cast<std::uint64_t>(m >> 64);
        m_lo_ = static_cast<std::uint64_t>(m);
#endif
    }

    [[nodiscard]] constexpr auto operator()(std::uint64_t x) const noexcept -> std::uint64_t {
#if defined(__SIZEOF_INT128__)
        __extension__ using wide = unsigned __int128;
        // low = (M * x) mod 2^128, then (low * d) >> 128.
        const wide lo_product = static_cast<wide>(m_lo_) * x;
        const std::uint64_t low_lo = static_cast<std::uint64_t>(lo_product);
        const std::uint64_t low_hi = static_cast<std::uint64_t>(lo_product >> 64) + m_hi_ * x;
        const wide top = static_cast<wide>(low_hi) * d_ + ((static_cast<wide>(low_lo) * d_) >> 64);
        return static_cast<std::uint64_t>(top >> 64);
#else
        return x % d_;
#endif
    }

    [[nodiscard]] constexpr auto divisor() const noexcept -> std::uint64_t { return d_; }

private:
    std::uint64_t d_ = 1;
    std::uint64_t m_hi_ = 0;
    std::uint64_t m_lo_ = 0;
};

/// The value whose in-memory bytes are v's little-endian bytes.
[[nodiscard]] constexpr auto to_le64(std::uint64_t v) noexcept -> std::uint64_t {
    if constexpr (std::endian::native == std::endian::little) {
        return v;
    } else {
        std::uint64_t r = 0;
        for (int b = 0; b < 8; ++b) {
            r = (r << 8) | ((v >> (8 * b)) & 0xffU);
        }
        return r;
    }
}

/// Fixed-point log2 with 48 fraction bits (placement contract v1, README "Rendezvous").
/// log2_frac(v) for v in [4096, 8192] is log2(v / 4096) computed bit by bit: square a
/// 62-fraction-bit value, truncating, and take a bit whenever it reaches 2.
[[nodiscard]] constexpr auto log2_frac(std::uint64_t v) noexcept -> std::uint64_t {
    if (v == 8192) {
        return std::uint64_t{1} << 48;
    }
    std::uint64_t x = v << 50;
    std::uint64_t r = 0;
    for (int b = 47; b >= 0; --b) {
        const u128 sq = mul_wide(x, x);
        x = (sq.hi << 2) | (sq.lo >> 62);
        if (x >= (std::uint64_t{1} << 63)) {
            x >>= 1;
            r |= std::uint64_t{1} << b;
        }
    }
    return r;
}

using log2_table_type = std::array<std::uint64_t, 4097>;

/// The 4097 interpolation points of log2fix, computed once on first use.
[[nodiscard]] inline auto log2_table() -> const log2_table_type& {
    static const log2_table_type table = [] {
        log2_table_type t{};
        for (std::size_t i = 0; i < t.size(); ++i) {
            t[i] = log2_frac(4096 + i);
        }
        return t;
    }();
    return table;
}

/// log2(y) * 2^48 for 1 <= y < 2^64, by the table and linear interpolation on 24 more bits.
[[nodiscard]] inline auto log2fix(const log2_table_type& t, std::uint64_t y) noexcept
    -> std::uint64_t {
    const auto e = static_cast<std::uint64_t>(63 - std::countl_zero(y));
    const std::uint64_t m = y << (63 - e);
    const std::size_t i = static_cast<std::size_t>((m >> 51) & 0xfffU);
    const std::uint64_t frac = (m >> 27) & 0xffffffU;
    return (e << 48) + t[i] + (((t[i + 1] - t[i]) * frac) >> 24);
}

/// Weight resolution of rendezvous and Maglev: weights count in units of 2^-16.
inline constexpr double weight_scale = 65536.0;
inline constexpr std::uint64_t max_quantized_weight = std::uint64_t{1} << 53;

/// q(w) = llround(w * 65536), which must lie in [1, 2^53].
[[nodiscard]] inline auto quantize_weight(const node& n, std::uint64_t& q) -> failure {
    const double scaled = n.weight * weight_scale;  // exact: a power-of-two scale
    if (!(scaled < static_cast<double>(max_quantized_weight) + 0.5)) {
        return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                              format_weight(n.weight) +
                                              " is above the largest weight, 2^37");
    }
    q = static_cast<std::uint64_t>(std::llround(scaled));
    if (q == 0) {
        return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                              format_weight(n.weight) +
                                              " is below the weight resolution, 2^-16");
    }
    return {};
}

/// Deterministic primality by trial division (n < 2^32: at most 2^16 divisions).
[[nodiscard]] constexpr auto is_prime(std::uint64_t n) noexcept -> bool {
    if (n < 2) {
        return false;
    }
    if (n % 2 == 0) {
        return n == 2;
    }
    for (std::uint64_t d = 3; d * d <= n; d += 2) {
        if (n % d == 0) {
            return false;
        }
    }
    return true;
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
