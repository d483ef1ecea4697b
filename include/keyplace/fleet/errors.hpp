// keyplace — which node owns a key. The fleet layer's error codes (fleet_errc), in their own
// category, "keyplace.fleet": what snapshot descriptions, documents, publication and the etcd
// component refuse. The core's codes (errc) are what a strategy refuses.
#ifndef KEYPLACE_FLEET_ERRORS_HPP_INCLUDED
#define KEYPLACE_FLEET_ERRORS_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/version.hpp>

#include <optional>
#include <string>
#include <system_error>
#include <type_traits>

KEYPLACE_NAMESPACE_BEGIN

/// Why the fleet layer refused a description, a document, a publication or an etcd answer.
/// Values are stable, and equal to those the same codes have in errc, which keeps them, as
/// deprecated names, until 0.3: error_info::code() of a fleet error still compares equal to
/// errc::stale_epoch, while its error_code() is in fleet_category(). Compare with fleet_errc:
/// `err == fleet_errc::stale_epoch`.
enum class fleet_errc : int {
    stale_epoch = 25,           ///< a snapshot whose epoch is not newer than the current one
    wrong_cluster = 26,         ///< a snapshot of another cluster
    split_brain = 27,           ///< a snapshot of the current epoch with another fingerprint
    fingerprint_mismatch = 28,  ///< a stated fingerprint or probe digest that differs from the computed one
    invalid_document = 29,      ///< a snapshot document that does not parse or misses a field
    unknown_strategy = 30,      ///< a strategy name or parameter this library does not know
    no_owner = 31,              ///< a snapshot in which no node owns keys (now or after)
    invalid_state = 32,         ///< a node state, or a change of state, that is not allowed
    unavailable = 33,           ///< a coordination service (etcd) unreachable, or answering with an error
    invalid_override = 47,      ///< a snapshot override with an empty, over-long or repeated key, or too many
};

namespace detail {
class fleet_category_impl final : public std::error_category {
public:
    [[nodiscard]] auto name() const noexcept -> const char* override { return "keyplace.fleet"; }
    /// The texts stay with errc's deprecated names until 0.3, so the two categories say the same.
    [[nodiscard]] auto message(int value) const -> std::string override {
        return keyplace::error_category().message(value);
    }
};
}  // namespace detail

/// The category of the fleet layer's codes.
[[nodiscard]] inline auto fleet_category() noexcept -> const std::error_category& {
    static const detail::fleet_category_impl instance;
    return instance;
}

/// What error_info needs to hold a fleet code (found by argument-dependent lookup).
[[nodiscard]] inline auto category_of(fleet_errc) noexcept -> const std::error_category& { return fleet_category(); }

[[nodiscard]] inline auto make_error_code(fleet_errc e) noexcept -> std::error_code {
    return {static_cast<int>(e), fleet_category()};
}

/// The fleet code of an error, or nullopt for none or a core error.
[[nodiscard]] inline auto fleet_code(const error_info& e) noexcept -> std::optional<fleet_errc> {
    const auto ec = e.error_code();
    if (!ec || ec.category() != fleet_category()) {
        return std::nullopt;
    }
    return static_cast<fleet_errc>(ec.value());
}

KEYPLACE_NAMESPACE_END

template <>
struct std::is_error_code_enum<keyplace::fleet_errc> : std::true_type {};

#endif  // KEYPLACE_FLEET_ERRORS_HPP_INCLUDED
