// keyplace — which node owns a key. Remainders by a fixed table size without a division
// instruction (Barrett), and the primality check Maglev's table sizes need.
#ifndef KEYPLACE_DETAIL_FAST_MOD_HPP_INCLUDED
#define KEYPLACE_DETAIL_FAST_MOD_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstdint>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// x mod d for 64-bit x and a fixed divisor 1 <= d < 2^32 without a division instruction: a
/// Barrett reduction. With m = floor((2^64 - 1) / d), q = floor(x * m / 2^64) is floor(x / d)
/// or one less (x * m / 2^64 > x / d - 1 - x / 2^64 > x / d - 2), so r = x - q * d is the
/// remainder or the remainder plus d, and one conditional subtraction corrects it: one wide
/// multiply and one narrow. Exact for every x (d = 1 included: q = x - 1 for x >= 1, r = 1,
/// corrected to 0). Where the compiler has no 128-bit integers it uses %.
class fast_mod {
public:
    constexpr fast_mod() noexcept = default;
    constexpr explicit fast_mod(std::uint64_t d) noexcept : d_(d), m_(~std::uint64_t{0} / d) {}

    [[nodiscard]] constexpr auto operator()(std::uint64_t x) const noexcept -> std::uint64_t {
#if defined(__SIZEOF_INT128__)
        __extension__ using wide = unsigned __int128;
        const auto q = static_cast<std::uint64_t>((static_cast<wide>(x) * m_) >> 64);
        const std::uint64_t r = x - q * d_;
        return r >= d_ ? r - d_ : r;
#else
        return x % d_;
#endif
    }

    [[nodiscard]] constexpr auto divisor() const noexcept -> std::uint64_t { return d_; }

private:
    std::uint64_t d_ = 1;
    std::uint64_t m_ = ~std::uint64_t{0};
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
