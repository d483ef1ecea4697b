// keyplace — which node owns a key. Analysis: ownership of the hash space, load and skew,
// movement between two memberships against the minimum, and replica co-ownership (copysets,
// Cidon et al., "Copysets: Reducing the Frequency of Data Loss in Cloud Storage", ATC 2013).
#ifndef KEYPLACE_ANALYSIS_HPP_INCLUDED
#define KEYPLACE_ANALYSIS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/node.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#if !(defined(__GNUC__) || defined(__clang__))
#include <cmath>
#endif
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// How an ownership figure was obtained.
enum class share_method {
    exact,     ///< derived from the built state (ring arcs, Maglev entries, modulo counts)
    expected,  ///< the algorithm's defined share (jump: 1/N)
    sampled,   ///< counted over a fixed sample of points; error_bound is 3 standard deviations
};

struct ownership_report {
    std::vector<double> share;  ///< per node index; sums to 1
    share_method method = share_method::exact;
    double error_bound = 0;  ///< largest |share - true share| (sampled only)
};

/// The points every sampled figure uses: 2^17 points from a fixed-seed generator, so reports
/// are reproducible. Sampled shares are within 3 * sqrt(1/4 / 2^17) = 0.0041 of the truth at
/// 3 standard deviations.
inline constexpr std::size_t analysis_sample_size = std::size_t{1} << 17;

namespace detail {
/// The correctly rounded square root (IEEE-754 requires it), without <cmath> where the compiler
/// has the builtin: <cmath>'s special functions cost every translation unit.
[[nodiscard]] inline auto square_root(double x) noexcept -> double {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_sqrt(x);
#else
    return std::sqrt(x);
#endif
}

/// Fills the sample: SplitMix64 (detail/splitmix.hpp) from a fixed seed. A run-time fill:
/// evaluated as a constant, the 2^17 values would cost every translation unit.
inline void fill_sample(std::vector<std::uint64_t>& out) {
    std::uint64_t state = 0x6b6579706c616365ULL;  // "keyplace"
    for (auto& x : out) {
        x = splitmix64(state);
    }
}
}  // namespace detail

/// The fixed sample, built once on first use.
[[nodiscard]] inline auto analysis_sample() -> const std::vector<std::uint64_t>& {
    static const std::vector<std::uint64_t> points = [] {
        std::vector<std::uint64_t> p(analysis_sample_size);
        detail::fill_sample(p);
        return p;
    }();
    return points;
}

