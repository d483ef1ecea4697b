// keyplace — which node owns a key. Nodes (id, weight, location) and their validation.
#ifndef KEYPLACE_NODE_HPP_INCLUDED
#define KEYPLACE_NODE_HPP_INCLUDED

#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/rounding.hpp>
#include <keyplace/error.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <compare>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Where a node sits, from the widest failure domain to the narrowest. Parts may be empty.
struct location {
    std::string region;
    std::string zone;
    std::string rack;

    friend auto operator==(const location&, const location&) -> bool = default;
};

/// A member of the membership. The id is the node's stable identity: placement depends on
/// it and on the weight, never on an address or on the position in the input list.
struct node {
    std::string id;
    double weight = 1.0;
    location where{};

    friend auto operator==(const node&, const node&) -> bool = default;
};

/// Position of a node in a strategy's own (sorted) node list. Not a count, not a point.
struct node_index {
    std::uint32_t value = 0;

    friend constexpr auto operator<=>(node_index, node_index) noexcept = default;
};

/// The longest node id, in bytes.
inline constexpr std::size_t max_id_length = 65535;

namespace detail {

inline auto format_weight(double w) -> std::string {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, w);  // shortest round-trip form
    return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}

/// Checks one node on its own: id of 1 to max_id_length bytes, weight finite and > 0.
[[nodiscard]] inline auto check_node(const node& n) -> failure {
    if (n.id.empty()) {
        return fail(errc::empty_id, "node id is empty");
    }
    if (n.id.size() > max_id_length) {
        return fail(errc::id_too_long, "node id " + detail::quote(n.id) + " is " + std::to_string(n.id.size()) +
                                           " bytes; the limit is " + std::to_string(max_id_length));
    }
    if (!(detail::is_finite(n.weight) && n.weight > 0.0)) {
        return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                              format_weight(n.weight) +
                                              " is not finite and > 0");
    }
    return {};
}

/// Refuses a weight other than 1, for the strategies that have no weights (jump, modulo): a
/// weight they would ignore is a mistake, not a request.
[[nodiscard]] inline auto unit_weights(std::span<const node> nodes, std::string_view strategy) -> failure {
    for (const node& n : nodes) {
        if (n.weight != 1.0) {
            return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " + format_weight(n.weight) +
                                                  "; " + std::string(strategy) + " places every node with weight 1");
        }
    }
    return {};
}

/// Validates a membership and returns it sorted by id (bytewise), the order every
/// strategy builds from, so input order never matters.
template <class Tag = void>  // instantiated only where used (detail/lazy.hpp)
[[nodiscard]] auto sorted_membership(std::span<const node> nodes, std::vector<dependent_t<node, Tag>>& out)
    -> failure {
    if (nodes.empty()) {
        return fail(errc::empty_membership, "the node list is empty");
    }
    for (const node& n : nodes) {
        if (auto f = check_node(n)) {
            return f;
        }
    }
    std::vector<dependent_t<node, Tag>> sorted(nodes.begin(), nodes.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const node& a, const node& b) { return a.id < b.id; });
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end(), [](const node& a, const node& b) {
        return a.id == b.id;
    });
    if (dup != sorted.end()) {
        return fail(errc::duplicate_id, "node id " + detail::quote(dup->id) + " appears more than once");
    }
    out = std::move(sorted);
    return {};
}

/// Index of id in a list sorted by id, or the number of nodes if absent.
[[nodiscard]] inline auto find_sorted(std::span<const node> sorted, std::string_view id) noexcept
    -> std::size_t {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), id,
                                     [](const node& n, std::string_view v) { return n.id < v; });
    return (it != sorted.end() && it->id == id) ? static_cast<std::size_t>(it - sorted.begin())
                                                : sorted.size();
}

}  // namespace detail

KEYPLACE_NAMESPACE_END

#endif
