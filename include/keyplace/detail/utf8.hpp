// keyplace — which node owns a key. Well-formed UTF-8 (RFC 3629), for the name grammar and for
// messages. Not API.
#ifndef KEYPLACE_DETAIL_UTF8_HPP_INCLUDED
#define KEYPLACE_DETAIL_UTF8_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstddef>
#include <optional>
#include <string_view>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 if none starts there
/// (a stray continuation byte, an overlong form, a surrogate, above U+10FFFF, or cut short).
[[nodiscard]] constexpr auto utf8_sequence(std::string_view s, std::size_t i) noexcept -> std::size_t {
    const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0U; };
    const unsigned lead = b(0);
    const auto tail = [&](std::size_t k) { return (b(k) & 0xc0U) == 0x80U; };
    if (lead < 0x80) {
        return 1;
    }
    if (lead >= 0xc2 && lead <= 0xdf) {
        return tail(1) ? 2 : 0;
    }
    if (lead >= 0xe0 && lead <= 0xef) {
        const unsigned second = b(1);
        const bool ok = (lead == 0xe0 ? second >= 0xa0 : lead == 0xed ? second < 0xa0 : true);
        return ok && tail(1) && tail(2) ? 3 : 0;
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
        const unsigned second = b(1);
        const bool ok = (lead == 0xf0 ? second >= 0x90 : lead == 0xf4 ? second < 0x90 : true);
        return ok && tail(1) && tail(2) && tail(3) ? 4 : 0;
    }
    return 0;
}

/// The offset of the first byte of s that is not well-formed UTF-8, or nothing.
[[nodiscard]] constexpr auto invalid_utf8_at(std::string_view s) noexcept -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < s.size();) {
        const auto n = utf8_sequence(s, i);
        if (n == 0) {
            return i;
        }
        i += n;
    }
    return std::nullopt;
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