namespace detail {

/// Calls fn(point, measure) for every ownership region of s: a point inside it (pick(point) is
/// the region's owner) and its measure in values of the key circle (u128). The measures sum to
/// exactly the circle: 2^(8 * sizeof(Point)) for arcs, 2^64 for residues.
template <class Point, class Fn>
void for_each_region(const arc_regions<Point>& r, Fn&& fn) {
    using U = std::make_unsigned_t<Point>;
    const std::size_t total = r.points.size();
    for (std::size_t i = 0; i < total; ++i) {
        const Point prev = r.points[i == 0 ? total - 1 : i - 1];
        const auto arc = static_cast<std::uint64_t>(static_cast<U>(static_cast<U>(r.points[i]) - static_cast<U>(prev)));
        const Point inside = r.rule == lookup_rule::at_or_after ? r.points[i] : prev;
        const auto at = static_cast<std::uint64_t>(static_cast<U>(inside));
        if (i == 0 && arc == 0) {  // every point equal: entry 0 owns the whole circle
            fn(at, sizeof(U) == 8 ? u128{1, 0} : u128{0, std::uint64_t{1} << (8 * (sizeof(U) % 8))});
        } else {
            fn(at, u128{0, arc});
        }
    }
}
template <class Fn>
void for_each_region(const residue_regions& r, Fn&& fn) {
    if (r.modulus == 1) {
        fn(std::uint64_t{0}, u128{1, 0});
        return;
    }
    // Residue k holds floor((2^64 - 1 - k) / M) + 1 of the 64-bit points.
    for (std::uint64_t k = 0; k < r.modulus; ++k) {
        fn(k, u128{0, (std::numeric_limits<std::uint64_t>::max() - k) / r.modulus + 1});
    }
}

/// The circle of a region kind, as a double: 2^(8 * sizeof(Point)) or 2^64.
template <class Point>
[[nodiscard]] constexpr auto circle_of(const arc_regions<Point>&) noexcept -> double {
    return sizeof(Point) == 8 ? 18446744073709551616.0 : static_cast<double>(std::uint64_t{1} << (8 * (sizeof(Point) % 8)));
}
[[nodiscard]] constexpr auto circle_of(const residue_regions&) noexcept -> double { return 18446744073709551616.0; }

[[nodiscard]] inline auto to_double(const u128& v) noexcept -> double {
    return static_cast<double>(v.hi) * 18446744073709551616.0 + static_cast<double>(v.lo);
}

/// Whether two region kinds have a common refinement: rings of one point type and lookup rule
/// (the merged points), or tables of one size (the slots).
template <class Point>
[[nodiscard]] auto refine_together(const arc_regions<Point>& a, const arc_regions<Point>& b) noexcept -> bool {
    return a.rule == b.rule;
}
/// Residues modulo a and modulo b of different moduli refine together into residues modulo
/// lcm(a, b), enumerated only up to this many (Maglev tables of two prime sizes are sampled
/// instead); tables of one size are compared slot by slot, as ownership enumerates them.
inline constexpr std::uint64_t max_common_residues = std::uint64_t{1} << 24;

[[nodiscard]] constexpr auto common_modulus(std::uint64_t a, std::uint64_t b) noexcept -> std::uint64_t {
    std::uint64_t g = a;
    for (std::uint64_t r = b; r != 0;) {  // Euclid: g = gcd(a, b)
        const std::uint64_t t = g % r;
        g = r;
        r = t;
    }
    return a / g > max_common_residues / b ? 0 : a / g * b;  // 0: too many
}
[[nodiscard]] inline auto refine_together(const residue_regions& a, const residue_regions& b) noexcept -> bool {
    return a.modulus == b.modulus || common_modulus(a.modulus, b.modulus) != 0;
}
template <class A, class B>
[[nodiscard]] auto refine_together(const A&, const B&) noexcept -> bool {
    return false;
}

/// Calls fn(point, measure) over the common refinement of a and b (refine_together(a, b)):
/// regions on which both owners are constant.
template <class Point, class Fn>
void for_each_common_region(const arc_regions<Point>& a, const arc_regions<Point>& b, Fn&& fn) {
    std::vector<Point> cuts(a.points.begin(), a.points.end());
    cuts.insert(cuts.end(), b.points.begin(), b.points.end());
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for_each_region(arc_regions<Point>{cuts, {}, a.rule}, fn);  // owners are asked of a and b
}
template <class Fn>
void for_each_common_region(const residue_regions& a, const residue_regions& b, Fn&& fn) {
    // pick(p) of either depends on p mod its modulus alone, so on p mod lcm.
    for_each_region(residue_regions{a.modulus == b.modulus ? a.modulus : common_modulus(a.modulus, b.modulus)}, fn);
}
template <class A, class B, class Fn>
void for_each_common_region(const A&, const B&, Fn&&) {}

}  // namespace detail

/// Each node's measure of the key circle, by node index, exactly: a ring's arcs (point i owns the
/// arc ending at it) or a table's slots (slot k the points = k mod M). Sums to exactly the
/// circle, 2^(8 * sizeof(point)) for a ring, 2^64 for a table. Signed points (Cassandra tokens)
/// are measured on the same circle, in signed order.
template <region_strategy S>
[[nodiscard]] auto region_measure(const S& s) -> std::vector<detail::u128> {
    std::vector<detail::u128> sum(s.size(), detail::u128{0, 0});
    detail::for_each_region(s.regions(), [&](std::uint64_t point, const detail::u128& m) {
        auto& x = sum[s.pick(point).value];
        x = detail::add(x, m);
    });
    return sum;
}

/// Each node's share of the hash space: exact for every strategy with regions (rings of points:
/// the native ring, ketama, Envoy ring hash, Cassandra; slot tables: Maglev, Envoy's Maglev,
/// Redis; modulo), the defined share where the algorithm fixes it (jump: 1/N), else counted
/// over analysis_sample() (rendezvous).
template <placement_strategy S>
[[nodiscard]] auto ownership(const S& s) -> ownership_report {
    if constexpr (region_strategy<S>) {
        const double circle = detail::circle_of(s.regions());
        ownership_report out;
        for (const auto& m : region_measure(s)) {
            out.share.push_back(detail::to_double(m) / circle);
        }
        return out;
    } else if constexpr (requires { s.defined_shares(); }) {
        return {s.defined_shares(), share_method::expected, 0};
    } else {
        std::vector<std::size_t> counts(s.size(), 0);
        const auto& sample = analysis_sample();
        for (const auto p : sample) {
            ++counts[s.pick(p).value];
        }
        ownership_report r{{}, share_method::sampled, 3 * detail::square_root(0.25 / static_cast<double>(sample.size()))};
        for (const auto c : counts) {
            r.share.push_back(static_cast<double>(c) / static_cast<double>(sample.size()));
        }
        return r;
    }
}

