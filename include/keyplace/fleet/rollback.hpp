// keyplace — which node owns a key. Rollback: from any epoch (a step of a ramp, a transition
// under way, a completed change) back to an earlier placement, the epochs to publish, what they
// move, and the write-set rule — which copies to invalidate before they serve again and which to
// drop — so that ownership that returns never serves a stale copy.
#ifndef KEYPLACE_FLEET_ROLLBACK_HPP_INCLUDED
#define KEYPLACE_FLEET_ROLLBACK_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/fleet/errors.hpp>
#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// One range of the hash space (inclusive, in the plan's space) and the write-set rule there.
struct rollback_range {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    double fraction = 0;
    /// Nodes that hold the range after the rollback but received none of its writes in the epoch
    /// rolled back from: whatever they still hold of it predates writes made elsewhere. Invalidate
    /// the range there before the first rollback epoch is published.
    std::vector<std::string> invalidate;
    /// Nodes that received its writes in the epoch rolled back from and hold no copy after: their
    /// copies stop being maintained. Drop or expire them there once the rollback is adopted, so
    /// that a later return cannot serve them.
    std::vector<std::string> relinquish;
};

/// An overridden key (in either snapshot) with a rule: the ranges describe the strategies, which
/// do not see overrides.
struct rollback_key {
    std::string key;
    std::vector<std::string> invalidate;
    std::vector<std::string> relinquish;
};

/// Per node, the fraction of the key space under each rule.
struct rollback_total {
    std::string node;
    double invalidate = 0;
    double relinquish = 0;
};

struct rollback_plan {
    /// now.epoch() + 1, + 2, …; the last places keys as `back_to` does. One epoch unless a ramp
    /// back was asked for.
    std::vector<snapshot_description> epochs;
    std::vector<double> moved;  ///< the fraction of keys whose owner each epoch changes
    /// Whether the rules are exact ranges (else `ranges` is empty and `totals` count 2^17 sample keys).
    bool exact = false;
    plan_space space = plan_space::sampled;
    std::uint64_t modulus = 0;           ///< residues only: the ranges count residues modulo this
    std::vector<rollback_range> ranges;  ///< sorted by first; only ranges where a rule applies
    std::vector<rollback_key> keys;      ///< overridden keys with a rule, in bytewise order
    std::vector<rollback_total> totals;  ///< every node with a rule, by id
};

/// How to return: in one epoch (the default), or ramped back (steps or max_moved, as ramp_options;
/// `now` must then be settled, and the two must differ in one node's share).
struct rollback_options {
    std::size_t steps = 1;
    double max_moved = 0;
};

/// The rollback from `now` to the placement of `back_to` (a settled snapshot of the same cluster
/// and strategy, typically the one before the change). The epoch rolled back from received its
/// writes on its write set — current() and pending() copies — so for every key the rule is:
/// invalidate on back_to's copies that are not in now's write set; relinquish on now's write set
/// minus back_to's copies. Exact over ranges where the strategy has regions (rings, tables),
/// else counted over sample keys; overridden keys get their own rule (keys). Errors (nothing is
/// planned): wrong_cluster; invalid_state (back_to in transition, or a node of back_to that
/// owns keys but left in `now`: a tombstone may not return); invalid_argument (another strategy
/// or parameters, a ramp back that try_plan_ramp refuses, with its reason); steps 0.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto try_plan_rollback(const snapshot& now, const snapshot& back_to,
                                                            const rollback_options& options, error_info& err)
    -> std::optional<rollback_plan>;
[[nodiscard]] inline auto plan_rollback(const snapshot& now, const snapshot& back_to,
                                        const rollback_options& options = {}) -> rollback_plan {
    error_info err;
    auto p = try_plan_rollback(now, back_to, options, err);
    if (!p) {
        detail::raise(err);
    }
    return std::move(*p);
}

#if KEYPLACE_DETAIL_DEFINE

