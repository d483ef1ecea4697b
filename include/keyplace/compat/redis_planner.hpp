// keyplace — which node owns a key. Redis Cluster's slot planner as redis-cli computes it
// (src/redis-cli.c, Redis 7.0): `--cluster create`'s split of the 16384 slots over the masters,
// and `--cluster rebalance`'s plan (weights, threshold, rounding fix-up, two pointers, lowest
// slots first). Both compute in single precision, as redis-cli does, so they are exact only
// where float arithmetic is IEEE-754 binary32 without excess precision.
#ifndef KEYPLACE_COMPAT_REDIS_PLANNER_HPP_INCLUDED
#define KEYPLACE_COMPAT_REDIS_PLANNER_HPP_INCLUDED

#include <keyplace/compat/redis.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__FAST_MATH__)
#error "keyplace/compat/redis_planner.hpp needs IEEE-754 float arithmetic: compile without -ffast-math"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "keyplace/compat/redis_planner.hpp needs FLT_EVAL_METHOD == 0 (no excess precision; use SSE2 on x86)"
#endif

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// The host part of a redis-cli node address: the text before its last ':' ("10.0.0.1:7000" →
/// "10.0.0.1"), the whole address when it has none.
[[nodiscard]] constexpr auto redis_address_host(std::string_view address) noexcept -> std::string_view {
    const auto colon = address.rfind(':');
    return colon == std::string_view::npos ? address : address.substr(0, colon);
}

/// The slot ranges `redis-cli --cluster create ADDRESS...` assigns with --cluster-replicas 0.
/// The nodes are first interleaved by host (one node of each host in turn, hosts in order of
/// first appearance, as redis-cli does for anti-affinity); then master i of N takes
/// [first, lround(cursor + 16384/N - 1)] with cursor += 16384/N in float, the last master up to
/// 16383 (3 masters: 0-5460, 5461-10922, 10923-16383). Throws keyplace::error: fewer than 3
/// addresses (redis-cli refuses: "Redis Cluster requires at least 3 master nodes"), more than
/// 16384 (too_many_nodes), an empty or repeated address.
[[nodiscard]] inline auto redis_create_ranges(std::span<const std::string> addresses) -> std::vector<slot_range> {
    if (addresses.size() < 3) {
        detail::raise(detail::fail(errc::invalid_argument, std::to_string(addresses.size()) +
                                                               " masters: Redis Cluster requires at least 3"));
    }
    if (addresses.size() > redis_slot_count) {
        detail::raise(detail::fail(errc::too_many_nodes, std::to_string(addresses.size()) + " masters for 16384 slots"));
    }
    std::vector<keyplace::node> check;
    for (const auto& a : addresses) {
        check.push_back(keyplace::node{a});
    }
    std::vector<keyplace::node> sorted;
    if (auto f = detail::sorted_membership(check, sorted)) {
        detail::raise(f);
    }
    // Interleave: hosts in first-seen order, each contributing its next node per round.
    std::vector<std::string_view> hosts;
    std::vector<std::vector<std::size_t>> by_host;
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        const auto host = redis_address_host(addresses[i]);
        const auto h = static_cast<std::size_t>(std::find(hosts.begin(), hosts.end(), host) - hosts.begin());
        if (h == hosts.size()) {
            hosts.push_back(host);
            by_host.emplace_back();
        }
        by_host[h].push_back(i);
    }
    std::vector<std::size_t> order;
    for (std::size_t round = 0; order.size() < addresses.size(); ++round) {
        for (const auto& nodes : by_host) {
            if (round < nodes.size()) {
                order.push_back(nodes[round]);
            }
        }
    }
    const auto masters = static_cast<std::int64_t>(addresses.size());
    const float per_master = static_cast<float>(redis_slot_count) / static_cast<float>(masters);
    float cursor = 0.0F;
    std::int64_t first = 0;
    std::vector<slot_range> ranges;
    for (std::int64_t i = 0; i < masters; ++i) {
        const float end = cursor + per_master - 1.0F;  // one float expression, as redis-cli's
        // lround of a non-negative float: exact in double, then half away from zero.
        auto last = static_cast<std::int64_t>(static_cast<double>(end) + 0.5);
        if (last > static_cast<std::int64_t>(redis_slot_count) || i == masters - 1) {
            last = static_cast<std::int64_t>(redis_slot_count) - 1;
        }
        last = std::max(last, first);
        ranges.push_back({static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(last),
                          addresses[order[static_cast<std::size_t>(i)]]});
        first = last + 1;
        cursor += per_master;
    }
    return ranges;
}

/// A master's weight for rebalance (--cluster-weight ID=W).
struct redis_weight {
    std::string id;
    double weight = 1.0;
};

