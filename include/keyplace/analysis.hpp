// keyplace — which node owns a key. Analysis: ownership of the hash space, load and skew,
// movement between two memberships against the minimum, and replica co-ownership (copysets,
// Cidon et al., "Copysets: Reducing the Frequency of Data Loss in Cloud Storage", ATC 2013).
#ifndef KEYPLACE_ANALYSIS_HPP_INCLUDED
#define KEYPLACE_ANALYSIS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/math.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/modulo.hpp>
#include <keyplace/node.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/ring.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
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

[[nodiscard]] inline auto analysis_sample() -> const std::vector<std::uint64_t>& {
    static const std::vector<std::uint64_t> points = [] {
        std::mt19937_64 gen(0x6b6579706c616365ULL);  // "keyplace"
        std::vector<std::uint64_t> p(analysis_sample_size);
        for (auto& x : p) {
            x = gen();
        }
        return p;
    }();
    return points;
}

/// A strategy whose placement is a sorted circle of points: points() and, index for index,
/// owners(); a point owns the arc from the previous point (exclusive) to itself (inclusive).
/// keyplace::ring, compat::point_ring (ketama, Envoy ring hash) and compat::cassandra_ring.
template <class S>
concept arc_placement = placement_strategy<S> && requires(const S& s) {
    { s.points() };
    { s.owners() } -> std::convertible_to<std::span<const node_index>>;
};

/// Each node's measure of a ring's circle, in points of the 2^bits circle, as two words:
/// point i owns the arc (point[i-1], point[i]], point 0 also the wrap. Sums to exactly 2^bits.
/// Signed points (Cassandra tokens) are measured on the same circle, in signed order.
template <arc_placement S>
[[nodiscard]] auto arc_measure(const S& r) -> std::vector<detail::u128> {
    using point_type = std::make_unsigned_t<std::remove_cv_t<typename decltype(r.points())::element_type>>;
    const auto points = r.points();
    const auto owners = r.owners();
    std::vector<detail::u128> sum(r.size(), detail::u128{0, 0});
    const std::size_t total = points.size();
    for (std::size_t i = 0; i < total; ++i) {
        auto& s = sum[owners[i].value];
        const auto arc = static_cast<std::uint64_t>(static_cast<point_type>(
            static_cast<point_type>(points[i]) - static_cast<point_type>(points[i == 0 ? total - 1 : i - 1])));
        if (i == 0 && arc == 0) {
            // All points equal: entry 0 owns the whole circle.
            s = detail::add(s, detail::u128{sizeof(point_type) == 8 ? 1U : 0U,
                                            sizeof(point_type) == 8 ? 0U : (std::uint64_t{1} << (8 * sizeof(point_type)))});
            continue;
        }
        s = detail::add(s, detail::u128{0, arc});
    }
    return sum;
}

namespace detail {

/// A measure of a circle of P values as a fraction of it.
template <class P>
[[nodiscard]] auto circle_fraction(const u128& v) noexcept -> double {
    constexpr double circle = static_cast<double>(std::numeric_limits<P>::max()) + 1.0;
    return static_cast<double>(v.hi) * (18446744073709551616.0 / circle) + static_cast<double>(v.lo) / circle;
}

template <class S>
[[nodiscard]] auto sampled_ownership(const S& s) -> ownership_report {
    std::vector<std::size_t> counts(s.size(), 0);
    const auto& sample = analysis_sample();
    for (const auto p : sample) {
        ++counts[s.pick(p).value];
    }
    ownership_report r{{}, share_method::sampled, 3 * std::sqrt(0.25 / static_cast<double>(sample.size()))};
    for (const auto c : counts) {
        r.share.push_back(static_cast<double>(c) / static_cast<double>(sample.size()));
    }
    return r;
}

}  // namespace detail