/// Keys per node and the skew figures services compare.
struct load_report {
    std::vector<std::size_t> keys;  ///< per node index
    double max_over_mean = 0;
    double min_over_mean = 0;
    double cv = 0;  ///< coefficient of variation: standard deviation / mean
};

namespace detail {
/// The skew figures of keys per node (r.keys, over `total` keys).
inline void finish_load(load_report& r, std::size_t total) {
    if (total == 0 || r.keys.empty()) {
        return;
    }
    const double mean = static_cast<double>(total) / static_cast<double>(r.keys.size());
    const auto [lo, hi] = std::minmax_element(r.keys.begin(), r.keys.end());
    r.max_over_mean = static_cast<double>(*hi) / mean;
    r.min_over_mean = static_cast<double>(*lo) / mean;
    double var = 0;
    for (const auto k : r.keys) {
        var += (static_cast<double>(k) - mean) * (static_cast<double>(k) - mean);
    }
    r.cv = square_root(var / static_cast<double>(r.keys.size())) / mean;
}
}  // namespace detail

/// Keys per node for hashed keys. With no keys every figure is 0.
template <placement_strategy S>
[[nodiscard]] auto load(const S& s, std::span<const std::uint64_t> points) -> load_report {
    load_report r;
    r.keys.assign(s.size(), 0);
    for (const auto p : points) {
        ++r.keys[s.pick(p).value];
    }
    detail::finish_load(r, points.size());
    return r;
}

/// Keys per node for the keys themselves, each placed as locate() places it: a strategy that
/// places a key by its bytes (go-mpchash) is asked with them, where load() over the keys'
/// points would use its point rule, another function. With no keys every figure is 0.
template <placement_strategy S, class Key>
[[nodiscard]] auto load_of_keys(const S& s, std::span<const Key> keys) -> load_report {
    load_report r;
    r.keys.assign(s.size(), 0);
    for (const auto& k : keys) {
        ++r.keys[detail::pick_of_key(s, k).value];
    }
    detail::finish_load(r, keys.size());
    return r;
}

/// What one node gained and lost in a change.
struct node_flow {
    std::string id;
    double inflow = 0;   ///< fraction of keys (or of the hash space) that came to it
    double outflow = 0;  ///< fraction that left it
};

struct movement_report {
    std::size_t keys = 0;        ///< keys compared (0 when the figures are exact measures)
    double moved = 0;            ///< fraction of keys whose owner changed
    double minimum = 0;          ///< the least any placement must move to reach the after-shares
    double fair_minimum = 0;     ///< the least an ideally balanced scheme must move (weights)
    double violations = 0;       ///< fraction moved between two nodes present in both, same weight
    bool exact = false;          ///< measured over the whole hash space, not over keys
    share_method minimum_method = share_method::exact;
    std::vector<node_flow> flows;  ///< every id of either membership, sorted by id
};

namespace detail {

struct membership_view {
    std::map<std::string, std::pair<double, double>> weight_and_share;  // by id
};

template <class S>
auto view_of(const S& s, const ownership_report& o) -> membership_view {
    membership_view v;
    for (std::size_t i = 0; i < s.size(); ++i) {
        v.weight_and_share[s.nodes()[i].id] = {s.nodes()[i].weight, o.share[i]};
    }
    return v;
}

// Half the L1 distance between two distributions over ids: the least mass that must move.
template <class = void>  // instantiated only where used
auto total_variation(const membership_view& a, const membership_view& b, bool by_weight) -> double {
    auto shares = [by_weight](const membership_view& v) {
        std::map<std::string, double> out;
        double total = 0;
        for (const auto& [id, ws] : v.weight_and_share) {
            total += ws.first;
        }
        for (const auto& [id, ws] : v.weight_and_share) {
            out[id] = by_weight ? ws.first / total : ws.second;
        }
        return out;
    };
    const auto sa = shares(a);
    const auto sb = shares(b);
    std::set<std::string> ids;
    for (const auto& [id, x] : sa) ids.insert(id);
    for (const auto& [id, x] : sb) ids.insert(id);
    double sum = 0;
    for (const auto& id : ids) {
        const double x = sa.count(id) != 0 ? sa.at(id) : 0.0;
        const double y = sb.count(id) != 0 ? sb.at(id) : 0.0;
        sum += x < y ? y - x : x - y;
    }
    return sum / 2;
}

// Accumulates moves of a given measure (a key, or an arc of the circle).
struct movement_tally {
    const membership_view* before;
    const membership_view* after;
    std::map<std::string, node_flow> flows;
    double moved = 0;
    double violations = 0;

