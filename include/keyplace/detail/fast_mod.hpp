// keyplace — which node owns a key. Remainders by a fixed table size without a division
// instruction, and the primality check Maglev's table sizes need.
#ifndef KEYPLACE_DETAIL_FAST_MOD_HPP_INCLUDED
#define KEYPLACE_DETAIL_FAST_MOD_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

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

/// Deterministic primality by trial division (n < 2^32: at most 2^16 divisions).
[[nodiscard]] constexpr auto is_prime(std::uint64_t n) noexcept -> bool {
    if (n < 2) {
        return false;
    }
    if (n % 2 == 0) {
        return n == 2;
    }
    for (std::uint64_t d = 3; d <= n / d; d += 2) {  // d <= n / d: d * d would wrap past 2^64
        if (n % d == 0) {
            return false;
        }
    }
    return true;
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
