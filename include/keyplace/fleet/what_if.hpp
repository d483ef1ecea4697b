// keyplace — which node owns a key. What-if: the loss of regions, zones, racks or named nodes,
// measured on a snapshot before it happens — each survivor's load while reads fail over along
// the copies and once the lost nodes have left, the keys left with no copy or one, and what the
// rebuilt placement moves against the least it must. Exact over regions; sampled otherwise.
#ifndef KEYPLACE_FLEET_WHAT_IF_HPP_INCLUDED
#define KEYPLACE_FLEET_WHAT_IF_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/error.hpp>
#include <keyplace/fleet/errors.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// What a what-if loses: every node of the named regions, zones or racks, or the named nodes.
enum class loss_level : std::uint8_t { region, zone, rack, nodes };

[[nodiscard]] constexpr auto to_string(loss_level l) noexcept -> std::string_view {
    switch (l) {
        case loss_level::region: return "region";
        case loss_level::zone: return "zone";
        case loss_level::rack: return "rack";
        case loss_level::nodes: return "nodes";
    }
    return "?";
}
/// "region", "zone", "rack" or "nodes" (also "node"); nullopt for anything else.
[[nodiscard]] constexpr auto parse_loss_level(std::string_view s) noexcept -> std::optional<loss_level> {
    for (const auto level : {loss_level::region, loss_level::zone, loss_level::rack, loss_level::nodes}) {
        if (to_string(level) == s) {
            return level;
        }
    }
    return s == "node" ? std::optional(loss_level::nodes) : std::nullopt;
}

struct loss {
    loss_level level = loss_level::nodes;
    std::vector<std::string> names{};  ///< regions, zones, racks (as nodes' locations name them) or node ids
};

/// One node that owns keys now and survives, its shares of the key space.
struct survivor_load {
    std::string id;
    double weight = 1;
    double before = 0;    ///< the keys it owns now (first copy)
    double failover = 0;  ///< the keys it serves when each key goes to its first surviving copy
    double rebuilt = 0;   ///< the keys it owns once the lost nodes have left
};

struct what_if_report {
    loss what{};
    bool exact = false;          ///< every region of the hash space enumerated (else sample keys)
    std::size_t regions = 0;     ///< regions enumerated (exact only)
    std::size_t sample_keys = 0; ///< keys counted (sampled only)
    std::size_t copies = 1;      ///< copies a key has: the replication count, or 1
    std::vector<std::string> lost;  ///< the ids lost, in snapshot order (those that owned keys)
    double lost_share = 0;       ///< the keys the lost nodes owned (first copy)
    double no_copy = 0;          ///< keys left with no surviving copy (unavailable until rebuilt)
    double one_copy = 0;         ///< keys left with exactly one
    std::vector<survivor_load> survivors;  ///< in snapshot order
    /// The busiest survivor's load over its fair share (its weight's part of the survivors'
    /// weight, times the keys served): while reads fail over, and once rebuilt.
    double failover_overload = 0;
    double rebuilt_overload = 0;
    /// The placement now against the one without the lost nodes: `moved` against `minimum`
    /// (the least any placement must move to reach the rebuilt shares; lost_share when every
    /// survivor keeps its keys).
    movement_report movement{};

    [[nodiscard]] auto to_text() const -> std::string;
    [[nodiscard]] auto to_json() const -> std::string;
};

/// The loss l measured on s.current(). The rebuilt placement is s's successor with every lost
/// node leaving, completed (the lifecycle a removal takes, so a partition table moves only the
/// lost nodes' partitions), its copies placed best effort where fewer domains than copies remain
/// (shortfall::relax; the owners do not depend on it). Failover follows each key's copies in order (s's replication; with
/// none, a lost node's keys have no copy). Exact over the regions of ring, token, Maglev,
/// partition and modulo placements; otherwise counted over analysis_sample()'s 2^17 points, or
/// where the strategy places a key by its bytes over 2^17 sample keys ("keyplace.sample.<i>").
/// Overrides (single keys, measure zero) are not counted.
/// Errors, nothing computed: invalid_argument for no names, a name given twice or a snapshot in
/// transition; unknown_domain for a region, zone or rack that holds no node; unknown_id for a
/// node id that is not listed; no_owner when no node that owns keys now survives.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto try_what_if(const snapshot& s, const loss& l, error_info& err)
    -> std::optional<what_if_report>;
