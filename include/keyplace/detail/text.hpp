// keyplace — which node owns a key. Text for reports: fixed decimals, JSON string and number
// literals, and the one JSON writer the reports use. Not API.
#ifndef KEYPLACE_DETAIL_TEXT_HPP_INCLUDED
#define KEYPLACE_DETAIL_TEXT_HPP_INCLUDED

#include <keyplace/detail/float_text.hpp>
#include <keyplace/detail/rounding.hpp>
#include <keyplace/version.hpp>

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// x with a fixed number of decimals: fixed(0.83331, 4) == "0.8333"; "?" if it cannot be written.
inline auto fixed(double x, int decimals) -> std::string { return fixed_text(x, decimals); }

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
    return shortest_text(x);
}

/// JSON text written in order: objects and arrays get their commas, keys their quotes and colon.
/// write(x) appends a value (a string, a whole number, a double as json_number, a bool), raw(t)
/// text already JSON. Not a validator: the caller nests begin and end.
class json_writer {
public:
    auto begin_object() -> json_writer& { return open('{'); }
    auto end_object() -> json_writer& { return close('}'); }
    auto begin_array() -> json_writer& { return open('['); }
    auto end_array() -> json_writer& { return close(']'); }
    /// "name": — the next value is this member's.
    auto key(std::string_view name) -> json_writer& {
        separate();
        out_ += json_string(name);
        out_ += ':';
        keyed_ = true;
        return *this;
    }
    auto raw(std::string_view text) -> json_writer& {
        separate();
        out_ += text;
        return *this;
    }
    auto write(std::string_view s) -> json_writer& { return raw(json_string(s)); }
    auto write(const char* s) -> json_writer& { return write(std::string_view(s)); }
    auto write(const std::string& s) -> json_writer& { return write(std::string_view(s)); }
    auto write(bool b) -> json_writer& { return raw(b ? "true" : "false"); }
    auto write(double x) -> json_writer& { return raw(json_number(x)); }
    template <class I>
        requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
    auto write(I v) -> json_writer& {
        return raw(std::to_string(v));
    }
    /// key(name) then write(value).
    template <class T>
    auto member(std::string_view name, const T& value) -> json_writer& {
        return key(name).write(value);
    }
    /// An array of the values, each written as write() writes it.
    template <class Range>
    auto array(const Range& values) -> json_writer& {
        begin_array();
        for (const auto& v : values) {
            write(v);
        }
        return end_array();
    }
    [[nodiscard]] auto str() const& -> const std::string& { return out_; }
    [[nodiscard]] auto str() && -> std::string { return std::move(out_); }

private:
    void separate() {
        if (keyed_) {
            keyed_ = false;
        } else if (!first_.empty() && first_.back() == 0) {
            out_ += ',';
        }
        if (!first_.empty()) {
            first_.back() = 0;
        }
    }
    auto open(char c) -> json_writer& {
        separate();
        out_ += c;
        first_.push_back(1);
        return *this;
    }
    auto close(char c) -> json_writer& {
        out_ += c;
        first_.pop_back();
        return *this;
    }
    std::string out_;
    std::vector<unsigned char> first_;  // per open container: 1 while no element is written
    bool keyed_ = false;       // a key was written: its value follows without a comma
};

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
