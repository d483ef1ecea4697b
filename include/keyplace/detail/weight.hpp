// keyplace — which node owns a key. Node weights as integers in units of 2^-16, the form in
// which rendezvous and Maglev use them (placement contract v1, doc/contract.md).
#ifndef KEYPLACE_DETAIL_WEIGHT_HPP_INCLUDED
#define KEYPLACE_DETAIL_WEIGHT_HPP_INCLUDED

#include <keyplace/detail/rounding.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstdint>
#include <string>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// Weight resolution of rendezvous and Maglev: weights count in units of 2^-16.
inline constexpr double weight_scale = 65536.0;
inline constexpr std::uint64_t max_quantized_weight = std::uint64_t{1} << 53;

/// q(w) = llround(w * 65536), which must lie in [1, 2^53].
[[nodiscard]] inline auto quantize_weight(const node& n, std::uint64_t& q) -> failure {
    const double scaled = n.weight * weight_scale;  // exact: a power-of-two scale
    // <= 2^53, not < 2^53 + 0.5: that sum is not a double, it rounds to 2^53 and refused 2^37.
    if (!(scaled <= static_cast<double>(max_quantized_weight))) {
        return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                              format_weight(n.weight) +
                                              " is above the largest weight, 2^37");
    }
    q = round_half_away(scaled);
    if (q == 0) {
        return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                              format_weight(n.weight) +
                                              " is below the weight resolution, 2^-16");
    }
    return {};
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