/// try_what_if, throwing keyplace::error.
[[nodiscard]] inline auto what_if(const snapshot& s, const loss& l) -> what_if_report {
    error_info err;
    auto r = try_what_if(s, l, err);
    if (!r) {
        detail::raise(err);
    }
    return std::move(*r);
}

namespace detail {

/// Calls fn(point, measure) for each region of p's strategy — a point inside it and its measure
/// of the key circle (u128, as region_measure counts) — and returns the circle's size as a double;
/// returns 0, calling nothing, where p's strategy has no regions or places a key by its bytes.
template <class Fn>
auto for_each_placement_region(const placement& p, Fn&& fn) -> double {
    if (p.by_key_bytes()) {
        return 0;
    }
    return p.visit([&](const auto& x) -> double {
        using S = std::remove_cvref_t<decltype(x)>;
        if constexpr (region_strategy<S>) {
            const auto r = x.regions();
            for_each_region(r, fn);
            return circle_of(r);
        } else {
            return 0;
        }
    });
}

}  // namespace detail

#if KEYPLACE_DETAIL_DEFINE

KEYPLACE_DETAIL_INLINE auto try_what_if(const snapshot& s, const loss& l, error_info& err)
    -> std::optional<what_if_report> {
    const auto refuse = [&](auto code, const std::string& message) {
        err = detail::fail(code, "what-if: " + message);
        return std::nullopt;
    };
    const std::string level(to_string(l.level));
    if (l.names.empty()) {
        return refuse(errc::invalid_argument, "no " + level + " named to lose");
    }
    if (s.in_transition()) {
        return refuse(errc::invalid_argument,
                      "epoch " + std::to_string(s.epoch()) +
                          " is in transition; measure the epoch that completes it, or the one before");
    }
    const auto nodes = s.nodes();
    const auto named = [&](const snapshot_node& n) -> const std::string& {
        switch (l.level) {
            case loss_level::region: return n.where.region;
            case loss_level::zone: return n.where.zone;
            case loss_level::rack: return n.where.rack;
            case loss_level::nodes: break;
        }
        return n.id;
    };
    std::vector<bool> lost(nodes.size(), false);
    for (std::size_t i = 0; i < l.names.size(); ++i) {
        const std::string& name = l.names[i];
        for (std::size_t j = 0; j < i; ++j) {
            if (l.names[j] == name) {
                return refuse(errc::invalid_argument, level + " " + detail::quote(name) + " is named twice");
            }
        }
        bool found = false;
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            if (named(nodes[k]) == name) {
                lost[k] = true;
                found = true;
            }
        }
        if (!found) {
            return l.level == loss_level::nodes
                       ? refuse(errc::unknown_id, "no node has the id " + detail::quote(name))
                       : refuse(errc::unknown_domain, "no node is in " + level + " " + detail::quote(name));
        }
    }
    const placement& now = s.current();
    std::vector<bool> member(nodes.size(), false);
    for (std::uint32_t i = 0; i < now.size(); ++i) {
        member[now.member(node_index{i})] = true;
    }
    what_if_report r;
    r.what = l;
    r.copies = now.width();
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        if (member[k] && lost[k]) {
            r.lost.push_back(nodes[k].id);
        }
    }
    bool survivor = false;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        survivor = survivor || (member[k] && !lost[k]);
    }
    if (!survivor) {
        return refuse(fleet_errc::no_owner, "losing " + level + " " + detail::quote(l.names.front()) +
                                                (l.names.size() > 1 ? " and the others named" : "") +
                                                " leaves no node that owns keys");
    }

    // Now: each region's (or sample's) copies, in order. Measures add up as integers (u128: a
    // region's values of the key circle, or one a sample) and are divided once at the end, so a
    // figure that covers every key is exactly 1.
    using detail::u128;
    std::vector<u128> before(nodes.size(), u128{0, 0});
    std::vector<u128> failover(nodes.size(), u128{0, 0});
    u128 no_copy{0, 0};
    u128 one_copy{0, 0};
    std::array<std::uint32_t, max_snapshot_copies> out{};
    const std::span<std::uint32_t> copies(out.data(), r.copies);
    const auto tally = [&](std::size_t n, const u128& m) {
        before[out[0]] = detail::add(before[out[0]], m);
        std::size_t alive = 0;
        for (std::size_t c = 0; c < n; ++c) {
            if (!lost[out[c]]) {
                if (alive == 0) {
                    failover[out[c]] = detail::add(failover[out[c]], m);
                }
                ++alive;
            }
        }
        if (alive <= 1) {
            auto& x = alive == 0 ? no_copy : one_copy;
            x = detail::add(x, m);
        }
    };
    // Sampled: analysis_sample()'s points, which movement() also counts over (so a strategy that
    // keeps survivors' keys moves exactly the lost share of them), or where a strategy places a key
    // by its bytes, the sample keys.
    const auto& points = analysis_sample();
    const u128 one{0, 1};
    double circle = detail::for_each_placement_region(now, [&](std::uint64_t point, const u128& m) {
        ++r.regions;
        tally(now.copies(point, copies), m);
    });
    r.exact = circle > 0;
    if (!r.exact) {
        r.sample_keys = analysis_sample_size;
        circle = static_cast<double>(analysis_sample_size);
        for (std::size_t i = 0; i < analysis_sample_size; ++i) {
            tally(now.by_key_bytes() ? now.strategy_copies(sample_key(i), copies) : now.copies(points[i], copies), one);
        }
    }
    r.no_copy = detail::to_double(no_copy) / circle;
    r.one_copy = detail::to_double(one_copy) / circle;

    // Rebuilt: the lost nodes leaving, then gone (the pending placement of that transition).
    snapshot_description d = s.successor();
    // Fewer domains than copies is what a loss often leaves (a zone of three, with a copy in each):
    // the rebuilt owners do not depend on that rule, so the rebuild places copies best effort.
    d.replication.on_shortfall = shortfall::relax;
    for (std::size_t k = 0; k < d.nodes.size(); ++k) {
        if (lost[k] && member[k]) {
            d.nodes[k].state = node_state::leaving;
        }
    }
    auto leaving = snapshot::try_build(d, err);
    if (!leaving) {
        return std::nullopt;  // err names what the strategy refuses
    }
    const placement& after = leaving->pending();
    std::vector<u128> rebuilt(nodes.size(), u128{0, 0});
    const auto own = [&](std::uint32_t k, const u128& m) { rebuilt[k] = detail::add(rebuilt[k], m); };
    double circle_after = detail::for_each_placement_region(
        after, [&](std::uint64_t point, const u128& m) { own(after.member(after.pick(point)), m); });
    if (circle_after == 0) {
        circle_after = static_cast<double>(analysis_sample_size);
        for (std::size_t i = 0; i < analysis_sample_size; ++i) {
            own(after.by_key_bytes() ? after.strategy_owner(sample_key(i)) : after.member(after.pick(points[i])), one);
        }
    }
    r.movement = transition_movement(*leaving);

    double weight = 0;
    double served = 0;
    u128 lost_measure{0, 0};
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        if (member[k] && lost[k]) {
            lost_measure = detail::add(lost_measure, before[k]);
        }
        if (member[k] && !lost[k]) {
            weight += nodes[k].weight;
            r.survivors.push_back({nodes[k].id, nodes[k].weight, detail::to_double(before[k]) / circle,
                                   detail::to_double(failover[k]) / circle, detail::to_double(rebuilt[k]) / circle_after});
            served += r.survivors.back().failover;
        }
    }
    r.lost_share = detail::to_double(lost_measure) / circle;
    for (const auto& v : r.survivors) {
        const double fair = v.weight / weight;
        if (served > 0) {
            r.failover_overload = std::max(r.failover_overload, v.failover / served / fair);
        }
        r.rebuilt_overload = std::max(r.rebuilt_overload, v.rebuilt / fair);
    }
    err.clear();
    return r;
}

