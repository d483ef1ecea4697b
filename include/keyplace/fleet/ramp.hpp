// keyplace — which node owns a key. Ramped transitions: from a settled snapshot to another that
// changes one node's share (a join, a leave, a reweight), a chain of epochs that moves that
// node's share in steps, so only a slice of the keys is ever in flight.
#ifndef KEYPLACE_FLEET_RAMP_HPP_INCLUDED
#define KEYPLACE_FLEET_RAMP_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/fleet/errors.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/strategy_table.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// How long a ramp is: a number of epochs, or the most one epoch may move. Exactly one is set.
struct ramp_options {
    std::size_t steps = 0;  ///< the chain's epochs, 1 to 1000 (fewer when the node has fewer points)
    double max_moved = 0;   ///< the most one epoch may move, a fraction in (0, 1]
    /// Begin the chain with an epoch that announces where it goes: the node `joining` (a join) or
    /// `leaving` (a leave), so that its pending() placement is the ramp's last; the ramp's epochs
    /// follow, one number later. In a monotone ramp every epoch places a key on its owner before
    /// the ramp or after it, so clients that, while it runs, write to the owners under the epoch
    /// they serve, under the epoch before, and under that pending placement reach every copy a
    /// client on either neighbouring epoch reads (doc/rollout.md). A reweight cannot be
    /// announced: no node state carries a change of share.
    bool announce = false;
};

/// A ramp: the epochs to publish in order, and what each moves.
struct ramp_plan {
    /// from.epoch() + 1, + 2, …; each one's parent the one before; the last places keys as `to`
    /// does (it is `to`'s description renumbered). Ready to build and publish.
    std::vector<snapshot_description> epochs;
    /// The fraction of keys whose owner each epoch changes, from the epoch before it.
    std::vector<double> moved;
    /// The ramped node's weight (ramp_method::weights) or point count (points) at each epoch, as it
    /// places keys: an announced join's first epoch has 0 (a joining node places nothing yet).
    std::vector<double> values;
    std::string node;          ///< the node whose share ramps
    ramp_method method = ramp_method::none;
    double total_moved = 0;    ///< the sum of moved
    double one_shot_moved = 0; ///< from to `to` in one epoch
    double minimum = 0;        ///< the least any placement moves from `from`'s shares to `to`'s
    /// Whether the first epoch announces the ramp (ramp_options::announce): it moves nothing.
    bool announced = false;
    /// Whether the figures cover the whole hash space (else 2^17 sample keys: rendezvous).
    bool exact = false;
    /// Whether the strategy guarantees each key moves at most once, toward the node or away from
    /// it (the row's minimal_change), so total_moved equals one_shot_moved; else the excess is
    /// what total_moved - one_shot_moved measures.
    bool monotone = false;
};

/// The ramp from `from` to `to`. Both settled (no joining or leaving node), of one cluster, one
/// strategy with the same parameters, replication and overrides, differing in one node's share:
/// present in `to` only (a join), in `from` only (a leave; `to` may keep it as left), or with
/// another weight (or, for a strategy of given points, a point list that extends or prefixes the
/// other). Each intermediate epoch is the template — `to` for a join or a reweight, `from` for a
/// leave — with that node active at an intermediate weight or point-list prefix; epochs that
/// would place keys as the one before are left out. With max_moved, each epoch is the furthest
/// step whose movement stays within it (bisection over the weight, or the prefix length).
/// Errors (nothing is built): wrong_cluster (a ramp across clusters); invalid_argument (neither or
/// both options, one out of range, another strategy or parameter, replication or overrides, no
/// node or several changed — named —, points that neither extend nor prefix, a step of the
/// smallest size that already moves more than max_moved); invalid_state (a snapshot in
/// transition); unknown_strategy (a strategy that cannot ramp, with the reason). With announce,
/// also invalid_argument for a reweight.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto try_plan_ramp(const snapshot& from, const snapshot& to,
                                                        const ramp_options& options, error_info& err)
    -> std::optional<ramp_plan>;
