// keyplace — which node owns a key. A double as text: the shortest decimal that reads back as the
// same double, in the form std::to_chars(first, last, x) writes it, and x with fixed decimals.
// Where the standard library has floating-point std::to_chars (__cpp_lib_to_chars: libstdc++
// 11 on) these are it. Where it does not (libc++ before 17, as emscripten 3.1.6 ships, deletes
// those overloads), they are built from snprintf and strtod, which C requires to round
// correctly, and write the same characters; float_text_test compares the two over random and
// boundary doubles. Not API.
#ifndef KEYPLACE_DETAIL_FLOAT_TEXT_HPP_INCLUDED
#define KEYPLACE_DETAIL_FLOAT_TEXT_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// x with a fixed number of decimals, from the C library ("%.*f" rounds correctly).
inline auto fixed_from_printf(double x, int decimals) -> std::string {
    const int n = std::snprintf(nullptr, 0, "%.*f", decimals, x);
    std::string out(static_cast<std::size_t>(n), '\0');
    std::snprintf(out.data(), out.size() + 1, "%.*f", decimals, x);
    return out;
}

/// The shortest round-trip decimal of a finite x from the C library: to_chars's characters.
/// A digit string and its exponent come from "%.*e" with the fewest digits that read back as x;
/// of equally short strings the correctly rounded one, else its neighbour one unit away (the
/// rounding interval is lopsided at a power of two). Then std::to_chars's choice: fixed or
/// scientific, whichever is shorter, fixed on a tie.
inline auto shortest_from_printf(double x) -> std::string {
    if (x == 0) {
        std::uint64_t bits = 0;  // the sign of a zero (no std::bit_cast in libc++ 14)
        std::memcpy(&bits, &x, sizeof bits);
        return bits >> 63 != 0 ? "-0" : "0";
    }
    char buf[40];
    std::string digits;
    int exp10 = 0;
    const auto parse = [&](const char* s) {  // "-d.ddde+XX" -> digits, exp10
        digits.clear();
        const char* p = s + (*s == '-' ? 1 : 0);
        for (; *p != 'e'; ++p) {
            if (*p != '.') {
                digits += *p;
            }
        }
        exp10 = std::atoi(p + 1);
    };
    const auto reads_back = [&](const std::string& d, int e) {
        const std::string s = std::string(x < 0 ? "-" : "") + d + "e" + std::to_string(e);
        return std::strtod(s.c_str(), nullptr) == x;
    };
    for (int precision = 0; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*e", precision, x);
        parse(buf);
        if (reads_back(digits, exp10 - precision)) {
            break;
        }
        // The neighbours one unit in the last digit, up then down (no carry past the first digit
        // is needed: a carry there gives a shorter string, already tried).
        std::string up = digits;
        std::string down = digits;
        int i = static_cast<int>(up.size()) - 1;
        while (i >= 0 && up[static_cast<std::size_t>(i)] == '9') {
            up[static_cast<std::size_t>(i--)] = '0';
        }
        const bool up_ok = i >= 0 && (++up[static_cast<std::size_t>(i)], reads_back(up, exp10 - precision));
        i = static_cast<int>(down.size()) - 1;
        while (i >= 0 && down[static_cast<std::size_t>(i)] == '0') {
            down[static_cast<std::size_t>(i--)] = '9';
        }
        const bool down_ok = i > 0 || (i == 0 && down[0] != '1')
                                 ? (--down[static_cast<std::size_t>(i)], reads_back(down, exp10 - precision))
                                 : false;
        if (up_ok || down_ok) {
            digits = up_ok ? up : down;
            break;
        }
    }
    while (digits.size() > 1 && digits.back() == '0') {  // "%.*e" pads; the shortest form does not
        digits.pop_back();
    }
    const std::string sign = x < 0 ? "-" : "";
    const auto n = static_cast<int>(digits.size());
    std::string sci = sign + digits.substr(0, 1);
    if (n > 1) {
        sci += "." + digits.substr(1);
    }
    const int mag = exp10 < 0 ? -exp10 : exp10;
    sci += std::string(exp10 < 0 ? "e-" : "e+") + (mag < 10 ? "0" : "") + std::to_string(mag);
    std::string fixed = sign;
    if (exp10 >= n - 1) {
        // A whole number: "%.0f" as printf writes it, the value's exact digits (2^60 is
        // 1152921504606846976, not the shortest digits padded, 1152921504606847000).
        // From 10^24 on it has 25 digits, more than any scientific form (at most 24 characters).
        if (exp10 >= 24) {
            return sci;
        }
        fixed = fixed_from_printf(x, 0);
    } else if (exp10 >= 0) {
        fixed += digits.substr(0, static_cast<std::size_t>(exp10 + 1)) + "." +
                 digits.substr(static_cast<std::size_t>(exp10 + 1));
    } else {
        fixed += "0." + std::string(static_cast<std::size_t>(-exp10 - 1), '0') + digits;
    }
    return fixed.size() <= sci.size() ? fixed : sci;
}

/// The shortest decimal that reads back as x (finite), as std::to_chars(first, last, x) writes it.
inline auto shortest_text(double x) -> std::string {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
    return ec == std::errc{} ? std::string(buf, end) : std::string("?");
#else
    return shortest_from_printf(x);
#endif
}

/// x with a fixed number of decimals: fixed_text(0.83331, 4) == "0.8333".
inline auto fixed_text(double x, int decimals) -> std::string {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
    char buf[400];  // the widest double in fixed notation has 309 integer digits
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, decimals);
    return ec == std::errc{} ? std::string(buf, end) : std::string("?");
#else
    return fixed_from_printf(x, decimals);
#endif
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
