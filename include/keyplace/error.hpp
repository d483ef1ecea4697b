// keyplace — which node owns a key. Errors: keyplace::error (exceptions) and errc (std::error_code).
#ifndef KEYPLACE_ERROR_HPP_INCLUDED
#define KEYPLACE_ERROR_HPP_INCLUDED

#include <keyplace/config.hpp>
#include <keyplace/version.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN

/// Why a strategy could not be built or derived. Values are stable.
enum class errc : int {
    empty_membership = 1,  ///< no nodes, or removing the last node
    empty_id = 2,          ///< a node id is the empty string
    duplicate_id = 3,      ///< two nodes share an id
    invalid_weight = 4,    ///< weight not finite and > 0, or too small to get a point
    invalid_vnodes = 5,    ///< virtual node count 0 or above the limit
    too_many_points = 6,   ///< the ring would exceed its documented point limit
    unknown_id = 7,        ///< an operation names an id that is not a member
    invalid_argument = 8,  ///< any other argument out of its documented range
};

namespace detail {
class error_category_impl final : public std::error_category {
public:
    [[nodiscard]] auto name() const noexcept -> const char* override { return "keyplace"; }
    [[nodiscard]] auto message(int value) const -> std::string override {
        switch (static_cast<errc>(value)) {
            case errc::empty_membership: return "empty membership";
            case errc::empty_id: return "empty node id";
            case errc::duplicate_id: return "duplicate node id";
            case errc::invalid_weight: return "invalid node weight";
            case errc::invalid_vnodes: return "invalid virtual node count";
            case errc::too_many_points: return "too many ring points";
            case errc::unknown_id: return "unknown node id";
            case errc::invalid_argument: return "invalid argument";
        }
        return "unknown keyplace error";
    }
};
}  // namespace detail

/// The category of keyplace's error codes.
[[nodiscard]] inline auto error_category() noexcept -> const std::error_category& {
    static const detail::error_category_impl instance;
    return instance;
}

[[nodiscard]] inline auto make_error_code(errc e) noexcept -> std::error_code {
    return {static_cast<int>(e), error_category()};
}

/// Thrown by build functions and derivations. what() names the offending value.
class error : public std::runtime_error {
public:
    error(errc code, const std::string& message)
        : std::runtime_error(message), code_(code) {}

    [[nodiscard]] auto code() const noexcept -> errc { return code_; }

private:
    errc code_;
};

namespace detail {

/// The outcome of validation: no error, or an errc with a message naming the value.
/// Lets build() throw and try_build() report through std::error_code from one code path.
struct failure {
    errc code{};
    std::string message;

    [[nodiscard]] explicit operator bool() const noexcept { return code != errc{}; }
};

KEYPLACE_COLD inline auto fail(errc code, std::string message) -> failure {
    return failure{code, std::move(message)};
}

KEYPLACE_COLD [[noreturn]] inline void throw_error(failure f) {
    throw error(f.code, f.message);
}

/// The result of a try_ form: the value, or an empty optional with ec set to the failure.
template <class T>
[[nodiscard]] auto report(failure f, T&& value, std::error_code& ec) -> std::optional<std::remove_cvref_t<T>> {
    if (f) {
        ec = make_error_code(f.code);
        return std::nullopt;
    }
    ec.clear();
    return std::optional<std::remove_cvref_t<T>>(std::forward<T>(value));
}

/// Quotes a user-supplied string for an error message, escaping control bytes.
inline auto quote(std::string_view s) -> std::string {
    std::string out;
    out.reserve(s.size() + 2);
    out += '\'';
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == '\'' || c == '\\') {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
        } else {
            out += c;
        }
    }
    out += '\'';
    return out;
}

}  // namespace detail

KEYPLACE_NAMESPACE_END

template <>
struct std::is_error_code_enum<keyplace::errc> : std::true_type {};

#endif