/// try_plan_ramp, reporting through detail::raise.
[[nodiscard]] inline auto plan_ramp(const snapshot& from, const snapshot& to, const ramp_options& options)
    -> ramp_plan {
    error_info err;
    auto p = try_plan_ramp(from, to, options, err);
    if (!p) {
        detail::raise(err);
    }
    return std::move(*p);
}

#if KEYPLACE_DETAIL_DEFINE

namespace detail::ramping {

inline auto owning(const snapshot& s, const std::string& id) -> const snapshot_node* {
    const snapshot_node* n = s.find(id);
    return n != nullptr && n->state == node_state::active ? n : nullptr;
}

// Everything about a node that places keys (not its address or state).
inline auto same_placing(const snapshot_node& a, const snapshot_node& b) -> bool {
    return a.weight == b.weight && a.where == b.where && a.tokens == b.tokens && a.slots == b.slots &&
           a.points == b.points && a.partitions == b.partitions;
}

// A node's given points, as a list of 64-bit values (tokens as their bits), by the row's kind.
inline auto given_points(const snapshot_node& n, const strategy_row& row) -> std::vector<std::uint64_t> {
    if (row.per_node == node_data::tokens) {
        std::vector<std::uint64_t> out;
        for (const auto t : n.tokens) {
            out.push_back(static_cast<std::uint64_t>(t));
        }
        return out;
    }
    return n.points;
}

inline void set_points(snapshot_node& n, const strategy_row& row, const std::vector<std::uint64_t>& all,
                       std::size_t count) {
    if (row.per_node == node_data::tokens) {
        n.tokens.clear();
        for (std::size_t i = 0; i < count; ++i) {
            n.tokens.push_back(static_cast<std::int64_t>(all[i]));
        }
    } else {
        n.points.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count));
    }
}

inline auto why_not(const strategy_row& row) -> std::string {
    if (row.whole_weights) {
        return "its weights are whole point counts, and it renormalizes every node's points when one changes";
    }
    if (row.order == node_order::as_given && row.encoding == state_encoding::members) {
        return "its nodes have no weights (buckets in the order given)";
    }
    if (row.encoding == state_encoding::buckets) {
        return "its buckets have no weights";
    }
    if (row.per_node == node_data::slots) {
        return "its slots are given per node";
    }
    if (row.encoding == state_encoding::partition_table) {
        return "a partition table is reclaimed as a whole; change its weights with successor(weights) instead";
    }
    return "this library does not ramp it";
}

// d as the epoch `epoch` following epoch - 1: no digests, no metadata.
inline auto clean(snapshot_description d, std::uint64_t epoch) -> snapshot_description {
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.fingerprint.reset();
    d.probe.reset();
    d.metadata = {};
    return d;
}

}  // namespace detail::ramping

