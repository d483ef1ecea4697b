// keyplace — which node owns a key. The failure-domain vocabulary beside node locations: the
// levels (node, rack, zone, region), what to do with fewer domains than copies, a node's domain
// at a level and its path. Replica placement, fixed partitions and the snapshot validator use it.
#ifndef KEYPLACE_FAILURE_DOMAIN_HPP_INCLUDED
#define KEYPLACE_FAILURE_DOMAIN_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

KEYPLACE_NAMESPACE_BEGIN

/// Failure-domain levels, finest first. A zone is identified by (region, zone) and a rack by
/// (region, zone, rack), so equal names in different parents are different domains.
enum class failure_domain : std::uint8_t { node = 0, rack = 1, zone = 2, region = 3 };

/// What to do when there are fewer domains than copies.
enum class shortfall : std::uint8_t {
    fail,   ///< the build fails, naming the level, the domains available and the count asked
    relax,  ///< fill the rest from finer levels (nested spreading); the result is degraded
};

[[nodiscard]] constexpr auto to_string(failure_domain level) noexcept -> std::string_view {
    switch (level) {
        case failure_domain::node: return "node";
        case failure_domain::rack: return "rack";
        case failure_domain::zone: return "zone";
        case failure_domain::region: return "region";
    }
    return "?";
}

/// Parses "node", "rack", "zone" or "region".
[[nodiscard]] inline auto parse_failure_domain(std::string_view s) noexcept -> std::optional<failure_domain> {
    for (const auto level : {failure_domain::node, failure_domain::rack, failure_domain::zone,
                             failure_domain::region}) {
        if (to_string(level) == s) {
            return level;
        }
    }
    return std::nullopt;
}

[[nodiscard]] constexpr auto to_string(shortfall rule) noexcept -> std::string_view {
    return rule == shortfall::relax ? "relax" : "fail";
}

/// Parses "fail" or "relax".
[[nodiscard]] inline auto parse_shortfall(std::string_view s) noexcept -> std::optional<shortfall> {
    return s == "fail" ? std::optional(shortfall::fail) : s == "relax" ? std::optional(shortfall::relax) : std::nullopt;
}

namespace detail {
/// A node's name at a level: its id, rack, zone or region.
[[nodiscard]] inline auto domain_part(const node& n, failure_domain level) noexcept -> const std::string& {
    switch (level) {
        case failure_domain::rack: return n.where.rack;
        case failure_domain::zone: return n.where.zone;
        case failure_domain::region: return n.where.region;
        case failure_domain::node: break;
    }
    return n.id;
}

/// The full path of a node's domain at a level, length-prefixed so no two paths collide (racks
/// of one name in two zones are two racks).
[[nodiscard]] inline auto domain_path(const node& n, failure_domain level) -> std::string {
    if (level == failure_domain::node) {
        return n.id;
    }
    std::string key;
    for (int l = static_cast<int>(failure_domain::region); l >= static_cast<int>(level); --l) {
        const std::string& p = domain_part(n, static_cast<failure_domain>(l));
        key += std::to_string(p.size());
        key += ':';
        key += p;
    }
    return key;
}

[[nodiscard]] constexpr auto valid_level(failure_domain level) noexcept -> bool {
    return static_cast<unsigned>(level) <= static_cast<unsigned>(failure_domain::region);
}

/// Spreading over a level needs every node's part at that level (none for the node level).
[[nodiscard]] inline auto check_located(std::span<const node> nodes, failure_domain level) -> failure {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const node& n = nodes[i];
        if (level != failure_domain::node && domain_part(n, level).empty()) {
            return fail(errc::missing_location, "node " + quote(n.id) + " has no " + std::string(to_string(level)) +
                                                    "; spreading over " + std::string(to_string(level)) +
                                                    "s needs every node's")
                .at_node(i);
        }
    }
    return {};
}
}  // namespace detail

KEYPLACE_NAMESPACE_END

#endif