namespace detail::rolling {

inline auto minus(const std::vector<std::string>& a, const std::vector<std::string>& b) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto& x : a) {
        if (std::find(b.begin(), b.end(), x) == b.end() && std::find(out.begin(), out.end(), x) == out.end()) {
            out.push_back(x);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

inline auto joined(std::vector<std::string> a, const std::vector<std::string>& b) -> std::vector<std::string> {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// The copies of key under a placement, as ids.
inline auto copy_ids(const snapshot& s, const placement& p, std::string_view key) -> std::vector<std::string> {
    std::vector<std::uint32_t> idx(p.width());
    idx.resize(p.copies_of(key, idx));
    std::vector<std::string> out;
    for (const auto i : idx) {
        out.push_back(s.nodes()[i].id);
    }
    return out;
}

}  // namespace detail::rolling

KEYPLACE_DETAIL_INLINE auto try_plan_rollback(const snapshot& now, const snapshot& back_to,
                                              const rollback_options& options, error_info& err)
    -> std::optional<rollback_plan> {
    using namespace detail::rolling;
    const auto refuse = [&](auto code, std::string message) -> std::optional<rollback_plan> {
        err = detail::fail(code, "rollback: " + std::move(message));
        return std::nullopt;
    };
    if (now.cluster() != back_to.cluster()) {
        return refuse(fleet_errc::wrong_cluster, "a rollback across clusters: " + detail::quote(now.cluster()) +
                                                     " and " + detail::quote(back_to.cluster()));
    }
    if (back_to.in_transition()) {
        return refuse(fleet_errc::invalid_state, "epoch " + std::to_string(back_to.epoch()) +
                                                     " has joining or leaving nodes: roll back to a settled epoch");
    }
    if (!(now.strategy() == back_to.strategy())) {
        return refuse(errc::invalid_argument, "the two snapshots differ in strategy or its parameters");
    }
    for (const auto& n : back_to.nodes()) {
        const snapshot_node* was = now.find(n.id);
        if (was != nullptr && was->state == node_state::left && owns_now(n.state)) {
            return refuse(fleet_errc::invalid_state,
                          "node " + detail::quote(n.id) + " left at epoch " + std::to_string(now.epoch()) +
                              " and may not return: roll back to a placement without it, or give it a new id");
        }
    }
    if (options.steps == 0 && options.max_moved == 0) {
        return refuse(errc::invalid_argument, "steps 0: a rollback is at least one epoch");
    }
    rollback_plan plan;
    const bool one_epoch = options.max_moved == 0 && options.steps == 1;
    if (one_epoch) {
        snapshot_description d = detail::ramping::clean(back_to.describe(), now.epoch() + 1);
        error_info e;
        auto built = snapshot::try_build(d, e);
        if (!built) {
            err = e;
            return std::nullopt;
        }
        plan.moved.push_back(detail::snapshot_movement(now, *built).moved);
        plan.epochs.push_back(std::move(d));
    } else {
        if (now.in_transition()) {
            return refuse(fleet_errc::invalid_state, "epoch " + std::to_string(now.epoch()) +
                                                         " is a transition: roll it back in one epoch");
        }
        error_info e;
        auto ramp = try_plan_ramp(now, back_to, {.steps = options.max_moved == 0 ? options.steps : 0,
                                                 .max_moved = options.max_moved}, e);
        if (!ramp) {
            err = detail::fail(e.code(), "rollback: " + e.message());
            return std::nullopt;
        }
        plan.epochs = std::move(ramp->epochs);
        plan.moved = std::move(ramp->moved);
    }

    // The write set of `now` is its current() and pending() copies: both plans below start there.
    std::optional<snapshot> pending_now;  // a snapshot whose current() is now.pending()
    if (now.in_transition()) {
        auto d = completion(now);
        d.epoch = 2;  // compared, never published
        d.parent_epoch = 1;
        pending_now.emplace(snapshot::build(d));
    }
    const transfer_plan from_current = plan_transfer(now, back_to);
    // Exact ranges over unsigned points or residues; Cassandra's signed tokens are counted.
    plan.exact = from_current.exact && from_current.space != plan_space::tokens;
    plan.space = plan.exact ? from_current.space : plan_space::sampled;
    std::map<std::string, rollback_total> totals;
    const auto count = [&](const std::vector<std::string>& nodes, double fraction, bool inval) {
        for (const auto& n : nodes) {
            auto& t = totals[n];
            t.node = n;
            (inval ? t.invalidate : t.relinquish) += fraction;
        }
    };
    const transfer_plan from_pending = pending_now ? plan_transfer(*pending_now, back_to) : transfer_plan{};
    // The two lists must count the same space: a modulus may differ (modulo's lcm of node counts).
    if (pending_now && (!from_pending.exact || from_pending.space != from_current.space ||
                        from_pending.modulus != from_current.modulus)) {
        plan.exact = false;
        plan.space = plan_space::sampled;
    }
    plan.modulus = plan.exact ? from_current.modulus : 0;
    if (plan.exact) {
        // Sweep the two sorted lists of changed ranges: where only one changes, the other placement
        // already holds back_to's copies there.
        const auto& r1 = from_current.ranges;
        const auto& r2 = from_pending.ranges;
        std::size_t i = 0;
        std::size_t j = 0;
        std::uint64_t at = 0;  // the next point not yet covered
        bool done = false;
        const double space = from_current.space == plan_space::residues
                                 ? static_cast<double>(from_current.modulus)
                                 : (from_current.space == plan_space::points32 ? 4294967296.0 : 18446744073709551616.0);
        while (!done && (i < r1.size() || j < r2.size())) {
            // The next piece starts at the smallest point >= at covered by either list.
            while (i < r1.size() && r1[i].last < at) {
                ++i;
            }
            while (j < r2.size() && r2[j].last < at) {
                ++j;
            }
            if (i == r1.size() && j == r2.size()) {
                break;
            }
            const std::uint64_t s1 = i < r1.size() ? std::max(r1[i].first, at) : ~std::uint64_t{0};
            const std::uint64_t s2 = j < r2.size() ? std::max(r2[j].first, at) : ~std::uint64_t{0};
            const std::uint64_t start = std::min(s1, s2);
            const bool in1 = i < r1.size() && s1 == start;
            const bool in2 = j < r2.size() && s2 == start;
            // The piece ends where either range ends or the other begins.
            std::uint64_t end = ~std::uint64_t{0};
            if (in1) {
                end = std::min(end, r1[i].last);
            } else if (i < r1.size()) {
                end = std::min(end, r1[i].first - 1);
            }
            if (in2) {
                end = std::min(end, r2[j].last);
            } else if (j < r2.size()) {
                end = std::min(end, r2[j].first - 1);
            }
            const auto& after = in1 ? r1[i].after : r2[j].after;
            std::vector<std::string> written;
            if (in1) {
                written = r1[i].before;
            } else {
                written = after;  // current() already held back_to's copies there
            }
            if (pending_now) {
                written = joined(written, in2 ? r2[j].before : after);
            }
            rollback_range r;
            r.first = start;
            r.last = end;
            r.fraction = (static_cast<double>(end - start) + 1) / space;
            r.invalidate = minus(after, written);
            r.relinquish = minus(written, after);
            if (!r.invalidate.empty() || !r.relinquish.empty()) {
                count(r.invalidate, r.fraction, true);
                count(r.relinquish, r.fraction, false);
                if (!plan.ranges.empty() && plan.ranges.back().last + 1 == r.first &&
                    plan.ranges.back().invalidate == r.invalidate && plan.ranges.back().relinquish == r.relinquish) {
                    plan.ranges.back().last = r.last;
                    plan.ranges.back().fraction += r.fraction;
                } else {
                    plan.ranges.push_back(std::move(r));
                }
            }
            done = end == ~std::uint64_t{0};
            at = end + 1;
        }
    } else {
        const double each = 1.0 / static_cast<double>(analysis_sample_size);
        for (std::size_t k = 0; k < analysis_sample_size; ++k) {
            const std::string key = sample_key(k);
            auto written = copy_ids(now, now.current(), key);
            if (now.in_transition()) {
                written = joined(written, copy_ids(now, now.pending(), key));
            }
            const auto after = copy_ids(back_to, back_to.current(), key);
            count(minus(after, written), each, true);
            count(minus(written, after), each, false);
        }
    }
    for (auto& [id, t] : totals) {
        plan.totals.push_back(std::move(t));
    }
    // Overridden keys, in either snapshot, one by one: the ranges do not see them.
    for (const auto& key : detail::overridden_keys(now, back_to)) {
        std::vector<std::string> written;
        for (const auto* n : now.write_set(key)) {
            written.push_back(n->id);
        }
        const auto after = copy_ids(back_to, back_to.current(), key);
        rollback_key k{key, minus(after, written), minus(written, after)};
        if (!k.invalidate.empty() || !k.relinquish.empty()) {
            plan.keys.push_back(std::move(k));
        }
    }
    return plan;
}

#endif

KEYPLACE_NAMESPACE_END

#endif
