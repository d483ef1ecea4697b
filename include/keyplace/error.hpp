// keyplace — which node owns a key. Errors: error_info (a code and the message naming the
// offending value), keyplace::error (the exception carrying it), errc, and the one reporting path.
#ifndef KEYPLACE_ERROR_HPP_INCLUDED
#define KEYPLACE_ERROR_HPP_INCLUDED

#include <keyplace/config.hpp>
#include <keyplace/detail/utf8.hpp>
#include <keyplace/version.hpp>

#include <concepts>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include <cstdio>
#include <cstdlib>

KEYPLACE_NAMESPACE_BEGIN

/// Why a strategy could not be built or derived. Values are stable: new ones are appended.
enum class errc : int {
    empty_membership = 1,       ///< no nodes, or removing the last node
    empty_id = 2,               ///< a node id (or a server host) is empty
    duplicate_id = 3,           ///< two nodes share an id
    invalid_weight = 4,         ///< a weight outside what the strategy accepts
    invalid_vnodes = 5,         ///< virtual node count 0 or above the limit
    too_many_points = 6,        ///< the ring would exceed its documented point limit
    unknown_id = 7,             ///< an operation names an id that is not a member
    invalid_argument = 8,       ///< any other argument out of its documented range
    id_too_long = 9,            ///< a node id longer than max_id_length bytes
    table_size_not_prime = 10,  ///< a Maglev table size that is not prime
    invalid_table_size = 11,    ///< a table size above its limit or below the node count
    too_many_nodes = 12,        ///< more nodes than the strategy can index
    no_points = 13,             ///< a ring would hold no point, or a node lists none it needs
    duplicate_token = 14,       ///< a token (ring point) that must be unique is listed twice
    slot_overlap = 15,          ///< a slot assigned to more than one node
    slot_gap = 16,              ///< a slot assigned to no node
    invalid_slot_range = 17,    ///< a slot range reversed or outside the slot space
    invalid_ring_size = 18,     ///< a ring size bound out of range, or min above max
    invalid_address = 19,       ///< a server address that does not parse
    replica_shortfall = 20,     ///< fewer holders or failure domains than copies (shortfall::fail)
    invalid_replica_count = 21, ///< 0 copies, or more copies than nodes
    unknown_domain = 22,        ///< a named domain (region, datacenter, locality) that holds no node
    duplicate_domain = 23,      ///< a domain given more than one count or weight
    missing_location = 24,      ///< a node without the location part a policy needs
    // 25 to 33 and 47 are the fleet layer's codes (fleet_errc, in fleet/errors.hpp, category
    // "keyplace.fleet"). Their names here are deprecated and go in 0.3: a fleet error's code()
    // still equals them, its error_code() is in the fleet category.
    stale_epoch = 25,           ///< a snapshot whose epoch is not newer than the current one
    wrong_cluster = 26,         ///< a snapshot of another cluster
    split_brain = 27,           ///< a snapshot of the current epoch with another fingerprint
    fingerprint_mismatch = 28,  ///< a stated fingerprint that differs from the computed one
    invalid_document = 29,      ///< a snapshot document that does not parse or misses a field
    unknown_strategy = 30,      ///< a strategy name or parameter this library does not know
    no_owner = 31,              ///< a snapshot in which no node owns keys (now or after)
    invalid_state = 32,         ///< a node state, or a change of state, that is not allowed
    unavailable = 33,           ///< a coordination service (etcd) unreachable, or answering with an error
    unsupported_replication = 34, ///< a replication token allocation cannot balance (1 < racks < RF)
    invalid_partition_count = 36,  ///< a partition count that is not a power of two in 1 .. 2^20
    invalid_partition_table = 37,  ///< a partition table of the wrong size, naming a non-member or a node twice
    invalid_override = 47,      ///< a snapshot override with an empty, over-long or repeated key, or too many
    invalid_name = 48,          ///< a name (id, location part, cluster, client id) outside the name grammar
    out_of_memory = 49,         ///< an allocation failed inside a try_ form that reports it (the JSON reader)
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
            case errc::id_too_long: return "node id too long";
            case errc::table_size_not_prime: return "table size not prime";
            case errc::invalid_table_size: return "invalid table size";
            case errc::too_many_nodes: return "too many nodes";
            case errc::no_points: return "no ring points";
            case errc::duplicate_token: return "duplicate token";
            case errc::slot_overlap: return "slot assigned twice";
            case errc::slot_gap: return "slot not assigned";
            case errc::invalid_slot_range: return "invalid slot range";
            case errc::invalid_ring_size: return "invalid ring size";
            case errc::invalid_address: return "invalid server address";
            case errc::replica_shortfall: return "too few holders or domains for the copies";
            case errc::invalid_replica_count: return "invalid replica count";
            case errc::unknown_domain: return "unknown domain";
            case errc::duplicate_domain: return "duplicate domain";
            case errc::missing_location: return "missing location part";
            case errc::stale_epoch: return "stale snapshot epoch";
            case errc::wrong_cluster: return "snapshot of another cluster";
            case errc::split_brain: return "same epoch, different fingerprint";
            case errc::fingerprint_mismatch: return "fingerprint mismatch";
            case errc::invalid_document: return "invalid snapshot document";
            case errc::unknown_strategy: return "unknown strategy or parameter";
            case errc::no_owner: return "no node owns keys";
            case errc::invalid_state: return "invalid node state";
            case errc::unavailable: return "coordination service unavailable";
            case errc::unsupported_replication: return "replication not supported by token allocation";
            case errc::invalid_partition_count: return "invalid partition count";
            case errc::invalid_partition_table: return "invalid partition table";
            case errc::invalid_override: return "invalid key override";
            case errc::invalid_name: return "invalid name";
            case errc::out_of_memory: return "out of memory";
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

namespace detail {
struct error_access;
}  // namespace detail

/// The outcome of a build or derivation: no error, or a code and a message that names the
/// offending value. The try_ forms fill one; the throwing forms throw keyplace::error holding
/// the same code and message.
class error_info {
public:
    error_info() = default;
    error_info(errc code, std::string message) : code_(code), message_(std::move(message)) {}
    /// A code of another keyplace category (the fleet layer's fleet_errc): its values share
    /// errc's numbering, and category_of(code), found by argument-dependent lookup, names the
    /// category error_code() reports.
    template <class E>
        requires std::is_enum_v<E> && requires(E e) { { category_of(e) } -> std::same_as<const std::error_category&>; }
    error_info(E code, std::string message)
        : code_(static_cast<errc>(code)), category_(&category_of(code)), message_(std::move(message)) {}