/// Options of `redis-cli --cluster rebalance`.
struct redis_rebalance_options {
    /// --cluster-weight: weights by node id (converted to float, as redis-cli's atof into a
    /// float); unnamed masters weigh 1.
    std::vector<redis_weight> weights;
    /// --cluster-threshold, in percent (default 2): nothing moves unless some master's slot count
    /// differs from its expected count by more than this share of its slots. 0 plans nothing,
    /// as in redis-cli, which then skips the test.
    double threshold = 2.0;
    /// --cluster-use-empty-masters: masters without slots take part (otherwise their weight is 0).
    bool use_empty_masters = false;
};

/// One move of a rebalance: slots (ascending) from one master to another.
struct redis_slot_move {
    std::string from;
    std::string to;
    std::vector<std::uint16_t> slots;
};

/// The plan: the moves in the order redis-cli makes them (empty when every master is within
/// the threshold), and each involved master's balance before moving (slots to give, negative:
/// to take), after the rounding fix-up, in list order.
struct redis_rebalance_plan {
    std::vector<redis_slot_move> moves;
    std::vector<std::pair<std::string, std::int64_t>> balances;
    bool needed = false;
};

/// `redis-cli --cluster rebalance`'s plan for a cluster whose masters, in redis-cli's list order
/// (CLUSTER NODES as the entry node reports it), are `order` (empty: the cluster's node order,
/// by id). Exactly redis-cli's arithmetic: total weight summed in float in list order;
/// expected_i = (int)((16384.0f / total) * w_i); balance_i = slots_i - expected_i; the
/// threshold test |100 - 100.0 * expected / slots| > threshold (or no slots and expected > 1);
/// while the balances sum above 0, each master with balance <= 0 in list order gives up one;
/// masters sorted by balance (ties keep list order: Debian 12's glibc qsort is a merge sort);
/// then two pointers from both ends move min(|dst|, |src|) slots, the source's lowest-numbered
/// slots at that moment. Throws keyplace::error: an order that is not a permutation of the
/// members (unknown_id, duplicate_id, or a member left out: invalid_argument), a weight naming
/// a non-member (unknown_id, redis-cli's "No such master node"), a weight negative or not
/// finite (invalid_weight), a total weight of 0 (invalid_weight), a threshold negative or not
/// finite (invalid_argument).
[[nodiscard]] inline auto redis_rebalance(const redis_cluster& cluster, std::span<const std::string> order,
                                          const redis_rebalance_options& options = {}) -> redis_rebalance_plan {
    const std::size_t n = cluster.size();
    std::vector<std::size_t> list;  // list position -> node index
    if (order.empty()) {
        for (std::size_t i = 0; i < n; ++i) {
            list.push_back(i);
        }
    } else {
        std::vector<bool> seen(n, false);
        for (const auto& id : order) {
            const auto found = cluster.find(id);
            if (!found) {
                detail::raise(detail::fail(errc::unknown_id, "master " + detail::quote(id) + " is not in the cluster"));
            }
            if (seen[found->value]) {
                detail::raise(detail::fail(errc::duplicate_id, "master " + detail::quote(id) + " is listed twice"));
            }
            seen[found->value] = true;
            list.push_back(found->value);
        }
        if (list.size() != n) {
            detail::raise(detail::fail(errc::invalid_argument, "the order lists " + std::to_string(list.size()) +
                                                                   " of the " + std::to_string(n) + " masters"));
        }
    }
    if (!(options.threshold >= 0.0 && options.threshold <= FLT_MAX)) {
        detail::raise(detail::fail(errc::invalid_argument, "threshold " + std::to_string(options.threshold) +
                                                               " is not a non-negative percentage"));
    }
    const auto threshold = static_cast<float>(options.threshold);  // redis-cli keeps it in a float
    std::vector<float> weight(n, 1.0F);
    for (const auto& w : options.weights) {
        const auto found = cluster.find(w.id);
        if (!found) {
            detail::raise(detail::fail(errc::unknown_id, "no such master node " + detail::quote(w.id)));
        }
        if (!(w.weight >= 0.0 && w.weight <= FLT_MAX)) {
            detail::raise(detail::fail(errc::invalid_weight, "weight " + std::to_string(w.weight) + " of " +
                                                                 detail::quote(w.id) + " is not a finite number >= 0"));
        }
        weight[found->value] = static_cast<float>(w.weight);
    }
    std::vector<std::vector<std::uint16_t>> slots(n);  // ascending
    for (std::size_t s = 0; s < redis_slot_count; ++s) {
        slots[cluster.pick(s).value].push_back(static_cast<std::uint16_t>(s));
    }
    float total = 0.0F;
    std::vector<std::size_t> involved;
    for (const std::size_t i : list) {
        if (!options.use_empty_masters && slots[i].empty()) {
            continue;
        }
        total += weight[i];
        involved.push_back(i);
    }
    if (!(total > 0.0F)) {
        detail::raise(detail::fail(errc::invalid_weight, "the masters' weights sum to 0"));
    }
    redis_rebalance_plan plan;
    std::vector<std::int64_t> balance(n, 0);
    std::int64_t sum = 0;
    bool over = false;
    for (const std::size_t i : involved) {
        const float share = static_cast<float>(redis_slot_count) / total * weight[i];
        const auto expected = static_cast<std::int64_t>(share);
        const auto have = static_cast<std::int64_t>(slots[i].size());
        balance[i] = have - expected;
        sum += balance[i];
        if (threshold > 0.0F) {
            if (have > 0) {
                const double err = 100.0 - 100.0 * static_cast<double>(expected) / static_cast<double>(have);
                over = over || (err < 0 ? -err : err) > static_cast<double>(threshold);
            } else {
                over = over || expected > 1;
            }
        }
    }
    if (!over) {
        return plan;
    }
    plan.needed = true;
    while (sum > 0) {
        for (const std::size_t i : involved) {
            if (balance[i] <= 0 && sum > 0) {
                --balance[i];
                --sum;
            }
        }
    }
    for (const std::size_t i : involved) {
        plan.balances.emplace_back(cluster.nodes()[i].id, balance[i]);
    }
    std::vector<std::size_t> sorted = involved;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](std::size_t a, std::size_t b) { return balance[a] < balance[b]; });
    std::size_t dst = 0;
    std::size_t src = sorted.size() - 1;
    while (dst < src) {
        const std::size_t d = sorted[dst];
        const std::size_t s = sorted[src];
        const std::int64_t db = balance[d] < 0 ? -balance[d] : balance[d];
        const std::int64_t sb = balance[s] < 0 ? -balance[s] : balance[s];
        const std::int64_t count = std::min(db, sb);
        if (count > 0) {
            redis_slot_move m{cluster.nodes()[s].id, cluster.nodes()[d].id, {}};
            const auto k = static_cast<std::size_t>(count);
            m.slots.assign(slots[s].begin(), slots[s].begin() + static_cast<std::ptrdiff_t>(k));
            slots[s].erase(slots[s].begin(), slots[s].begin() + static_cast<std::ptrdiff_t>(k));
            slots[d].insert(slots[d].end(), m.slots.begin(), m.slots.end());
            std::sort(slots[d].begin(), slots[d].end());
            plan.moves.push_back(std::move(m));
        }
        balance[d] += count;
        balance[s] -= count;
        dst += balance[d] == 0 ? 1 : 0;
        src -= balance[s] == 0 ? 1 : 0;
    }
    return plan;
}
[[nodiscard]] inline auto redis_rebalance(const redis_cluster& cluster, const redis_rebalance_options& options = {})
    -> redis_rebalance_plan {
    return redis_rebalance(cluster, std::span<const std::string>{}, options);
}

