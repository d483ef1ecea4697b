// keyplace — which node owns a key. Nodes (id, weight, location) and their validation.
#ifndef KEYPLACE_NODE_HPP_INCLUDED
#define KEYPLACE_NODE_HPP_INCLUDED

#include <keyplace/detail/float_text.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/rounding.hpp>
#include <keyplace/detail/utf8.hpp>
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
    return shortest_text(w);  // the shortest round-trip form
}

/// Checks an id's length: 1 to max_id_length bytes.
[[nodiscard]] inline auto check_id_length(std::string_view id) -> failure {
    if (id.empty()) {
        return fail(errc::empty_id, "node id is empty");
    }
    if (id.size() > max_id_length) {
        return fail(errc::id_too_long, "node id " + detail::quote(id) + " is " + std::to_string(id.size()) +
                                           " bytes; the limit is " + std::to_string(max_id_length));
    }
    return {};
}

/// Checks a node's weight: finite and > 0.
[[nodiscard]] inline auto check_weight(const node& n) -> failure {
    if (!(detail::is_finite(n.weight) && n.weight > 0.0)) {
        return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                              format_weight(n.weight) +
                                              " is not finite and > 0");
    }
    return {};
}

/// Checks one node on its own: id of 1 to max_id_length bytes, weight finite and > 0.
[[nodiscard]] inline auto check_node(const node& n) -> failure {
    if (auto f = check_id_length(n.id)) {
        return f;
    }
    return check_weight(n);
}

/// f, whose node is an index in the id order of input (a check over the sorted membership), with
/// that node's index in input instead. input's ids are unique (sorted_membership passed).
template <class Tag = void>  // instantiated only where used (detail/lazy.hpp)
[[nodiscard]] auto in_input_order(failure f, std::span<const node> input) -> failure {
    if (!f.node() || *f.node() >= input.size()) {
        return f;
    }
    std::vector<dependent_t<std::size_t, Tag>> by_id(input.size());
    for (std::size_t i = 0; i < by_id.size(); ++i) {
        by_id[i] = i;
    }
    std::sort(by_id.begin(), by_id.end(), [&](std::size_t a, std::size_t b) { return input[a].id < input[b].id; });
    return error_access::renumbered(std::move(f), by_id[*f.node()]);
}

/// Refuses a weight other than 1, for the strategies that have no weights (jump, modulo): a
/// weight they would ignore is a mistake, not a request. where() names the node.
[[nodiscard]] inline auto unit_weights(std::span<const node> nodes, std::string_view strategy) -> failure {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const node& n = nodes[i];
        if (n.weight != 1.0) {
            return fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " + format_weight(n.weight) +
                                                  "; " + std::string(strategy) + " places every node with weight 1")
                .at_node(i);
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
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        if (auto f = check_node(nodes[i])) {
            return std::move(f).at_node(i);
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

/// Where id goes in a list sorted by id: the index of the first node whose id is not less.
[[nodiscard]] inline auto sorted_position(std::span<const node> sorted, std::string_view id) noexcept
    -> std::size_t {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), id,
                                     [](const node& n, std::string_view v) { return n.id < v; });
    return static_cast<std::size_t>(it - sorted.begin());
}

/// Index of id in a list sorted by id, or the number of nodes if absent.
[[nodiscard]] inline auto find_sorted(std::span<const node> sorted, std::string_view id) noexcept
    -> std::size_t {
    const std::size_t k = sorted_position(sorted, id);
    return k < sorted.size() && sorted[k].id == id ? k : sorted.size();
}

/// out becomes the list sorted by id with n inserted in its place (n's id is not in it), as a
/// derivation's with() needs; returns n's index.
template <class Vector>
auto insert_sorted(Vector& out, std::span<const node> sorted, const node& n) -> std::size_t {
    const std::size_t k = sorted_position(sorted, n.id);
    const auto at = sorted.begin() + static_cast<std::ptrdiff_t>(k);
    out.clear();
    out.reserve(sorted.size() + 1);
    out.insert(out.end(), sorted.begin(), at);
    out.push_back(n);
    out.insert(out.end(), at, sorted.end());
    return k;
}

}  // namespace detail