    template <class = void>  // instantiated only where used
    void add(const std::string& from, const std::string& to, double measure) {
        if (from == to) {
            return;
        }
        moved += measure;
        flows[from].outflow += measure;
        flows[to].inflow += measure;
        const auto stays = [&](const std::string& id) {
            const auto b = before->weight_and_share.find(id);
            const auto a = after->weight_and_share.find(id);
            return b != before->weight_and_share.end() && a != after->weight_and_share.end() &&
                   b->second.first == a->second.first;
        };
        violations += stays(from) && stays(to) ? measure : 0;
    }
};

template <class A, class B>
auto finish_movement(const A& before, const B& after, const membership_view& vb, const membership_view& va,
                     movement_tally& t, double total, share_method method) -> movement_report {
    movement_report r;
    r.moved = total > 0 ? t.moved / total : 0;
    r.violations = total > 0 ? t.violations / total : 0;
    // Nothing tallied (no keys): nothing moved, so nothing had to; every fraction is 0.
    r.minimum = total > 0 ? total_variation(vb, va, false) : 0;
    r.fair_minimum = total > 0 ? total_variation(vb, va, true) : 0;
    r.minimum_method = method;
    std::set<std::string> ids;
    for (const auto& n : before.nodes()) ids.insert(n.id);
    for (const auto& n : after.nodes()) ids.insert(n.id);
    for (const auto& id : ids) {
        node_flow f = t.flows[id];
        f.id = id;
        f.inflow = total > 0 ? f.inflow / total : 0;
        f.outflow = total > 0 ? f.outflow / total : 0;
        r.flows.push_back(f);
    }
    return r;
}

}  // namespace detail

namespace detail {

// One movement computation: tally(t) adds each (before owner, after owner, measure) to t;
// total is the measure of everything tallied.
template <class A, class B, class Tally>
auto movement_of(const A& before, const B& after, Tally&& tally, double total, bool exact) -> movement_report {
    const auto ob = ownership(before);
    const auto oa = ownership(after);
    const auto vb = view_of(before, ob);
    const auto va = view_of(after, oa);
    movement_tally t{&vb, &va, {}, 0, 0};
    tally(t);
    const auto method = ob.method == share_method::exact && oa.method == share_method::exact ? share_method::exact
                        : ob.method == share_method::sampled || oa.method == share_method::sampled
                            ? share_method::sampled
                            : share_method::expected;
    auto r = finish_movement(before, after, vb, va, t, total, method);
    r.exact = exact;
    return r;
}

}  // namespace detail

/// Movement between two placements over hashed keys, by node id: what moved, per-node flows,
/// violations, and the minimum any scheme must move (half the L1 distance between the two
/// ownerships; fair_minimum uses the weight shares instead). No keys: every fraction is 0.
template <placement_strategy A, placement_strategy B>
[[nodiscard]] auto movement(const A& before, const B& after, std::span<const std::uint64_t> points)
    -> movement_report {
    auto r = detail::movement_of(
        before, after,
        [&](detail::movement_tally& t) {
            for (const auto p : points) {
                t.add(before.node(before.pick(p)).id, after.node(after.pick(p)).id, 1.0);
            }
        },
        static_cast<double>(points.size()), false);
    r.keys = points.size();
    return r;
}

/// movement() over the keys themselves, each placed as locate() places it (see load_of_keys).
template <placement_strategy A, placement_strategy B, class Key>
[[nodiscard]] auto movement_of_keys(const A& before, const B& after, std::span<const Key> keys) -> movement_report {
    auto r = detail::movement_of(
        before, after,
        [&](detail::movement_tally& t) {
            for (const auto& k : keys) {
                t.add(before.node(detail::pick_of_key(before, k)).id, after.node(detail::pick_of_key(after, k)).id, 1.0);
            }
        },
        static_cast<double>(keys.size()), false);
    r.keys = keys.size();
    return r;
}

