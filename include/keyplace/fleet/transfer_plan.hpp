// keyplace — which node owns a key. Transfer plans: for two placements, the ranges of the hash
// space whose copies change, merged and sorted, each with the nodes that lose and gain it and a
// source for every new copy; totals per node pair. Exact over regions; sampled otherwise.
#ifndef KEYPLACE_FLEET_TRANSFER_PLAN_HPP_INCLUDED
#define KEYPLACE_FLEET_TRANSFER_PLAN_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// What a range's bounds count.
enum class plan_space : std::uint8_t {
    points64,  ///< unsigned 64-bit ring points (ring, envoy-ring)
    points32,  ///< unsigned 32-bit ring points (the ketama dialects)
    tokens,    ///< signed 64-bit Cassandra tokens, carried as their two's-complement bits
    residues,  ///< residues modulo transfer_plan::modulus (Maglev slots, Redis slots, modulo)
    sampled,   ///< no ranges: the figures are counted over sample keys
};

[[nodiscard]] constexpr auto to_string(plan_space s) noexcept -> std::string_view {
    switch (s) {
        case plan_space::points64: return "points64";
        case plan_space::points32: return "points32";
        case plan_space::tokens: return "tokens";
        case plan_space::residues: return "residues";
        case plan_space::sampled: return "sampled";
    }
    return "?";
}

/// One new copy: the node that gains it and a node that held it before (same zone first).
struct transfer_copy {
    std::string to;
    std::string from;

    friend auto operator==(const transfer_copy&, const transfer_copy&) -> bool = default;
};

/// A range [first, last] (inclusive, in the plan's space) whose copies change.
struct transfer_range {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    double fraction = 0;               ///< of the whole key space
    std::vector<std::string> before;   ///< the copies before, owner first
    std::vector<std::string> after;    ///< the copies after, owner first
    std::vector<std::string> losing;   ///< before, not after
    std::vector<std::string> gaining;  ///< after, not before
    std::vector<transfer_copy> copies; ///< one per gaining node
};

/// What moves from one node to another, as a fraction of the key space.
struct transfer_total {
    std::string from;
    std::string to;
    double fraction = 0;
    std::uint64_t ranges = 0;
};

/// An overridden key (in either snapshot) whose copies change: one key, moved on its own. The
/// ranges describe the strategies and do not see overrides.
struct transfer_key {
    std::string key;
    std::vector<std::string> before;    ///< the copies before, owner first
    std::vector<std::string> after;     ///< the copies after, owner first
    std::vector<transfer_copy> copies;  ///< one per gaining node

    friend auto operator==(const transfer_key&, const transfer_key&) -> bool = default;
};

struct transfer_plan {
    bool exact = false;
    plan_space space = plan_space::sampled;
    std::uint64_t modulus = 0;        ///< residues only
    std::size_t sample_keys = 0;      ///< sampled only
    double moved = 0;                 ///< fraction of the key space whose copies change
    std::vector<transfer_range> ranges;  ///< sorted by first, adjacent equal changes merged
    std::vector<transfer_total> totals;  ///< by (from, to)
    std::vector<transfer_key> keys;      ///< overridden keys whose copies change, in bytewise key order

    /// A bound as text: a token signed, anything else unsigned.
    [[nodiscard]] auto bound(std::uint64_t v) const -> std::string {
        return space == plan_space::tokens ? std::to_string(static_cast<std::int64_t>(v)) : std::to_string(v);
    }
    [[nodiscard]] auto to_text(std::size_t max_ranges = 20) const -> std::string;
    [[nodiscard]] auto to_json() const -> std::string;
};

/// The plan from before.current() to after.current(): exact when both are the same kind of
/// strategy with the same key hash and regions that refine together (rings of one point width
/// and lookup rule; tables or moduli of one size, or whose lcm is at most 2^24); otherwise the
/// totals are counted over 2^17 sample keys ("keyplace.sample.<i>", each placed as its own
/// placement places it: by its strategy's key hash, or by its bytes where by_key_bytes()) and
/// there are no ranges (rendezvous, the jumps, multi-probe and the bucket tables have none).
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto plan_transfer(const snapshot& before, const snapshot& after) -> transfer_plan;
/// The plan of the transition one snapshot describes: current() to pending().
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto plan_transition(const snapshot& s) -> transfer_plan;
namespace detail {
/// A transition's states completed: joining nodes active, leaving and read-only nodes left.
inline void complete_states(std::vector<snapshot_node>& nodes) noexcept {
    for (auto& n : nodes) {
        n.state = n.state == node_state::joining                                        ? node_state::active
                  : n.state == node_state::leaving || n.state == node_state::read_only ? node_state::left
                                                                                        : n.state;
    }
}
}  // namespace detail

