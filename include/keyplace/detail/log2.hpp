// keyplace — which node owns a key. The fixed-point log2 of weighted rendezvous (Schindelhauer
// & Schomaker's logarithmic method), defined by an integer algorithm (placement contract v1).
#ifndef KEYPLACE_DETAIL_LOG2_HPP_INCLUDED
#define KEYPLACE_DETAIL_LOG2_HPP_INCLUDED

#include <keyplace/detail/log2_table.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

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

/// Fixed-point log2 with 48 fraction bits (placement contract v1, doc/contract.md, "Rendezvous").
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

/// The 4097 interpolation points of log2fix, log2_frac(4096 + i). They are committed
/// constants (tools/generate_log2_table.cpp): compilers constant-evaluate a static's
/// initializer, and 4097 calls of log2_frac cost every including TU 1.2 s on g++ 12.
/// keyplace_tests checks every entry against log2_frac.
[[nodiscard]] inline auto log2_table() -> const log2_table_type& { return log2_table_values; }

/// log2(y) * 2^48 for 1 <= y < 2^64, by the table and linear interpolation on 24 more bits.
[[nodiscard]] inline auto log2fix(const log2_table_type& t, std::uint64_t y) noexcept
    -> std::uint64_t {
    const auto e = static_cast<std::uint64_t>(63 - std::countl_zero(y));
    const std::uint64_t m = y << (63 - e);
    const std::size_t i = static_cast<std::size_t>((m >> 51) & 0xfffU);
    const std::uint64_t frac = (m >> 27) & 0xffffffU;
    return (e << 48) + t[i] + (((t[i + 1] - t[i]) * frac) >> 24);
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