KEYPLACE_DETAIL_INLINE auto what_if_report::to_text() const -> std::string {
    const auto pct = [](double x) { return detail::fixed(100 * x, 4) + "%"; };
    std::string names;
    for (const auto& n : what.names) {
        names += (names.empty() ? "" : ",") + n;
    }
    std::string ids;
    for (const auto& n : lost) {
        ids += (ids.empty() ? "" : ",") + n;
    }
    std::string out = "what-if: losing " + std::string(to_string(what.level)) + " " + names + " (" +
                      std::to_string(lost.size()) + " owning nodes: " + (ids.empty() ? "-" : ids) + "), " +
                      (exact ? "exact over " + std::to_string(regions) + " regions"
                             : "sampled over " + std::to_string(sample_keys) + " keys") +
                      "\n";
    out += "the lost nodes owned " + pct(lost_share) + " of the keys; with " + std::to_string(copies) +
           (copies == 1 ? " copy" : " copies") + " a key, " + pct(no_copy) + " are left with no copy and " +
           pct(one_copy) + " with one\n";
    out += "\nsurvivor: before -> failover (first surviving copy) -> rebuilt (lost nodes gone)\n";
    for (const auto& v : survivors) {
        out += v.id + ": " + pct(v.before) + " -> " + pct(v.failover) + " -> " + pct(v.rebuilt) + "\n";
    }
    out += "\nbusiest survivor over its fair share: failover " + detail::fixed(failover_overload, 4) + ", rebuilt " +
           detail::fixed(rebuilt_overload, 4) + "\n";
    out += "rebuilt: " + pct(movement.moved) + " of the keys change owner (" +
           (movement.exact ? "exact" : "over " + std::to_string(movement.keys) + " sample keys") + "), at least " +
           pct(movement.minimum) + " must\n";
    return out;
}