/// The epoch that completes the transition s describes: s.successor() (epoch + 1, parent s's
/// epoch, pending()'s tables carried) with every joining node active and every leaving or
/// read-only node left. Its current() places keys as s.pending() does.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto completion(const snapshot& s) -> snapshot_description;
/// What completing s's transition moves: s.current() to s.pending(), measured as between two
/// snapshots (exact where the strategy allows). A joining epoch moves nothing now (a joining node
/// owns nothing yet); this is the movement it prepares. 0 when s is not in transition.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto transition_movement(const snapshot& s) -> movement_report;

// The definitions: here in a header-only build; in keyplace::compiled's source where
// KEYPLACE_COMPILED is defined (config.hpp).
#if KEYPLACE_DETAIL_DEFINE

namespace detail {

struct plan_builder {
    const snapshot* before;
    const snapshot* after;
    transfer_plan plan;
    std::map<std::pair<std::string, std::string>, transfer_total> totals;
    std::vector<std::string> b;
    std::vector<std::string> a;

    /// The ids of the copies place(idx) writes into idx (at most p.width() of them).
    template <class Place>
    static void copy_ids(const snapshot& s, const placement& p, Place&& place, std::vector<std::string>& out) {
        std::array<std::uint32_t, max_snapshot_copies> idx{};
        const std::size_t n = place(std::span<std::uint32_t>(idx.data(), p.width()));
        out.clear();
        for (std::size_t k = 0; k < n; ++k) {
            out.push_back(s.nodes()[idx[k]].id);
        }
    }
    /// The copies of a point, as ids.
    static auto ids(const snapshot& s, const placement& p, std::uint64_t point, std::vector<std::string>& out) {
        copy_ids(s, p, [&](std::span<std::uint32_t> idx) { return p.copies(point, idx); }, out);
    }
    /// The strategy's copies of a key (overrides aside: strategy_copies), as ids.
    static auto strategy_ids(const snapshot& s, const placement& p, std::string_view key, std::vector<std::string>& out) {
        copy_ids(s, p, [&](std::span<std::uint32_t> idx) { return p.strategy_copies(key, idx); }, out);
    }
    /// The copies of a key itself (an override first), as ids.
    static auto key_ids(const snapshot& s, const placement& p, std::string_view key, std::vector<std::string>& out) {
        copy_ids(s, p, [&](std::span<std::uint32_t> idx) { return p.copies_of(key, idx); }, out);
    }
    static auto contains(const std::vector<std::string>& v, const std::string& id) -> bool {
        return std::find(v.begin(), v.end(), id) != v.end();
    }

    // The range [lo, hi] of keys (in key order), its representative point and measure.
    void add(std::uint64_t lo, std::uint64_t hi, std::uint64_t point_before, std::uint64_t point_after,
             double fraction) {
        ids(*before, before->current(), point_before, b);
        ids(*after, after->current(), point_after, a);
        std::vector<std::string> losing;
        std::vector<std::string> gaining;
        for (const auto& id : b) {
            if (!contains(a, id)) {
                losing.push_back(id);
            }
        }
        for (const auto& id : a) {
            if (!contains(b, id)) {
                gaining.push_back(id);
            }
        }
        if (gaining.empty() && losing.empty()) {
            return;
        }
        plan.moved += fraction;
        auto& ranges = plan.ranges;
        if (!ranges.empty() && ranges.back().last + 1 == lo && ranges.back().before == b && ranges.back().after == a) {
            ranges.back().last = hi;
            ranges.back().fraction += fraction;
        } else {
            transfer_range r;
            r.first = lo;
            r.last = hi;
            r.fraction = fraction;
            r.before = b;
            r.after = a;
            r.losing = std::move(losing);
            r.gaining = std::move(gaining);
            for (const auto& g : r.gaining) {
                r.copies.push_back({g, source_for(g, b)});
            }
            ranges.push_back(std::move(r));
        }
        for (const auto& c : ranges.back().copies) {
            auto& t = totals[{c.from, c.to}];
            t.fraction += fraction;
        }
    }