/// Each node's share of the hash space: exact for rings of points (arcs: the native ring,
/// ketama, Envoy ring hash, Cassandra tokens), Maglev (entries / M) and
/// modulo; jump's defined 1/N; otherwise (rendezvous) counted over analysis_sample().
template <placement_strategy S>
[[nodiscard]] auto ownership(const S& s) -> ownership_report {
    return detail::sampled_ownership(s);
}
template <arc_placement S>
[[nodiscard]] auto ownership(const S& r) -> ownership_report {
    using point_type = std::make_unsigned_t<std::remove_cv_t<typename decltype(r.points())::element_type>>;
    ownership_report out;
    for (const auto& m : arc_measure(r)) {
        out.share.push_back(detail::circle_fraction<point_type>(m));
    }
    return out;
}
[[nodiscard]] inline auto ownership(const maglev& g) -> ownership_report {
    std::vector<std::size_t> entries(g.size(), 0);
    for (std::uint64_t slot = 0; slot < g.table_size(); ++slot) {
        ++entries[g.entry(slot).value];
    }
    ownership_report out;
    for (const auto e : entries) {
        out.share.push_back(static_cast<double>(e) / static_cast<double>(g.table_size()));
    }
    return out;
}
template <jump_form Form>
[[nodiscard]] auto ownership(const basic_jump<Form>& j) -> ownership_report {
    return {std::vector<double>(j.size(), 1.0 / static_cast<double>(j.size())), share_method::expected, 0};
}
[[nodiscard]] inline auto ownership(const modulo& m) -> ownership_report {
    // Node i owns the points p = i (mod N): floor((2^64 - 1 - i) / N) + 1 of them.
    ownership_report out;
    const std::uint64_t n = m.size();
    for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t count = (std::numeric_limits<std::uint64_t>::max() - i) / n + 1;
        out.share.push_back(static_cast<double>(count) / 18446744073709551616.0);
    }
    return out;
}

/// Keys per node and the skew figures services compare.
struct load_report {
    std::vector<std::size_t> keys;  ///< per node index
    double max_over_mean = 0;
    double min_over_mean = 0;
    double cv = 0;  ///< coefficient of variation: standard deviation / mean
};