namespace detail::ramping {

// The chain without its announcing epoch.
inline auto chain(const snapshot& from, const snapshot& to, const ramp_options& options, error_info& err)
    -> std::optional<ramp_plan> {
    const auto refuse = [&](auto code, std::string message) -> std::optional<ramp_plan> {
        err = detail::fail(code, "ramp: " + std::move(message));
        return std::nullopt;
    };
    const bool by_steps = options.steps != 0;
    const bool by_moved = options.max_moved != 0;
    if (by_steps == by_moved) {
        return refuse(errc::invalid_argument, "give either a number of steps or the most one step may move");
    }
    if (by_steps && options.steps > 1000) {
        return refuse(errc::invalid_argument, "steps " + std::to_string(options.steps) + " is not from 1 to 1000");
    }
    if (by_moved && !(options.max_moved > 0 && options.max_moved <= 1)) {
        return refuse(errc::invalid_argument,
                      "max_moved " + detail::format_weight(options.max_moved) + " is not a fraction in (0, 1]");
    }
    if (from.cluster() != to.cluster()) {
        return refuse(fleet_errc::wrong_cluster, "a ramp across clusters: " + detail::quote(from.cluster()) + " and " +
                                                     detail::quote(to.cluster()));
    }
    for (const snapshot* s : {&from, &to}) {
        if (s->in_transition()) {
            return refuse(fleet_errc::invalid_state, "epoch " + std::to_string(s->epoch()) +
                                                         " has joining or leaving nodes: complete it first");
        }
    }
    if (!(from.strategy() == to.strategy())) {
        return refuse(errc::invalid_argument, "the two snapshots differ in strategy or its parameters (" +
                                                  detail::quote(from.strategy().name) + " and " +
                                                  detail::quote(to.strategy().name) + ")");
    }
    if (!(from.replication() == to.replication()) ||
        !std::equal(from.overrides().begin(), from.overrides().end(), to.overrides().begin(), to.overrides().end())) {
        return refuse(errc::invalid_argument, "the two snapshots differ in replication or overrides");
    }
    const strategy_row* row = find_strategy(from.strategy().name);
    if (row == nullptr || row->ramps == ramp_method::none) {
        return refuse(fleet_errc::unknown_strategy, "strategy " + detail::quote(from.strategy().name) +
                                                        " cannot ramp: " + (row ? why_not(*row) : "unknown"));
    }

    // The one node whose share differs.
    std::vector<std::string> changed;
    for (const snapshot* s : {&from, &to}) {
        for (const auto& n : s->nodes()) {
            const snapshot_node* a = owning(from, n.id);
            const snapshot_node* b = owning(to, n.id);
            const bool differs = (a == nullptr) != (b == nullptr) || (a != nullptr && !same_placing(*a, *b));
            if (differs && std::find(changed.begin(), changed.end(), n.id) == changed.end()) {
                changed.push_back(n.id);
            }
        }
    }
    if (changed.size() != 1) {
        std::string names;
        for (std::size_t i = 0; i < changed.size() && i < 5; ++i) {
            names += (i ? ", " : "") + detail::quote(changed[i]);
        }
        return refuse(errc::invalid_argument,
                      changed.empty() ? std::string("the two snapshots place keys alike: nothing to ramp")
                                      : "a ramp changes one node's share, and these change " +
                                            std::to_string(changed.size()) + ": " + names +
                                            (changed.size() > 5 ? ", …" : "") +
                                            "; ramp them one after another");
    }
    const std::string id = changed.front();
    const snapshot_node* a = owning(from, id);
    const snapshot_node* b = owning(to, id);
    if (options.announce && a != nullptr && b != nullptr) {
        return refuse(errc::invalid_argument, "node " + detail::quote(id) +
                                                  " changes its share, and only a join or a leave can be announced "
                                                  "(no node state carries a change of share)");
    }
    const snapshot& templ = b != nullptr ? to : from;  // the node is listed, active, there
    const auto at = static_cast<std::size_t>(templ.find(id) - templ.nodes().data());
    const snapshot_description base = templ.describe();
    const snapshot_description last = to.describe();

    // The node's value at fraction t of the way, as a description of the epoch.
    std::vector<std::uint64_t> points;
    double lo_value = 0;
    double hi_value = 0;
    if (row->ramps == ramp_method::points) {
        const auto pa = a ? given_points(*a, *row) : std::vector<std::uint64_t>{};
        const auto pb = b ? given_points(*b, *row) : std::vector<std::uint64_t>{};
        const bool grows = pa.size() <= pb.size() && std::equal(pa.begin(), pa.end(), pb.begin());
        const bool shrinks = pb.size() <= pa.size() && std::equal(pb.begin(), pb.end(), pa.begin());
        if (!grows && !shrinks) {
            return refuse(errc::invalid_argument, "node " + detail::quote(id) +
                                                      ": its points in one snapshot neither extend nor prefix "
                                                      "those in the other");
        }
        points = grows ? pb : pa;
        lo_value = static_cast<double>(pa.size());
        hi_value = static_cast<double>(pb.size());
    } else {
        lo_value = a ? a->weight : 0.0;
        hi_value = b ? b->weight : 0.0;
    }
    // A ring's weight counts points (vnodes a unit): intermediate weights are whole point counts,
    // one point at least. Elsewhere the least intermediate weight is a millionth of the larger end.
    double vnodes = 0;
    if (const auto v = from.strategy().params.find("vnodes"); v != from.strategy().params.end()) {
        if (const auto* n = std::get_if<std::uint64_t>(&v->second)) {
            vnodes = static_cast<double>(*n);
        }
    }
    const auto value_at = [&](double t) -> double {
        const double v = lo_value + (hi_value - lo_value) * t;
        if (row->ramps == ramp_method::points) {
            return std::max(1.0, std::round(v));
        }
        if (vnodes > 0) {
            return std::max(1.0, std::round(v * vnodes)) / vnodes;
        }
        return std::max(v, std::max(lo_value, hi_value) * 1e-6);
    };
    const auto describe_at = [&](double value, std::uint64_t epoch) -> snapshot_description {
        snapshot_description d = clean(base, epoch);
        snapshot_node& n = d.nodes[at];
        n.state = node_state::active;
        if (row->ramps == ramp_method::points) {
            set_points(n, *row, points, static_cast<std::size_t>(value));
        } else {
            n.weight = value;
        }
        return d;
    };

    ramp_plan plan;
    plan.node = id;
    plan.method = row->ramps;
    plan.monotone = row->minimal_change;
    const auto one_shot = detail::snapshot_movement(from, to);
    plan.one_shot_moved = one_shot.moved;
    plan.minimum = one_shot.minimum;
    plan.exact = one_shot.exact;

    std::optional<snapshot> prev_built;
    const snapshot* prev = &from;
    std::uint64_t epoch = from.epoch();
    const auto build = [&](const snapshot_description& d, std::optional<snapshot>& out) -> bool {
        error_info e;
        out = snapshot::try_build(d, e);
        if (!out) {
            err = e;
        }
        return out.has_value();
    };
    const auto record = [&](snapshot_description d, double value, double moved) {
        plan.epochs.push_back(std::move(d));
        plan.values.push_back(value);
        plan.moved.push_back(moved);
        plan.total_moved += moved;
    };
    const auto push = [&](snapshot_description d, snapshot&& s, double value, double moved) {
        record(std::move(d), value, moved);
        prev_built.emplace(std::move(s));
        prev = &*prev_built;
    };
    // The last epoch is `to` renumbered: it places keys as `to` does, so `to` measures it (only an
    // epoch that overflowed needs building, to report it).
    const auto finish = [&]() -> bool {
        snapshot_description d = clean(last, ++epoch);
        if (d.epoch == 0) {
            std::optional<snapshot> s;
            return build(d, s);
        }
        record(std::move(d), hi_value, detail::snapshot_movement(*prev, to).moved);
        return true;
    };

    if (by_steps) {
        for (std::size_t k = 1; k < options.steps; ++k) {
            const double value = value_at(static_cast<double>(k) / static_cast<double>(options.steps));
            if ((!plan.values.empty() && value == plan.values.back()) || value == hi_value) {
                continue;  // as the epoch before, or already the last one's value
            }
            snapshot_description d = describe_at(value, epoch + 1);
            std::optional<snapshot> s;
            if (!build(d, s)) {
                return std::nullopt;
            }
            if (s->current().fingerprint() == prev->current().fingerprint()) {
                continue;  // places as the epoch before: left out
            }
            ++epoch;
            const double moved = detail::snapshot_movement(*prev, *s).moved;
            push(std::move(d), std::move(*s), value, moved);
        }
        if (!finish()) {
            return std::nullopt;
        }
        return plan;
    }

    // max_moved: from t0, the furthest t whose epoch moves at most max_moved from the one before.
    double t0 = 0;
    for (int guard = 0; guard < 1000; ++guard) {
        if (detail::snapshot_movement(*prev, to).moved <= options.max_moved) {
            if (!finish()) {
                return std::nullopt;
            }
            return plan;
        }
        double lo = t0;
        double hi = 1;
        std::optional<snapshot> best;
        snapshot_description best_d;
        double best_value = 0;
        double best_moved = 0;
        const int rounds = row->ramps == ramp_method::points ? 64 : 30;
        for (int r = 0; r < rounds && hi - lo > 1e-9; ++r) {
            const double mid = (lo + hi) / 2;
            const double value = value_at(mid);
            snapshot_description d = describe_at(value, epoch + 1);
            std::optional<snapshot> s;
            if (!build(d, s)) {
                return std::nullopt;
            }
            const double moved = detail::snapshot_movement(*prev, *s).moved;
            if (moved <= options.max_moved) {
                lo = mid;
                if (moved > 0) {
                    best = std::move(s);
                    best_d = std::move(d);
                    best_value = value;
                    best_moved = moved;
                }
            } else {
                hi = mid;
            }
        }
        if (!best) {
            // Even the smallest step (one point, or the least weight bisection reaches) moves more.
            const double value = value_at(hi);
            snapshot_description d = describe_at(value, epoch + 1);
            std::optional<snapshot> s;
            const double moved = build(d, s) ? detail::snapshot_movement(*prev, *s).moved : 1.0;
            return refuse(errc::invalid_argument, "max_moved " + detail::format_weight(options.max_moved) +
                                                      " is less than the smallest step moves (" +
                                                      detail::format_weight(moved) + ", node " + detail::quote(id) +
                                                      " at " + detail::format_weight(value) + ")");
        }
        ++epoch;
        push(std::move(best_d), std::move(*best), best_value, best_moved);
        t0 = lo;
    }
    return refuse(errc::invalid_argument, "max_moved " + detail::format_weight(options.max_moved) +
                                              " would take more than 1000 epochs");
}

}  // namespace detail::ramping