    // A node of `held` in the zone of `to` (region and zone equal), else the first of held.
    [[nodiscard]] auto source_for(const std::string& to, const std::vector<std::string>& held) const -> std::string {
        const snapshot_node* t = after->find(to);
        for (const auto& id : held) {
            const snapshot_node* h = before->find(id);
            if (t != nullptr && h != nullptr && h->where.region == t->where.region && h->where.zone == t->where.zone) {
                return id;
            }
        }
        return held.empty() ? std::string() : held.front();
    }

    void finish() {
        // Count ranges per pair once per range.
        for (const auto& r : plan.ranges) {
            for (const auto& c : r.copies) {
                ++totals[{c.from, c.to}].ranges;
            }
        }
        for (auto& [pair, t] : totals) {
            t.from = pair.first;
            t.to = pair.second;
            plan.totals.push_back(t);
        }
    }
};

template <class Point>
void plan_arcs(plan_builder& pb, const arc_regions<Point>& ra, const arc_regions<Point>& rb) {
    using U = std::make_unsigned_t<Point>;
    constexpr unsigned bits = 8 * sizeof(Point);
    const auto to_key = [](Point p) -> std::uint64_t {
        auto u = static_cast<std::uint64_t>(static_cast<U>(p));
        if constexpr (std::is_signed_v<Point>) {
            u ^= std::uint64_t{1} << (bits - 1);
        }
        return u;
    };
    const auto from_key = [](std::uint64_t k) -> std::uint64_t {  // the point's bits as pick takes them
        if constexpr (std::is_signed_v<Point>) {
            k ^= std::uint64_t{1} << (bits - 1);
            return static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<Point>(static_cast<U>(k))));
        } else {
            return k;
        }
    };
    const std::uint64_t max_key = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (bits % 64)) - 1;
    const double circle = bits == 64 ? 18446744073709551616.0 : static_cast<double>(max_key) + 1.0;
    std::vector<std::uint64_t> cuts;
    cuts.reserve(ra.points.size() + rb.points.size());
    for (const Point p : ra.points) {
        cuts.push_back(to_key(p));
    }
    for (const Point p : rb.points) {
        cuts.push_back(to_key(p));
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const bool after_rule = ra.rule == lookup_rule::after;
    const auto emit = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t rep) {
        const double m = static_cast<double>(hi - lo) + 1.0;
        pb.add(lo, hi, from_key(rep), from_key(rep), m / circle);
    };
    const std::size_t n = cuts.size();
    if (!after_rule) {
        // (c[i-1], c[i]] owned by the entry at c[i]; the wrap [0, c[0]] and (c[n-1], max] by c[0].
        emit(0, cuts[0], cuts[0]);
        for (std::size_t i = 1; i < n; ++i) {
            emit(cuts[i - 1] + 1, cuts[i], cuts[i]);
        }
        if (cuts[n - 1] != max_key) {
            emit(cuts[n - 1] + 1, max_key, cuts[0]);
        }
    } else {
        // [c[i-1], c[i]) owned by the entry after c[i-1]; the wrap [0, c[0]) and [c[n-1], max].
        if (cuts[0] != 0) {
            emit(0, cuts[0] - 1, cuts[n - 1]);
        }
        for (std::size_t i = 1; i < n; ++i) {
            emit(cuts[i - 1], cuts[i] - 1, cuts[i - 1]);
        }
        emit(cuts[n - 1], max_key, cuts[n - 1]);
    }
    if constexpr (std::is_signed_v<Point>) {  // ranges were built in key order; report the tokens' bits
        for (auto& r : pb.plan.ranges) {
            r.first = from_key(r.first);
            r.last = from_key(r.last);
        }
    }
}

inline void plan_residues(plan_builder& pb, std::uint64_t modulus) {
    // Analysis's own enumeration of the residues and their measures (modulus 1: the whole circle).
    for_each_region(residue_regions{modulus}, [&](std::uint64_t r, const u128& m) {
        pb.add(r, r, r, r, to_double(m) / 18446744073709551616.0);
    });
}