KEYPLACE_DETAIL_INLINE auto what_if_report::to_json() const -> std::string {
    detail::json_writer w;
    w.begin_object()
        .member("level", to_string(what.level))
        .key("names")
        .array(what.names)
        .member("exact", exact)
        .member("regions", regions)
        .member("sample_keys", sample_keys)
        .member("copies", copies)
        .key("lost")
        .array(lost)
        .member("lost_share", lost_share)
        .member("no_copy", no_copy)
        .member("one_copy", one_copy)
        .key("survivors")
        .begin_array();
    for (const auto& v : survivors) {
        w.begin_object()
            .member("id", v.id)
            .member("weight", v.weight)
            .member("before", v.before)
            .member("failover", v.failover)
            .member("rebuilt", v.rebuilt)
            .end_object();
    }
    w.end_array()
        .member("failover_overload", failover_overload)
        .member("rebuilt_overload", rebuilt_overload)
        .key("movement")
        .begin_object()
        .member("moved", movement.moved)
        .member("minimum", movement.minimum)
        .member("exact", movement.exact)
        .member("keys", movement.keys)
        .end_object()
        .end_object();
    return std::move(w).str();
}

#endif  // KEYPLACE_DETAIL_DEFINE

KEYPLACE_NAMESPACE_END

#endif