/// The cluster after the plan's moves: the same masters, the moved slots at their new owners.
/// Throws keyplace::error (unknown_id) when a move names a non-member, (invalid_argument) when
/// it moves a slot its source does not hold at that point.
[[nodiscard]] inline auto redis_apply(const redis_cluster& cluster, const redis_rebalance_plan& plan) -> redis_cluster {
    std::vector<std::uint32_t> owner(redis_slot_count);
    for (std::size_t s = 0; s < redis_slot_count; ++s) {
        owner[s] = cluster.pick(s).value;
    }
    for (const auto& m : plan.moves) {
        const auto from = cluster.find(m.from);
        const auto to = cluster.find(m.to);
        if (!from || !to) {
            detail::raise(detail::fail(errc::unknown_id, "a move names " + detail::quote(from ? m.to : m.from) +
                                                             ", which is not a member"));
        }
        for (const std::uint16_t s : m.slots) {
            if (s >= redis_slot_count || owner[s] != from->value) {
                detail::raise(detail::fail(errc::invalid_argument, "slot " + std::to_string(s) + " is not held by " +
                                                                       detail::quote(m.from) + " when it moves"));
            }
            owner[s] = to->value;
        }
    }
    std::vector<slot_range> ranges;
    for (std::size_t s = 0; s < redis_slot_count; ++s) {
        if (!ranges.empty() && ranges.back().last + 1U == s && cluster.nodes()[owner[s]].id == ranges.back().node_id) {
            ranges.back().last = static_cast<std::uint16_t>(s);
        } else {
            ranges.push_back({static_cast<std::uint16_t>(s), static_cast<std::uint16_t>(s), cluster.nodes()[owner[s]].id});
        }
    }
    return redis_cluster::build(cluster.nodes(), ranges);
}

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