// The overridden keys of either snapshot, each once, in bytewise order: the keys a plan between
// them handles one by one (the strategies' ranges do not see overrides).
inline auto overridden_keys(const snapshot& a, const snapshot& b) -> std::vector<std::string> {
    std::vector<std::string> keys;
    for (const auto* s : {&a, &b}) {
        for (const auto& o : s->overrides()) {
            keys.push_back(o.key);
        }
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

}  // namespace detail

KEYPLACE_DETAIL_INLINE auto plan_transfer(const snapshot& before, const snapshot& after) -> transfer_plan {
    detail::plan_builder pb{&before, &after, {}, {}, {}, {}};
    // Exact where both placements are the same region strategy: one visit of the first, and the
    // second read as that type (no visit over every pair of strategies).
    const bool done = before.current().visit([&](const auto& x) -> bool {
        using A = std::remove_cvref_t<decltype(x)>;
        if constexpr (region_strategy<A>) {
            const A* other = std::get_if<A>(&after.current().strategy());
            if (other == nullptr) {
                return false;
            }
            const A& y = *other;
            const auto ra = x.regions();
            const auto rb = y.regions();
            if (!detail::refine_together(ra, rb)) {
                return false;
            }
            if constexpr (detail::is_arc_regions<std::remove_cvref_t<decltype(ra)>>) {
                using P = std::remove_cvref_t<decltype(ra.points[0])>;
                pb.plan.space = std::is_signed_v<P> ? plan_space::tokens
                                : sizeof(P) == 4    ? plan_space::points32
                                                    : plan_space::points64;
                detail::plan_arcs(pb, ra, rb);
            } else {
                pb.plan.space = plan_space::residues;
                pb.plan.modulus =
                    ra.modulus == rb.modulus ? ra.modulus : detail::common_modulus(ra.modulus, rb.modulus);
                detail::plan_residues(pb, pb.plan.modulus);
            }
            return true;
        } else {
            return false;
        }
    });
    pb.plan.exact = done;
    if (!done) {
        pb.plan.space = plan_space::sampled;
        pb.plan.sample_keys = analysis_sample_size;
        std::vector<std::string> b;
        std::vector<std::string> a;
        const double each = 1.0 / static_cast<double>(analysis_sample_size);
        for (std::size_t i = 0; i < analysis_sample_size; ++i) {
            const std::string key = sample_key(i);
            detail::plan_builder::strategy_ids(before, before.current(), key, b);
            detail::plan_builder::strategy_ids(after, after.current(), key, a);
            bool changed = false;
            for (const auto& id : a) {
                if (!detail::plan_builder::contains(b, id)) {
                    changed = true;
                    auto& t = pb.totals[{pb.source_for(id, b), id}];
                    t.fraction += each;
                }
            }
            for (const auto& id : b) {
                changed = changed || !detail::plan_builder::contains(a, id);
            }
            pb.plan.moved += changed ? each : 0.0;
        }
    }
    pb.finish();
    // Overridden keys, in either snapshot: each one key whose copies may change on its own.
    for (const auto& key : detail::overridden_keys(before, after)) {
        transfer_key k{key, {}, {}, {}};
        detail::plan_builder::key_ids(before, before.current(), key, k.before);
        detail::plan_builder::key_ids(after, after.current(), key, k.after);
        for (const auto& id : k.after) {
            if (!detail::plan_builder::contains(k.before, id)) {
                k.copies.push_back({id, pb.source_for(id, k.before)});
            }
        }
        if (k.before != k.after) {
            pb.plan.keys.push_back(std::move(k));
        }
    }
    return std::move(pb.plan);
}

KEYPLACE_DETAIL_INLINE auto completion(const snapshot& s) -> snapshot_description {
    auto d = s.successor();
    detail::complete_states(d.nodes);
    return d;
}

KEYPLACE_DETAIL_INLINE auto transition_movement(const snapshot& s) -> movement_report {
    auto done = completion(s);
    done.epoch = 2;  // compared, never published: any epochs do (s's may be the largest)
    done.parent_epoch = 1;
    return detail::snapshot_movement(s, snapshot::build(done));
}

KEYPLACE_DETAIL_INLINE auto plan_transition(const snapshot& s) -> transfer_plan {
    auto now = s.describe();
    auto after = s.describe();
    now.fingerprint.reset();
    now.probe.reset();
    after.fingerprint.reset();
    after.probe.reset();
    // pending() as a snapshot of its own: joining nodes active, leaving nodes gone.
    std::vector<snapshot_node> kept;
    for (auto n : after.nodes) {
        if (n.state == node_state::joining) {
            n.state = node_state::active;
        }
        if (owns_after(n.state)) {
            kept.push_back(std::move(n));
        }
    }
    after.nodes = std::move(kept);
    now.epoch = 1;  // the two are compared, never published: any epochs do
    now.parent_epoch = 0;
    after.epoch = 2;
    after.parent_epoch = 1;
    return plan_transfer(snapshot::build(now), snapshot::build(after));
}

KEYPLACE_DETAIL_INLINE auto transfer_plan::to_text(std::size_t max_ranges) const -> std::string {
    const auto pct = [](double x) { return detail::fixed(100 * x, 4) + "%"; };
    const auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& s : v) {
            out += (out.empty() ? "" : ",") + s;
        }
        return out.empty() ? std::string("-") : out;
    };
    std::string out = "plan: " + std::string(exact ? "exact" : "sampled") + ", " + std::string(to_string(space));
    if (space == plan_space::residues) {
        out += " modulo " + std::to_string(modulus);
    }
    if (!exact) {
        out += " over " + std::to_string(sample_keys) + " keys";
    }
    out += "; " + std::to_string(ranges.size()) + " ranges, " + pct(moved) + " of the key space changes copies\n";
    if (!ranges.empty()) {
        out += "\nfirst..last: before -> after (copies: from>to)\n";
        for (std::size_t i = 0; i < ranges.size() && i < max_ranges; ++i) {
            const auto& r = ranges[i];
            std::string copies;
            for (const auto& c : r.copies) {
                copies += (copies.empty() ? "" : " ") + c.from + ">" + c.to;
            }
            out += bound(r.first) + ".." + bound(r.last) + " " + pct(r.fraction) + ": " + join(r.before) + " -> " +
                   join(r.after) + " (" + copies + ")\n";
        }
        if (ranges.size() > max_ranges) {
            out += "... " + std::to_string(ranges.size() - max_ranges) + " more ranges\n";
        }
    }
    out += "\nfrom -> to: share of the key space, ranges\n";
    for (const auto& t : totals) {
        out += t.from + " -> " + t.to + ": " + pct(t.fraction) + ", " + std::to_string(t.ranges) + "\n";
    }
    if (!keys.empty()) {
        out += "\noverridden keys whose copies change: " + std::to_string(keys.size()) + "\n";
        for (const auto& k : keys) {
            std::string copies;
            for (const auto& c : k.copies) {
                copies += (copies.empty() ? "" : " ") + c.from + ">" + c.to;
            }
            out += detail::quote(k.key) + ": " + join(k.before) + " -> " + join(k.after) + " (" + copies + ")\n";
        }
    }
    return out;
}