    /// Whether this holds an error.
    [[nodiscard]] explicit operator bool() const noexcept { return code_ != errc{}; }
    [[nodiscard]] auto code() const noexcept -> errc { return code_; }
    /// The full message ("node id 'a' appears more than once"); empty when there is no error.
    [[nodiscard]] auto message() const noexcept -> const std::string& { return message_; }
    /// The code as a std::error_code in its category: keyplace's, or the fleet layer's
    /// ("keyplace.fleet") for a fleet_errc (empty when there is no error).
    [[nodiscard]] auto error_code() const noexcept -> std::error_code {
        if (code_ == errc{}) {
            return {};
        }
        return {static_cast<int>(code_), category_ != nullptr ? *category_ : error_category()};
    }
    void clear() noexcept {
        code_ = errc{};
        category_ = nullptr;
        message_.clear();
        where_.clear();
        node_.reset();
    }
    /// Where the error is, as a document path ("strategy.params.vnodes", "nodes[3].tokens"),
    /// set by the check that failed when it knows it; empty otherwise. Not part of message().
    [[nodiscard]] auto where() const noexcept -> const std::string& { return where_; }
    /// The node the error concerns, when the check knows it: its index in the list of nodes the
    /// failing call was given (a description's nodes, a strategy build's input). where() is then
    /// "nodes[i]", or a field of it.
    [[nodiscard]] auto node() const noexcept -> std::optional<std::size_t> { return node_; }
    /// This error with its location set (and no node).
    [[nodiscard]] auto at(std::string where) && -> error_info {
        where_ = std::move(where);
        node_.reset();
        return std::move(*this);
    }
    /// This error located at node i of the list given, or at a field of it ("nodes[2].weight").
    [[nodiscard]] auto at_node(std::size_t i, std::string_view field = {}) && -> error_info {
        where_ = "nodes[" + std::to_string(i) + "]";
        if (!field.empty()) {
            where_ += '.';
            where_ += field;
        }
        node_ = i;
        return std::move(*this);
    }

    friend auto operator==(const error_info& e, errc c) noexcept -> bool { return e.code_ == c; }
    /// Whether this is that code of another category (err == fleet_errc::stale_epoch).
    template <class E>
        requires std::is_enum_v<E> && requires(E e) { { category_of(e) } -> std::same_as<const std::error_category&>; }
    friend auto operator==(const error_info& e, E c) noexcept -> bool {
        return e.error_code() == std::error_code(static_cast<int>(c), category_of(c));
    }

private:
    friend struct detail::error_access;

