// keyplace — which node owns a key. SplitMix64 (Steele, Lea & Flood, "Fast Splittable
// Pseudorandom Number Generators", OOPSLA 2014): the one seeded generator of the library, for
// fixed samples and seeded token choices. Not API.
#ifndef KEYPLACE_DETAIL_SPLITMIX_HPP_INCLUDED
#define KEYPLACE_DETAIL_SPLITMIX_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// SplitMix64's output function (a bijection of 64-bit words).
[[nodiscard]] constexpr auto splitmix64_mix(std::uint64_t z) noexcept -> std::uint64_t {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/// Advances state and returns the next output.
[[nodiscard]] constexpr auto splitmix64(std::uint64_t& state) noexcept -> std::uint64_t {
    state += 0x9e3779b97f4a7c15ULL;
    return splitmix64_mix(state);
}

/// The next output as a double in [0, 1): its top 53 bits times 2^-53, exact.
[[nodiscard]] constexpr auto splitmix64_unit(std::uint64_t& state) noexcept -> double {
    return static_cast<double>(splitmix64(state) >> 11) * 0x1p-53;
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
