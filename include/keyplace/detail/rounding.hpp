// keyplace — which node owns a key. Exact rounding of non-negative doubles below 2^63 without
// <cmath> (whose C++17 special functions cost every translation unit): each is the value
// std::llround, std::floor or std::ceil gives there.
#ifndef KEYPLACE_DETAIL_ROUNDING_HPP_INCLUDED
#define KEYPLACE_DETAIL_ROUNDING_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// x rounded to the nearest integer, halves away from zero (std::llround), for 0 <= x < 2^63.
/// The conversion truncates; x - t is exact (below 2^52 both are exact doubles, above x is an
/// integer already).
[[nodiscard]] constexpr auto round_half_away(double x) noexcept -> std::uint64_t {
    const auto t = static_cast<std::uint64_t>(x);
    return t + (x - static_cast<double>(t) >= 0.5 ? 1U : 0U);
}

/// floor(x) and ceil(x) for 0 <= x < 2^63.
[[nodiscard]] constexpr auto floor_nonnegative(double x) noexcept -> double {
    return static_cast<double>(static_cast<std::uint64_t>(x));
}
[[nodiscard]] constexpr auto ceil_nonnegative(double x) noexcept -> double {
    const double t = floor_nonnegative(x);
    return t < x ? t + 1.0 : t;
}

/// Whether x is neither infinite nor NaN (std::isfinite): x - x is 0 exactly then, NaN otherwise.
[[nodiscard]] constexpr auto is_finite(double x) noexcept -> bool { return x - x == 0.0; }

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