    errc code_{};
    const std::error_category* category_ = nullptr;  // null: error_category()
    std::string message_;
    std::string where_;
    std::optional<std::size_t> node_;
};

/// Thrown by the build functions and derivations. what() is error_info's message.
class error : public std::runtime_error {
public:
    explicit error(const error_info& info)
        : std::runtime_error(info.message()), code_(info.code()), category_(&info.error_code().category()) {}
    error(errc code, const std::string& message) : std::runtime_error(message), code_(code) {}

    [[nodiscard]] auto code() const noexcept -> errc { return code_; }
    /// The code in its category, as error_info::error_code() gives it.
    [[nodiscard]] auto error_code() const noexcept -> std::error_code {
        return {static_cast<int>(code_), category_ != nullptr ? *category_ : error_category()};
    }
    [[nodiscard]] auto info() const -> error_info;

private:
    errc code_;
    const std::error_category* category_ = nullptr;
};

namespace detail {

/// Internal name of the validation outcome: every check returns one.
using failure = error_info;

/// What only the library changes in an error_info.
struct error_access {
    /// f with its message prefixed, its code and location kept.
    static auto prefixed(failure f, std::string_view prefix) -> failure {
        f.message_.insert(0, prefix);
        return f;
    }
    /// f with its node (an index into the list a strategy was given) renumbered as `index` in the
    /// caller's list, keeping any field after "nodes[i]".
    /// f with its category (e's category, for keyplace::error::info()).
    static auto in_category(failure f, const std::error_category& category) -> failure {
        f.category_ = &category == &error_category() ? nullptr : &category;
        return f;
    }
    static auto renumbered(failure f, std::size_t index) -> failure {
        const std::string field = f.where_.substr(f.where_.find(']') + 1);
        f.where_ = "nodes[" + std::to_string(index) + "]" + field;
        f.node_ = index;
        return f;
    }
};

KEYPLACE_COLD inline auto fail(errc code, std::string message) -> failure {
    return failure{code, std::move(message)};
}
/// A failure with a code of another category (fleet_errc).
template <class E>
    requires std::is_enum_v<E> && requires(E e) { { category_of(e) } -> std::same_as<const std::error_category&>; }
KEYPLACE_COLD auto fail(E code, std::string message) -> failure {
    return failure{code, std::move(message)};
}

/// The one place a failure leaves the library in the throwing forms: KEYPLACE_ON_ERROR if the
/// program defines it (config.hpp), else a keyplace::error, else (built without exceptions)
/// the message on stderr and std::abort().
KEYPLACE_COLD [[noreturn]] inline void raise(const failure& f) {
#if defined(KEYPLACE_ON_ERROR)
    KEYPLACE_ON_ERROR(static_cast<int>(f.code()), f.message().c_str());
    std::abort();  // the handler must not return
#elif defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
    throw error(f);
#else
    std::fprintf(stderr, "keyplace: %s\n", f.message().c_str());
    std::abort();
#endif
}

/// The throwing form's result: the value, or raise(f).
template <class T>
[[nodiscard]] auto value_or_raise(const failure& f, T&& value) -> std::remove_cvref_t<T> {
    if (f) {
        raise(f);
    }
    return std::forward<T>(value);
}

/// The try_ form's result: the value, or an empty optional with err set to the failure.
template <class T>
[[nodiscard]] auto report(failure f, T&& value, error_info& err) -> std::optional<std::remove_cvref_t<T>> {
    err = std::move(f);
    if (err) {
        return std::nullopt;
    }
    return std::optional<std::remove_cvref_t<T>>(std::forward<T>(value));
}

/// Quotes a user-supplied string for an error message, escaping control bytes and bytes that are
/// not well-formed UTF-8, and cutting it at 64 bytes (never inside a character) so that a
/// message stays one short line of text whatever the input.
inline auto quote(std::string_view s) -> std::string {
    constexpr std::size_t shown = 64;
    std::string out;
    out.reserve((s.size() < shown ? s.size() : shown) + 8);
    out += '\'';
    std::size_t i = 0;
    while (i < s.size() && i < shown) {
        const auto u = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence(s, i);
        if (n > 1) {
            if (i + n > shown) {
                break;
            }
            out += s.substr(i, n);
            i += n;
        } else if (n == 0 || u < 0x20 || u == 0x7f || u == '\'' || u == '\\') {
            constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
            ++i;
        } else {
            out += s[i++];
        }
    }
    out += i < s.size() ? "'..." : "'";
    return out;
}

}  // namespace detail

inline auto error::info() const -> error_info {
    return detail::error_access::in_category(error_info{code_, what()}, error_code().category());
}

KEYPLACE_NAMESPACE_END

template <>
struct std::is_error_code_enum<keyplace::errc> : std::true_type {};

#endif