KEYPLACE_DETAIL_INLINE auto transfer_plan::to_json() const -> std::string {
    detail::json_writer w;
    const auto bound = [&](std::uint64_t v) -> detail::json_writer& {  // a token is signed
        return space == plan_space::tokens ? w.write(static_cast<std::int64_t>(v)) : w.write(v);
    };
    const auto copies = [&](const std::vector<transfer_copy>& list) {
        w.key("copies").begin_array();
        for (const auto& c : list) {
            w.begin_object().member("from", c.from).member("to", c.to).end_object();
        }
        w.end_array();
    };
    w.begin_object()
        .member("exact", exact)
        .member("space", to_string(space))
        .member("modulus", modulus)
        .member("sample_keys", sample_keys)
        .member("moved", moved)
        .key("ranges")
        .begin_array();
    for (const auto& r : ranges) {
        w.begin_object().key("first");
        bound(r.first).key("last");
        bound(r.last).member("fraction", r.fraction);
        w.key("before").array(r.before).key("after").array(r.after);
        w.key("losing").array(r.losing).key("gaining").array(r.gaining);
        copies(r.copies);
        w.end_object();
    }
    w.end_array().key("totals").begin_array();
    for (const auto& t : totals) {
        w.begin_object().member("from", t.from).member("to", t.to).member("fraction", t.fraction);
        w.member("ranges", t.ranges).end_object();
    }
    w.end_array();
    if (!keys.empty()) {  // only then: a plan without overrides reads as before
        w.key("keys").begin_array();
        for (const auto& k : keys) {
            w.begin_object().member("key", k.key).key("before").array(k.before).key("after").array(k.after);
            copies(k.copies);
            w.end_object();
        }
        w.end_array();
    }
    w.end_object();
    return std::move(w).str();
}

#endif  // KEYPLACE_DETAIL_DEFINE

KEYPLACE_NAMESPACE_END

#endif