/// Keys per node for hashed keys. With no keys every figure is 0.
template <placement_strategy S>
[[nodiscard]] auto load(const S& s, std::span<const std::uint64_t> points) -> load_report {
    load_report r;
    r.keys.assign(s.size(), 0);
    for (const auto p : points) {
        ++r.keys[s.pick(p).value];
    }
    if (points.empty()) {
        return r;
    }
    const double mean = static_cast<double>(points.size()) / static_cast<double>(s.size());
    const auto [lo, hi] = std::minmax_element(r.keys.begin(), r.keys.end());
    r.max_over_mean = static_cast<double>(*hi) / mean;
    r.min_over_mean = static_cast<double>(*lo) / mean;
    double var = 0;
    for (const auto k : r.keys) {
        var += (static_cast<double>(k) - mean) * (static_cast<double>(k) - mean);
    }
    r.cv = std::sqrt(var / static_cast<double>(s.size())) / mean;
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
inline auto total_variation(const membership_view& a, const membership_view& b, bool by_weight) -> double {
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
        sum += std::abs(x - y);
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
    r.minimum = total_variation(vb, va, false);
    r.fair_minimum = total_variation(vb, va, true);
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

/// Movement between two placements over hashed keys, by node id: what moved, per-node flows,
/// violations, and the minimum any scheme must move (half the L1 distance between the two
/// ownerships; fair_minimum uses the weight shares instead). No keys: every fraction is 0.
template <placement_strategy A, placement_strategy B>
[[nodiscard]] auto movement(const A& before, const B& after, std::span<const std::uint64_t> points)
    -> movement_report {
    const auto ob = ownership(before);
    const auto oa = ownership(after);
    const auto vb = detail::view_of(before, ob);
    const auto va = detail::view_of(after, oa);
    detail::movement_tally t{&vb, &va, {}, 0, 0};
    for (const auto p : points) {
        t.add(before.nodes()[before.pick(p).value].id, after.nodes()[after.pick(p).value].id, 1.0);
    }
    const auto method = ob.method == share_method::exact && oa.method == share_method::exact ? share_method::exact
                        : ob.method == share_method::sampled || oa.method == share_method::sampled
                            ? share_method::sampled
                            : share_method::expected;
    auto r = detail::finish_movement(before, after, vb, va, t, static_cast<double>(points.size()), method);
    r.keys = points.size();
    return r;
}

/// Movement between two rings over the whole hash space, exactly: the merged points cut the
/// circle into arcs on which both owners are constant.
template <class Traits>
[[nodiscard]] auto movement(const basic_ring<Traits>& before, const basic_ring<Traits>& after) -> movement_report {
    using point_type = typename basic_ring<Traits>::point_type;
    std::vector<point_type> cuts(before.points().begin(), before.points().end());
    cuts.insert(cuts.end(), after.points().begin(), after.points().end());
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const auto ob = ownership(before);
    const auto oa = ownership(after);
    const auto vb = detail::view_of(before, ob);
    const auto va = detail::view_of(after, oa);
    detail::movement_tally t{&vb, &va, {}, 0, 0};
    constexpr double circle = static_cast<double>(std::numeric_limits<point_type>::max()) + 1.0;
    for (std::size_t k = 0; k < cuts.size(); ++k) {
        // The arc (cuts[k-1], cuts[k]] (for k = 0, the wrap) has the owners of cuts[k].
        const auto arc = static_cast<point_type>(cuts[k] - cuts[k == 0 ? cuts.size() - 1 : k - 1]);
        const double measure = (k == 0 && arc == 0) ? circle : static_cast<double>(arc);
        t.add(before.nodes()[before.pick(cuts[k]).value].id, after.nodes()[after.pick(cuts[k]).value].id, measure);
    }
    auto r = detail::finish_movement(before, after, vb, va, t, circle, share_method::exact);
    r.exact = true;
    return r;
}

/// Movement between two Maglev tables of the same size, exactly, slot by slot.
[[nodiscard]] inline auto movement(const maglev& before, const maglev& after) -> movement_report {
    if (before.table_size() != after.table_size()) {
        return movement(before, after, analysis_sample());
    }
    const auto ob = ownership(before);
    const auto oa = ownership(after);
    const auto vb = detail::view_of(before, ob);
    const auto va = detail::view_of(after, oa);
    detail::movement_tally t{&vb, &va, {}, 0, 0};
    for (std::uint64_t slot = 0; slot < before.table_size(); ++slot) {
        t.add(before.nodes()[before.entry(slot).value].id, after.nodes()[after.entry(slot).value].id, 1.0);
    }
    auto r = detail::finish_movement(before, after, vb, va, t, static_cast<double>(before.table_size()),
                                     share_method::exact);
    r.exact = true;
    return r;
}

/// Movement over analysis_sample() for strategies without an exact form.
template <placement_strategy A, placement_strategy B>
[[nodiscard]] auto movement(const A& before, const B& after) -> movement_report {
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

/// Co-ownership under a placer, sampled over analysis_sample().
template <ordered_placement_strategy S>
[[nodiscard]] auto coownership(const replica_placer<S>& placer) -> coownership_report {
    return detail::coownership_over(placer, analysis_sample(), false);
}
/// Exact for a ring: every key between two consecutive points has the same replica set.
template <class Traits>
[[nodiscard]] auto coownership(const replica_placer<basic_ring<Traits>>& placer) -> coownership_report {
    const auto pts = placer.strategy().points();
    const std::vector<std::uint64_t> regions(pts.begin(), pts.end());
    return detail::coownership_over(placer, regions, true);
}
/// Exact for Maglev: one replica set per slot.
[[nodiscard]] inline auto coownership(const replica_placer<maglev>& placer) -> coownership_report {
    std::vector<std::uint64_t> slots(placer.strategy().table_size());
    for (std::uint64_t s = 0; s < slots.size(); ++s) {
        slots[s] = s;
    }
    return detail::coownership_over(placer, slots, true);
}

KEYPLACE_NAMESPACE_END

#endif
