// keyplace — which node owns a key. Text for reports: fixed decimals, JSON string and number
// literals. Not API.
#ifndef KEYPLACE_DETAIL_TEXT_HPP_INCLUDED
#define KEYPLACE_DETAIL_TEXT_HPP_INCLUDED

#include <keyplace/detail/rounding.hpp>
#include <keyplace/version.hpp>

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// x with a fixed number of decimals: fixed(0.83331, 4) == "0.8333"; "?" if it cannot be written.
inline auto fixed(double x, int decimals) -> std::string {
    char buf[400];  // the widest double in fixed notation has 309 integer digits
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, decimals);
    return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}

/// A JSON string literal: quotes, backslashes and control bytes escaped, other bytes as they are
/// (ids are expected to be UTF-8).
inline auto json_string(std::string_view s) -> std::string {
    constexpr char hex[] = "0123456789abcdef";
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (u < 0x20) {
            out += "\\u00";
            out += hex[u >> 4];
            out += hex[u & 0xf];
        } else {
            out += c;
        }
    }
    return out + "\"";
}

/// A JSON number: the shortest decimal that reads back as the same double; null if not finite.
inline auto json_number(double x) -> std::string {
    if (!is_finite(x)) {
        return "null";
    }
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    return ec == std::errc{} ? std::string(buf, end) : std::string("null");
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