/// Movement between two placements over the whole hash space: exact where both enumerate
/// regions with a common refinement (two rings of one point type and lookup rule: the merged
/// points cut the circle into arcs on which both owners are constant; two tables of one size:
/// slot by slot; two moduli that differ: the residues modulo their least common multiple, up to
/// max_common_residues of them); otherwise over analysis_sample().
template <placement_strategy A, placement_strategy B>
[[nodiscard]] auto movement(const A& before, const B& after) -> movement_report {
    if constexpr (region_strategy<A> && region_strategy<B>) {
        const auto ra = before.regions();
        const auto rb = after.regions();
        if (detail::refine_together(ra, rb)) {
            return detail::movement_of(
                before, after,
                [&](detail::movement_tally& t) {
                    detail::for_each_common_region(ra, rb, [&](std::uint64_t p, const detail::u128& m) {
                        t.add(before.node(before.pick(p)).id, after.node(after.pick(p)).id, detail::to_double(m));
                    });
                },
                detail::circle_of(ra), true);
        }
    }
    return movement(before, after, analysis_sample());
}

/// Replica co-ownership: how many node pairs share at least one replica set, and how many
/// distinct replica sets (copysets) exist. Fewer copysets mean fewer ways to lose every copy.
struct coownership_report {
    std::size_t copysets = 0;       ///< distinct replica sets
    std::size_t pairs = 0;          ///< node pairs that share at least one set
    double pair_fraction = 0;       ///< pairs / (N choose 2)
    bool exact = false;             ///< every region of the hash space enumerated
    std::size_t regions = 0;        ///< replica sets evaluated
};

namespace detail {

template <class S>
auto coownership_over(const replica_placer<S>& placer, std::span<const std::uint64_t> points, bool exact)
    -> coownership_report {
    std::set<std::vector<std::uint32_t>> sets;
    std::set<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<node_index> out(placer.count());
    for (const auto p : points) {
        const auto placed = placer.place(p, out).placed;
        std::vector<std::uint32_t> set;
        for (std::size_t k = 0; k < placed; ++k) {
            set.push_back(out[k].value);
        }
        std::sort(set.begin(), set.end());
        for (std::size_t a = 0; a < set.size(); ++a) {
            for (std::size_t b = a + 1; b < set.size(); ++b) {
                pairs.emplace(set[a], set[b]);
            }
        }
        sets.insert(std::move(set));
    }
    const double n = static_cast<double>(placer.strategy().size());
    coownership_report r{sets.size(), pairs.size(), 0, exact, points.size()};
    r.pair_fraction = n > 1 ? static_cast<double>(pairs.size()) / (n * (n - 1) / 2) : 0;
    return r;
}

}  // namespace detail

/// Co-ownership under a placer: exact where the strategy has regions (every key of a region has
/// the same replica set: one evaluation per ring arc or table slot), else over analysis_sample().
template <ordered_placement_strategy S>
[[nodiscard]] auto coownership(const replica_placer<S>& placer) -> coownership_report {
    if constexpr (region_strategy<S>) {
        std::vector<std::uint64_t> regions;
        detail::for_each_region(placer.strategy().regions(),
                                [&](std::uint64_t p, const detail::u128&) { regions.push_back(p); });
        return detail::coownership_over(placer, regions, true);
    } else {
        return detail::coownership_over(placer, analysis_sample(), false);
    }
}

/// Each node's replicated measure of the key circle, exactly: every region's measure (u128, as
/// region_measure) added to each node the placer gives that region's keys. Sums to count() times
/// the circle. With spread node it is SimpleStrategy's replicated ownership, with spread rack the
/// distinct-rack walk (NetworkTopologyStrategy in a datacenter of at least rf racks): what token
/// allocation (token_allocation.hpp) balances. One placement per region.
template <ordered_placement_strategy S>
    requires region_strategy<S>
[[nodiscard]] auto replicated_measure(const replica_placer<S>& placer) -> std::vector<detail::u128> {
    std::vector<detail::u128> sum(placer.strategy().size(), detail::u128{0, 0});
    std::vector<node_index> out(placer.count());
    detail::for_each_region(placer.strategy().regions(), [&](std::uint64_t p, const detail::u128& m) {
        const std::size_t placed = placer.place(p, out).placed;
        for (std::size_t k = 0; k < placed; ++k) {
            sum[out[k].value] = detail::add(sum[out[k].value], m);
        }
    });
    return sum;
}

KEYPLACE_NAMESPACE_END

#endif