/// What a name names, for check_name.
enum class name_kind : std::uint8_t {
    node_id,        ///< a snapshot node's id, or the node an override names
    location_part,  ///< a region, zone or rack (empty: absent)
    cluster,        ///< a cluster name (also a path segment of etcd keys)
    client_id,      ///< an etcd watcher's id (a path segment of etcd keys)
};

/// The longest cluster name and watcher client id, in bytes.
inline constexpr std::size_t max_cluster_length = 255;

/// Checks a name against the one grammar of names (doc/snapshots.md, "Names"), so that every line of text,
/// list ("a,b") and spec entry ("ID=WEIGHT@REGION/ZONE/RACK") holds it as given: well-formed
/// UTF-8 without control bytes, white space or any of , = @ * ~ # $ % ^; a node id, cluster or
/// client id is not only dots; a location part, cluster or client id holds no '/'. Lengths: a
/// node id 1 to max_id_length bytes (empty_id, id_too_long), a cluster or client id 1 to
/// max_cluster_length, a location part 0 to max_id_length; any other failure is invalid_name.
/// The message names the value (quoted, escaped, cut) and the offending byte.
[[nodiscard]] inline auto check_name(name_kind kind, std::string_view name) -> error_info;

namespace detail {

/// check_name, the value called `what` in the message ("region", "cluster").
[[nodiscard]] inline auto check_name_as(name_kind kind, std::string_view what, std::string_view name) -> failure {
    const std::string lead = std::string(what) + " " + quote(name);
    if (kind == name_kind::node_id) {
        if (auto f = check_id_length(name)) {
            return f;
        }
    } else {
        const std::size_t lo = kind == name_kind::location_part ? 0 : 1;
        const std::size_t hi = kind == name_kind::location_part ? max_id_length : max_cluster_length;
        if (name.size() < lo || name.size() > hi) {
            return fail(errc::invalid_name, lead + " is " + std::to_string(name.size()) + " bytes, not " +
                                                std::to_string(lo) + " to " + std::to_string(hi));
        }
    }
    const bool segment = kind != name_kind::node_id;  // no '/' where parts are joined with '/'
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        const bool reserved =
            std::string_view(",=@*~#$%^ ").find(c) != std::string_view::npos || (segment && c == '/');
        if (reserved || u < 0x20 || u == 0x7f) {
            return fail(errc::invalid_name, lead + " contains " + quote(std::string_view(&c, 1)));
        }
    }
    if (const auto at = invalid_utf8_at(name)) {
        return fail(errc::invalid_name, lead + " is not UTF-8 (byte " + std::to_string(*at) + ")");
    }
    if (kind != name_kind::location_part && name.find_first_not_of('.') == std::string_view::npos) {
        return fail(errc::invalid_name,
                    lead + " is only dots" + (kind == name_kind::node_id ? " (list every node: 'a,...,b' is not a range)" : ""));
    }
    return {};
}

}  // namespace detail

inline auto check_name(name_kind kind, std::string_view name) -> error_info {
    constexpr std::string_view what[] = {"node id", "location part", "cluster", "client id"};
    return detail::check_name_as(kind, what[static_cast<unsigned>(kind)], name);
}

/// check_name of a location's parts, naming the part ("region 'a b' contains ' ' ..."); where()
/// is the part ("region").
[[nodiscard]] inline auto check_location(const location& where) -> error_info {
    const std::pair<std::string_view, const std::string*> parts[] = {
        {"region", &where.region}, {"zone", &where.zone}, {"rack", &where.rack}};
    for (const auto& [part, value] : parts) {
        if (auto f = detail::check_name_as(name_kind::location_part, part, *value)) {
            return std::move(f).at(std::string(part));
        }
    }
    return {};
}

KEYPLACE_NAMESPACE_END

#endif