KEYPLACE_DETAIL_INLINE auto try_plan_ramp(const snapshot& from, const snapshot& to, const ramp_options& options,
                                          error_info& err) -> std::optional<ramp_plan> {
    using namespace detail::ramping;
    auto plan = chain(from, to, options, err);
    if (!plan || !options.announce) {
        return plan;
    }
    const std::string& id = plan->node;
    const snapshot_node* a = owning(from, id);
    const bool join = a == nullptr;  // else a leave: chain refused a change of share
    // The announcing epoch: `to` with the node joining, or `from` with it leaving.
    snapshot_description d = clean(join ? to.describe() : from.describe(), from.epoch() + 1);
    for (auto& n : d.nodes) {
        if (n.id == id) {
            n.state = join ? node_state::joining : node_state::leaving;
        }
    }
    for (auto& e : plan->epochs) {
        const std::uint64_t number = e.epoch + 1;
        e = clean(std::move(e), number);
    }
    // The announcing epoch must build; of the renumbered ones only the last can wrap to 0, and
    // building it says why.
    error_info why;
    if (!snapshot::try_build(d, why) ||
        (plan->epochs.back().epoch == 0 && !snapshot::try_build(plan->epochs.back(), why))) {
        err = why;
        return std::nullopt;
    }
    const double before = join ? 0.0
                               : (plan->method == ramp_method::points
                                      ? static_cast<double>(given_points(*a, *find_strategy(from.strategy().name)).size())
                                      : a->weight);
    plan->epochs.insert(plan->epochs.begin(), std::move(d));
    plan->values.insert(plan->values.begin(), before);
    plan->moved.insert(plan->moved.begin(), 0.0);
    plan->announced = true;
    return plan;
}

#endif

KEYPLACE_NAMESPACE_END

#endif
