// keyplace — which node owns a key. Fixed equal partitions with minimal moves: Q = 2^k partitions
// of the hash space by the top bits of a point, each held by n ranked replicas, claimed to integer
// quotas and moved only from nodes over quota to nodes under it (Dynamo's strategy 3, DeCandia et
// al., SOSP 2007; Riak core's claim; the OpenStack Swift ring builder).
#ifndef KEYPLACE_PARTITIONS_HPP_INCLUDED
#define KEYPLACE_PARTITIONS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/detail/weight.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/failure_domain.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

struct partitions_config {
    /// Q: a power of two, 1 .. max_partitions.
    std::uint32_t partitions = 1024;
    /// n: replicas of every partition, 1 .. max_partition_replicas and at most the node count.
    std::uint32_t replicas = 1;
    /// Replicas of one partition go to distinct domains of this level where the topology allows.
    failure_domain spread = failure_domain::node;
    /// The claim rules (basic_partitions): 2, every domain from the spread level down to racks
    /// holds at most ceil(T_d / Q) replicas of a partition for its slot quota T_d; 1, the rules
    /// of keyplace 0.2's first release (documents that state no contract), kept bit for bit.
    std::uint32_t contract = 2;

    friend auto operator==(const partitions_config&, const partitions_config&) -> bool = default;
};

inline constexpr std::uint32_t max_partitions = std::uint32_t{1} << 20;
inline constexpr std::uint32_t max_partition_replicas = 64;
/// The partitions claim contracts this library implements.
inline constexpr std::uint32_t min_partitions_contract = 1;
inline constexpr std::uint32_t max_partitions_contract = 2;

namespace detail {

inline constexpr std::uint32_t vacant_slot = 0xffffffffU;

/// Splits `left` slots among entities by weight (the contract's quotas: see basic_partitions):
/// each gets the floor or the ceiling of its share left * w_i / total_weight, or cap[i] where the
/// share exceeds it (water-filling). have[i] is what entity i holds now.
template <class Tag>
[[nodiscard]] auto split_slots(std::span<const std::uint64_t> weight, std::span<const std::uint32_t> have,
                               std::span<const std::uint32_t> cap, std::uint64_t left, std::uint64_t total_weight)
    -> lazy_vector<std::uint32_t, Tag> {
    const std::size_t count = weight.size();
    lazy_vector<std::uint32_t, Tag> quota(count, 0);
    lazy_vector<bool, Tag> capped(count, false);
    std::uint64_t w = total_weight;  // the weight of the entities not capped; left: their slots
    // Water-filling: a share above its cap is capped, which only raises the others' shares, so
    // the capped set is the same whatever the order entities are looked at.
    for (bool again = true; again;) {
        again = false;
        for (std::size_t i = 0; i < count; ++i) {
            if (!capped[i] && product_less(cap[i], w, left, weight[i])) {
                capped[i] = true;
                quota[i] = cap[i];
                left -= cap[i];
                w -= weight[i];
                again = true;
            }
        }
    }
    lazy_vector<std::uint64_t, Tag> remainder(count, 0);
    lazy_vector<std::uint32_t, Tag> fractional;
    std::uint64_t given = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (capped[i]) {
            continue;
        }
        const u128 share = mul_wide(left, weight[i]);  // share / w slots, exactly
        const std::uint64_t floor = div_floor(share, w);
        remainder[i] = share.lo - floor * w;  // < w < 2^64, so the low words give it exactly
        quota[i] = static_cast<std::uint32_t>(floor);
        given += floor;
        if (remainder[i] != 0) {
            fractional.push_back(static_cast<std::uint32_t>(i));
        }
    }
    // The ceilings: first to entities holding more than their floor (each such ceiling saves a
    // move), then by larger remainder, then by index.
    std::sort(fractional.begin(), fractional.end(), [&](std::uint32_t a, std::uint32_t b) {
        const bool keep_a = have[a] > quota[a];
        const bool keep_b = have[b] > quota[b];
        if (keep_a != keep_b) {
            return keep_a;
        }
        return remainder[a] != remainder[b] ? remainder[a] > remainder[b] : a < b;
    });
    for (std::uint64_t k = 0; k < left - given; ++k) {
        ++quota[fractional[static_cast<std::size_t>(k)]];
    }
    return quota;
}

/// Node slot quotas, contract 1 (see basic_partitions): Q * n slots split over the nodes, each
/// capped at Q.
template <class Tag>
[[nodiscard]] auto partition_quotas(std::span<const std::uint64_t> weight, std::span<const std::uint32_t> have,
                                    std::uint32_t q, std::uint32_t n, std::uint64_t total_weight)
    -> lazy_vector<std::uint32_t, Tag> {
    const lazy_vector<std::uint32_t, Tag> cap(weight.size(), q);
    return split_slots<Tag>(weight, have, cap, std::uint64_t{q} * n, total_weight);
}

/// The failure-domain levels of contract 2, coarsest (the spread level) first, down to racks:
/// dom[l][i] is node i's domain at level l, domains[l] how many there are.
template <class Tag>
struct partition_levels {
    lazy_vector<lazy_vector<std::uint32_t, Tag>, Tag> dom;
    lazy_vector<std::uint32_t, Tag> domains;
    /// Filled by level_quotas: limit[l][d], the most replicas of one partition domain d of level l
    /// may hold, ceil(T_d / Q) for its slot quota T_d.
    lazy_vector<lazy_vector<std::uint32_t, Tag>, Tag> limit;
};

/// Node slot quotas, contract 2: Q * n slots split over the domains of the coarsest level by
/// weight, each domain's over its subdomains of the next level, ..., the last level's over its
/// nodes, each entity capped at Q times its node count; fills levels.limit. With no level it
/// is partition_quotas.
template <class Tag>
[[nodiscard]] auto level_quotas(std::span<const std::uint64_t> weight, std::span<const std::uint32_t> have,
                                std::uint32_t q, std::uint32_t n, partition_levels<Tag>& levels) -> lazy_vector<std::uint32_t, Tag> {
    using u32s = lazy_vector<std::uint32_t, Tag>;
    const std::size_t count = weight.size();
    const std::size_t depth = levels.dom.size();
    u32s parent_quota(1, q * n);  // the root's slots: Q n <= 2^26
    u32s parent(count, 0);        // each node's entity at the level above
    levels.limit.assign(depth, u32s{});
    for (std::size_t l = 0; l <= depth; ++l) {
        // The entities of this level: its domains, or (l == depth) the nodes.
        const bool nodes = l == depth;
        const std::size_t m = nodes ? count : levels.domains[l];
        lazy_vector<std::uint64_t, Tag> w(m, 0);
        u32s held(m, 0);
        u32s cap(m, 0);
        u32s up(m, 0);
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint32_t e = nodes ? static_cast<std::uint32_t>(i) : levels.dom[l][i];
            w[e] += weight[i];
            held[e] += have[i];
            cap[e] = std::min(cap[e] + q, q * n);  // Q a node, and no entity needs more than Q n
            up[e] = parent[i];
        }
        u32s quota(m, 0);
        for (std::uint32_t g = 0; g < parent_quota.size(); ++g) {
            u32s members;
            for (std::uint32_t e = 0; e < m; ++e) {
                if (up[e] == g) {
                    members.push_back(e);
                }
            }
            lazy_vector<std::uint64_t, Tag> gw(members.size());
            u32s gh(members.size());
            u32s gc(members.size());
            std::uint64_t total = 0;
            for (std::size_t j = 0; j < members.size(); ++j) {
                gw[j] = w[members[j]];
                gh[j] = held[members[j]];
                gc[j] = cap[members[j]];
                total += gw[j];
            }
            const auto part = split_slots<Tag>(gw, gh, gc, parent_quota[g], total);
            for (std::size_t j = 0; j < members.size(); ++j) {
                quota[members[j]] = part[j];
            }
        }
        if (nodes) {
            return quota;
        }
        levels.limit[l].resize(m);
        for (std::size_t d = 0; d < m; ++d) {
            levels.limit[l][d] = (quota[d] + q - 1) / q;
        }
        for (std::size_t i = 0; i < count; ++i) {
            parent[i] = levels.dom[l][i];
        }
        parent_quota = std::move(quota);
    }
    return {};
}

/// Brings a table to its quotas (the claim rules: see basic_partitions). slots[p * n + r] is the
/// node of partition p at rank r, or vacant_slot; no partition names a node twice. dom[i] is node
/// i's domain, 0 .. domains - 1.
template <class Tag>
class partition_claim {
    template <class T>
    using vec = lazy_vector<T, Tag>;
    using order = std::set<std::pair<std::int64_t, std::uint32_t>>;  // (-deficit, id): largest first

public:
    /// levels: contract 2's limits (nullptr: contract 1, at most one replica of a partition in a
    /// domain where every domain's quota allows it).
    partition_claim(std::uint32_t q, std::uint32_t n, vec<std::uint32_t>& slots, std::span<const std::uint32_t> quota,
                    std::span<const std::uint32_t> owner_quota, std::span<const std::uint32_t> dom,
                    std::uint32_t domains, const partition_levels<Tag>* levels = nullptr)
        : q_(q), n_(n), slots_(slots), dom_(dom), levels_(levels), owner_quota_(owner_quota), donor_(slots.size(), vacant_slot),
          fresh_(levels != nullptr ? slots.size() : 0, false),
          owned_(quota.size(), 0), deficit_(quota.size(), 0), dom_deficit_(domains, 0), members_(domains) {
        vec<std::uint64_t> dom_total(domains, 0);
        for (std::size_t i = 0; i < quota.size(); ++i) {
            dom_total[dom[i]] += quota[i];
        }
        strict_ = levels_ != nullptr ||
                  std::all_of(dom_total.begin(), dom_total.end(), [q](std::uint64_t t) { return t <= q; });
        release(quota, owner_quota);
        for (std::size_t i = 0; i < quota.size(); ++i) {
            deficit_[i] += static_cast<std::int64_t>(quota[i]);
        }
        for (std::size_t k = 0; k < slots_.size(); ++k) {
            if (slots_[k] != vacant_slot) {
                --deficit_[slots_[k]];
                owned_[slots_[k]] += k % n_ == 0 ? 1U : 0U;
            }
        }
        for (std::uint32_t i = 0; i < quota.size(); ++i) {
            if (deficit_[i] > 0) {
                dom_deficit_[dom[i]] += deficit_[i];
                members_[dom[i]].emplace(-deficit_[i], i);
            }
        }
        for (std::uint32_t d = 0; d < domains; ++d) {
            if (dom_deficit_[d] > 0) {
                domains_.emplace(-dom_deficit_[d], d);
            }
        }
        fill();
    }

private:
    [[nodiscard]] auto has_node(std::size_t p, std::uint32_t node) const noexcept -> bool {
        for (std::size_t k = p * n_; k < (p + 1) * n_; ++k) {
            if (slots_[k] == node) {
                return true;
            }
        }
        return false;
    }
    // Whether a replica of partition p other than the one at `except` is in domain d.
    [[nodiscard]] auto has_domain(std::size_t p, std::uint32_t d, std::size_t except) const noexcept -> bool {
        for (std::size_t k = p * n_; k < (p + 1) * n_; ++k) {
            if (k != except && slots_[k] != vacant_slot && dom_[slots_[k]] == d) {
                return true;
            }
        }
        return false;
    }

    // Whether node i in partition p (the slot at `except` not counted) would break the spread:
    // contract 1, share a domain with another replica; contract 2, go over a domain's limit at
    // some level.
    [[nodiscard]] auto crowds(std::size_t p, std::uint32_t i, std::size_t except) const noexcept -> bool {
        if (levels_ == nullptr) {
            return has_domain(p, dom_[i], except);
        }
        return over_limit(p, i, except, (p + 1) * n_);
    }
    // Contract 2: whether the replicas of partition p in slots before `end` (except `except`)
    // already fill node i's domain's limit at some level.
    [[nodiscard]] auto over_limit(std::size_t p, std::uint32_t i, std::size_t except, std::size_t end) const noexcept
        -> bool {
        for (std::size_t l = 0; l < levels_->dom.size(); ++l) {
            const auto& dom = levels_->dom[l];
            std::uint32_t in = 0;
            for (std::size_t k = p * n_; k < end; ++k) {
                in += k != except && slots_[k] != vacant_slot && dom[slots_[k]] == dom[i] ? 1U : 0U;
            }
            if (in >= levels_->limit[l][dom[i]]) {
                return true;
            }
        }
        return false;
    }

    // A donor over quota gives up its surplus: first the slots whose partition holds another
    // replica in the same domain, then its highest-numbered partitions; with n > 1, first as owner
    // (rank 0) as far as it owns more than its owner quota, then at other ranks. With
    // the spread attainable, every later replica in a domain that an earlier rank of the same
    // partition holds leaves too (repairing what an earlier, unattainable topology left).
    void release(std::span<const std::uint32_t> quota, std::span<const std::uint32_t> owner_quota) {
        vec<vec<std::uint32_t>> held(quota.size());  // slot numbers: Q n <= 2^26
        vec<bool> crowded(slots_.size(), false);
        vec<bool> over(levels_ != nullptr ? slots_.size() : 0, false);
        vec<std::uint32_t> owned(quota.size(), 0);
        vec<bool> vacated(q_, false);
        for (std::size_t k = slots_.size(); k-- > 0;) {
            vacated[k / n_] = vacated[k / n_] || slots_[k] == vacant_slot;
            if (slots_[k] != vacant_slot) {
                held[slots_[k]].push_back(static_cast<std::uint32_t>(k));
                crowded[k] = has_domain(k / n_, dom_[slots_[k]], k);
                if (levels_ != nullptr) {
                    over[k] = crowds(k / n_, slots_[k], k);
                }
                owned[slots_[k]] += k % n_ == 0 ? 1U : 0U;
            }
        }
        for (std::size_t i = 0; i < quota.size(); ++i) {
            auto& mine = held[i];
            if (mine.size() <= quota[i]) {
                continue;
            }
            if (!owner_quota.empty()) {
                // Owner slots beyond the owner quota, then the other ranks, then the rest.
                std::uint32_t extra = owned[i] > owner_quota[i] ? owned[i] - owner_quota[i] : 0;
                vec<std::uint8_t> group(mine.size(), 0);
                for (std::size_t j = 0; j < mine.size(); ++j) {
                    const bool owner = mine[j] % n_ == 0;
                    group[j] = owner && extra > 0 ? 0 : owner ? 2 : 1;
                    extra -= group[j] == 0 ? 1U : 0U;
                }
                vec<std::uint32_t> sorted;
                for (std::uint8_t g = 0; g < 3; ++g) {
                    for (std::size_t j = 0; j < mine.size(); ++j) {
                        if (group[j] == g) {
                            sorted.push_back(mine[j]);
                        }
                    }
                }
                mine = std::move(sorted);
            }
            if (levels_ != nullptr) {
                // Contract 2: slots over a domain's limit, then slots sharing a domain, then the
                // rest, each in partitions without a vacancy first.
                const auto rank = [&](std::size_t k) {
                    return over[k] ? 0 : (vacated[k / n_] ? 3 : 1) + (crowded[k] ? 0 : 1);
                };
                std::stable_sort(mine.begin(), mine.end(),
                                 [&](std::uint32_t a, std::uint32_t b) { return rank(a) < rank(b); });
            } else {
                std::stable_partition(mine.begin(), mine.end(), [&](std::size_t k) { return crowded[k]; });
                // A partition that already has a vacancy comes last: one receiver can fill only one
                // vacancy of a partition.
                std::stable_partition(mine.begin(), mine.end(),
                                      [&](std::size_t k) { return crowded[k] || !vacated[k / n_]; });
            }
            for (std::size_t j = 0; j < mine.size() - quota[i]; ++j) {
                slots_[mine[j]] = vacant_slot;
                donor_[mine[j]] = static_cast<std::uint32_t>(i);
                vacated[mine[j] / n_] = true;
            }
        }
        if (levels_ != nullptr) {
            level_vacancies(held, crowded);
        }
        if (!strict_) {
            return;
        }
        for (std::size_t k = 0; k < slots_.size(); ++k) {
            if (levels_ != nullptr) {
                // Contract 2: a replica over its domain's limit counting the earlier ranks leaves.
                if (slots_[k] != vacant_slot && over_limit(k / n_, slots_[k], k, k)) {
                    slots_[k] = vacant_slot;
                }
                continue;
            }
            if (slots_[k] != vacant_slot && has_domain(k / n_, dom_[slots_[k]], k)) {
                const std::size_t first = k / n_ * n_;
                bool earlier = false;
                for (std::size_t e = first; e < k; ++e) {
                    earlier = earlier || (slots_[e] != vacant_slot && dom_[slots_[e]] == dom_[slots_[k]]);
                }
                if (earlier) {
                    slots_[k] = vacant_slot;
                }
            }
        }
    }

    // Contract 2: a partition holding two vacancies more than another reachable one passes one on.
    // Breadth first from it (partitions ascending): a donor that gave up a slot of a partition
    // on the way, not one sharing a domain, keeps it and gives up instead a slot of its own in
    // the next partition, until one holding at most v - 2 vacancies (v the first one's). Fewer
    // vacancies in one partition leave the receivers more ways to fill them without a swap.
    void level_vacancies(const vec<vec<std::uint32_t>>& held, const vec<bool>& crowded) {
        vec<std::uint32_t> vacancies(q_, 0);
        for (std::size_t k = 0; k < slots_.size(); ++k) {
            vacancies[k / n_] += slots_[k] == vacant_slot ? 1U : 0U;
        }
        constexpr std::size_t none = ~std::size_t{0};
        for (std::size_t p = 0; p < q_; ++p) {
            while (vacancies[p] >= 2) {
                // via[y]: the slot given up in the partition before and the slot given up in y.
                vec<std::pair<std::size_t, std::size_t>> via(q_, {none, none});
                vec<std::size_t> queue{p};
                via[p] = {p, p};
                std::size_t found = none;
                for (std::size_t head = 0; head < queue.size() && found == none; ++head) {
                    const std::size_t x = queue[head];
                    for (std::size_t kx = x * n_; kx < (x + 1) * n_ && found == none; ++kx) {
                        const std::uint32_t d = donor_[kx];
                        if (slots_[kx] != vacant_slot || d == vacant_slot || crowded[kx]) {
                            continue;
                        }
                        for (const std::uint32_t ky : held[d]) {
                            const std::size_t y = ky / n_;
                            if (slots_[ky] != d || via[y].first != none || has_node(x, d)) {
                                continue;
                            }
                            via[y] = {kx, ky};
                            queue.push_back(y);
                            if (vacancies[y] + 2 <= vacancies[p]) {
                                found = y;
                                break;
                            }
                        }
                    }
                }
                if (found == none) {
                    break;
                }
                --vacancies[p];
                ++vacancies[found];
                for (std::size_t y = found; y != p;) {
                    const auto [kx, ky] = via[y];
                    slots_[kx] = donor_[kx];  // the donor keeps this one
                    donor_[ky] = donor_[kx];
                    donor_[kx] = vacant_slot;
                    slots_[ky] = vacant_slot;
                    y = kx / n_;
                }
            }
        }
    }

    // Writes a slot, counting owners; `fresh`: a new copy (no data there yet), which contract 2
    // may still reroute.
    void put(std::size_t k, std::uint32_t i, bool fresh = true) {
        if (levels_ != nullptr) {
            fresh_[k] = fresh;
        }
        if (k % n_ == 0) {
            if (slots_[k] != vacant_slot) {
                --owned_[slots_[k]];
            }
            ++owned_[i];
        }
        slots_[k] = i;
    }

    void take(std::uint32_t i) {
        const std::uint32_t d = dom_[i];
        members_[d].erase({-deficit_[i], i});
        domains_.erase({-dom_deficit_[d], d});
        --deficit_[i];
        --dom_deficit_[d];
        if (deficit_[i] > 0) {
            members_[d].emplace(-deficit_[i], i);
        }
        if (dom_deficit_[d] > 0) {
            domains_.emplace(-dom_deficit_[d], d);
        }
    }

    // Receivers in order: the domain furthest under quota (ties by domain number), within it the
    // node furthest under quota (ties by node index). visit(i) returns whether it took i.
    template <class Visit>
    auto each_receiver(Visit&& visit) const -> bool {
        for (const auto& [neg, d] : domains_) {
            for (const auto& [neg_node, i] : members_[d]) {
                if (visit(i)) {
                    return true;
                }
            }
        }
        return false;
    }

    // The first receiver that want() accepts and that may hold slot k (whose holder, if any, is
    // leaving it): not in its partition, and with `spread` not in a domain the partition holds.
    template <class Want>
    [[nodiscard]] auto first_fit(std::size_t k, bool spread, Want&& want) const -> std::uint32_t {
        const std::size_t p = k / n_;
        std::uint32_t found = vacant_slot;
        // Contract 2 spreads as widely as the limits allow: first a domain the partition does not
        // hold, then any under its limit.
        // Among receivers tied with the first that fits (same domain, same deficit), contract 2
        // takes the first at or after (p mod N) in index order, so that equal nodes do not pair in
        // lockstep (replica sets diverse: more ways to move later).
        const auto count = static_cast<std::uint32_t>(deficit_.size());
        const auto key = [&](std::uint32_t i) { return (i + count - static_cast<std::uint32_t>(p % count)) % count; };
        for (int pass = spread && levels_ != nullptr ? 0 : 1; pass < 2 && found == vacant_slot; ++pass) {
            each_receiver([&](std::uint32_t i) {
                if (found != vacant_slot && (dom_[i] != dom_[found] || deficit_[i] != deficit_[found])) {
                    return true;
                }
                if (!want(i) || has_node(p, i) || (spread && crowds(p, i, k)) ||
                    (pass == 0 && has_domain(p, dom_[i], k))) {
                    return false;
                }
                if (found == vacant_slot || key(i) < key(found)) {
                    found = i;
                }
                return levels_ == nullptr;
            });
        }
        return found;
    }

    // The vacancy at k goes to the first receiver that may hold it: not in the partition, and
    // with `spread` not in a domain the partition holds. With n > 1 first to a receiver that
    // needs a slot of that kind: an owner slot to one under its owner quota, another to one that
    // needs more slots than owners.
    auto direct(std::size_t k, bool spread) -> bool {
        const bool owner = k % n_ == 0;
        const auto fits = [&](std::uint32_t i) {
            const std::int64_t owners_short =
                owned_[i] < owner_quota_[i] ? std::int64_t{owner_quota_[i]} - std::int64_t{owned_[i]} : 0;
            return owner ? owners_short > 0 : deficit_[i] > owners_short;
        };
        for (int pass = owner_quota_.empty() ? 1 : 0; pass < 2; ++pass) {
            const std::uint32_t i = first_fit(k, spread, [&](std::uint32_t c) { return pass == 1 || fits(c); });
            if (i != vacant_slot) {
                put(k, i);
                take(i);
                return true;
            }
        }
        return false;
    }

    // An owner vacancy goes first to the partition's first later replica under its owner quota,
    // which holds the data already; the vacancy moves to that replica's rank. Returns the vacancy.
    auto promote(std::size_t k) -> std::size_t {
        if (k % n_ != 0 || owner_quota_.empty()) {
            return k;
        }
        for (std::size_t k2 = k + 1; k2 < k + n_; ++k2) {
            const std::uint32_t y = slots_[k2];
            if (y != vacant_slot && owned_[y] < owner_quota_[y]) {
                put(k, y, levels_ != nullptr && fresh_[k2]);
                slots_[k2] = vacant_slot;
                return k2;
            }
        }
        return k;
    }

    // No receiver fits partition p, which a donor D gave up as surplus: D keeps it and gives
    // instead its highest-numbered slot that the first fitting receiver can take. One move, as the
    // minimum counts it.
    auto redirect(std::size_t k, bool spread) -> bool {
        const std::uint32_t d = donor_[k];
        if (d == vacant_slot || has_node(k / n_, d) || (spread && crowds(k / n_, d, k))) {
            return false;
        }
        // Slots of the same kind (owner or not) first, so owners move as the donor chose.
        for (std::size_t pass = 0, k2 = slots_.size(); pass < 2; ++pass, k2 = slots_.size())
        while (k2-- > 0) {
            if (slots_[k2] != d || ((k2 % n_ == 0) == (k % n_ == 0)) == (pass == 1)) {
                continue;
            }
            const std::uint32_t i = first_fit(k2, spread, [](std::uint32_t) { return true; });
            if (i != vacant_slot) {
                put(k, d, false);
                put(k2, i);
                take(i);
                return true;
            }
        }
        return false;
    }

    // Contract 2: no receiver fits slot k. The shortest chain (breadth first, slots ascending) of
    // slots, each in another partition, whose holders each move one step back along it (the first
    // to k) so that the first receiver that fits the last slot takes it. A step takes either a copy
    // this claim placed (not made yet) — from another partition, or from the same one (a change
    // of rank) — or, where the slot before was given up by a donor that may hold it again, any
    // other slot of that donor (it keeps the one it had instead: a redirect). No move more than
    // the minimum either way. With `any`, a step may also move a replica from another partition
    // (one move more each): the last resort that keeps the limits.
    auto reroute(std::size_t k, bool any) -> bool {
        const std::size_t none = slots_.size();
        vec<std::size_t> from(slots_.size(), none);  // breadth-first parents; none: unseen
        vec<std::size_t> queue{k};
        from[k] = k;
        // The slot whose holder leaves the partition when a hole is filled: the hole itself, or
        // after changes of rank the slot the chain entered the partition at.
        vec<std::size_t> leaving(slots_.size(), none);
        leaving[k] = k;
        const auto on_path = [&](std::size_t s, std::size_t p) {
            for (;; s = from[s]) {
                if (s / n_ == p) {
                    return true;
                }
                if (from[s] == s) {
                    return false;
                }
            }
        };
        for (std::size_t head = 0; head < queue.size(); ++head) {
            const std::size_t s = queue[head];
            const std::size_t ps = s / n_;
            const std::size_t out = leaving[s];
            const std::uint32_t r = s == k ? vacant_slot : first_fit(out, true, [](std::uint32_t) { return true; });
            if (r != vacant_slot) {
                vec<std::size_t> path{s};
                while (from[path.back()] != path.back()) {
                    path.push_back(from[path.back()]);
                }
                for (std::size_t j = path.size() - 1; j > 0; --j) {  // each holder one step back
                    const std::size_t at = path[j - 1];
                    // A copy (new where it lands) unless a donor takes its own slot back; a rank
                    // change keeps what it was.
                    const bool rank_change = at / n_ == path[j] / n_;
                    const bool keeps = !rank_change && !fresh_[at] && slots_[at] == donor_[path[j]];
                    put(path[j], slots_[at], rank_change ? fresh_[at] : !keeps);
                }
                put(s, r);
                take(r);
                return true;
            }
            std::uint32_t d = donor_[s];
            if (d != vacant_slot && (has_node(ps, d) || crowds(ps, d, out))) {
                d = vacant_slot;
            }
            for (std::size_t k2 = 0; k2 < slots_.size(); ++k2) {
                const std::uint32_t y = slots_[k2];
                if (from[k2] != none || y == vacant_slot) {
                    continue;
                }
                const bool moves = fresh_[k2] || (any && y != d);
                if (k2 / n_ == ps ? !(fresh_[k2] || any)
                                  : (moves ? has_node(ps, y) || crowds(ps, y, out) : y != d) || on_path(s, k2 / n_)) {
                    continue;
                }
                leaving[k2] = k2 / n_ == ps ? out : k2;
                from[k2] = s;
                queue.push_back(k2);
            }
        }
        return false;
    }

    // No receiver fits partition p: the first receiver R, the lowest-numbered partition p2 and
    // its lowest rank (of the same kind as k's, owner or not, first) holding a node X such that X
    // may move to p and R may take X's place in p2. Two moves where one would do, the price of
    // keeping replicas apart.
    auto swap(std::size_t k, bool spread) -> bool {
        const std::size_t p = k / n_;
        return each_receiver([&](std::uint32_t r) {
            for (std::size_t pass = 0, p2 = 0; pass < 2; ++pass, p2 = 0)
            for (; p2 < q_; ++p2) {
                if (p2 == p || has_node(p2, r)) {
                    continue;
                }
                for (std::size_t k2 = p2 * n_; k2 < (p2 + 1) * n_; ++k2) {
                    const std::uint32_t x = slots_[k2];
                    if (((k2 % n_ == 0) == (k % n_ == 0)) == (pass == 1) || x == vacant_slot || has_node(p, x) ||
                        (spread && (crowds(p, x, k) || crowds(p2, r, k2)))) {
                        continue;
                    }
                    put(k, x);
                    put(k2, r);
                    take(r);
                    return true;
                }
            }
            return false;
        });
    }

    // Vacancies in slot order. Spread first where attainable (a direct fill, then a swap), else
    // best effort (a direct fill); then distinct nodes only. A vacancy none of these can fill
    // waits for the next pass: some other one can always be filled (a receiver is under a quota
    // of at most Q, so it misses a partition; a full one offers a swap, one with a vacancy a
    // direct fill), so every pass makes progress.
    void fill() {
        vec<std::uint32_t> pending;  // slot numbers: Q n <= 2^26
        for (std::size_t k = 0; k < slots_.size(); ++k) {
            if (slots_[k] == vacant_slot) {
                pending.push_back(static_cast<std::uint32_t>(k));
            }
        }
        if (levels_ != nullptr && pending.size() == slots_.size()) {
            // Contract 2, a fresh table: rank by rank, so that the receivers' cycles meet the
            // partitions at other phases on every rank (diverse replica sets).
            std::stable_sort(pending.begin(), pending.end(),
                             [this](std::uint32_t a, std::uint32_t b) { return a % n_ < b % n_; });
        }
        while (!pending.empty()) {
            vec<std::uint32_t> later;
            for (const std::uint32_t vacancy : pending) {
                const std::size_t k = promote(vacancy);
                const bool placed = direct(k, true) ||
                                    (strict_ && ((levels_ != nullptr && reroute(k, false)) || redirect(k, true) ||
                                                 swap(k, true) || (levels_ != nullptr && reroute(k, true)))) ||
                                    direct(k, false) || redirect(k, false) || swap(k, false);
                if (!placed) {
                    later.push_back(static_cast<std::uint32_t>(k));
                }
            }
            KEYPLACE_ASSERT(later.size() < pending.size());
            if (later.size() == pending.size()) {
                break;
            }
            pending = std::move(later);
        }
    }

    std::uint32_t q_;
    std::uint32_t n_;
    vec<std::uint32_t>& slots_;
    std::span<const std::uint32_t> dom_;
    const partition_levels<Tag>* levels_;
    std::span<const std::uint32_t> owner_quota_;  // empty when n = 1
    vec<std::uint32_t> donor_;  // who gave up a vacancy as surplus (vacant_slot: departed or repaired)
    vec<bool> fresh_;           // contract 2: a copy this claim placed
    bool strict_ = true;
    vec<std::uint32_t> owned_;  // owner slots per node
    vec<std::int64_t> deficit_;
    vec<std::int64_t> dom_deficit_;
    order domains_;
    vec<order> members_;
};

/// Rank 0 is the owner pick() returns, so with n > 1 owners get quotas of their own: Q * w_i / W,
/// by the same rounding. Ranks are swapped within partitions (replica sets stay, no data moves):
/// a pass in partition order gives rank 0 of a node over its owner quota to the first later rank
/// held by a node under its own; then, while some node is still over, the shortest chain of such
/// swaps (breadth first from the nodes over quota in index order, partitions ascending, ranks
/// ascending) to a node under quota.
template <class Tag>
void balance_owners(lazy_vector<std::uint32_t, Tag>& slots, std::span<const std::uint64_t> weight,
                    std::uint64_t total_weight, std::uint32_t q, std::uint32_t n) {
    const std::size_t count = weight.size();
    lazy_vector<std::uint32_t, Tag> owned(count, 0);
    for (std::size_t p = 0; p < q; ++p) {
        ++owned[slots[p * n]];
    }
    const auto quota = partition_quotas<Tag>(weight, owned, q, 1, total_weight);
    for (std::size_t p = 0; p < q; ++p) {
        const std::uint32_t x = slots[p * n];
        for (std::size_t r = 1; r < n && owned[x] > quota[x]; ++r) {
            const std::uint32_t y = slots[p * n + r];
            if (owned[y] < quota[y]) {
                std::swap(slots[p * n], slots[p * n + r]);
                --owned[x];
                ++owned[y];
                break;
            }
        }
    }
    constexpr std::size_t none = ~std::size_t{0};
    lazy_vector<lazy_vector<std::uint32_t, Tag>, Tag> owns(count);  // partitions by owner
    for (std::uint32_t p = 0; p < q; ++p) {
        owns[slots[std::size_t{p} * n]].push_back(p);
    }
    lazy_vector<std::size_t, Tag> via(count, none);  // the slot whose rank swap reaches the node
    lazy_vector<std::uint32_t, Tag> queue;
    lazy_vector<bool, Tag> seen(count, false);
    for (;;) {
        for (const std::uint32_t i : queue) {
            seen[i] = false;
            via[i] = none;
        }
        queue.clear();
        for (std::uint32_t i = 0; i < count; ++i) {
            if (owned[i] > quota[i]) {
                queue.push_back(i);
                seen[i] = true;
            }
        }
        std::uint32_t sink = vacant_slot;
        for (std::size_t head = 0; head < queue.size() && sink == vacant_slot; ++head) {
            for (const std::uint32_t p : owns[queue[head]]) {
                for (std::size_t k = std::size_t{p} * n + 1; k < (std::size_t{p} + 1) * n && sink == vacant_slot; ++k) {
                    const std::uint32_t y = slots[k];
                    if (!seen[y]) {
                        seen[y] = true;
                        via[y] = k;
                        queue.push_back(y);
                        sink = owned[y] < quota[y] ? y : vacant_slot;
                    }
                }
                if (sink != vacant_slot) {
                    break;
                }
            }
        }
        if (sink == vacant_slot) {
            return;
        }
        ++owned[sink];
        for (std::uint32_t y = sink; via[y] != none;) {
            const std::size_t k = via[y];
            const auto p = static_cast<std::uint32_t>(k / n);
            const std::uint32_t x = slots[std::size_t{p} * n];
            std::swap(slots[std::size_t{p} * n], slots[k]);
            auto& from = owns[x];
            from.erase(std::find(from.begin(), from.end(), p));
            owns[y].push_back(p);
            y = x;
            if (via[y] == none) {
                --owned[y];
            }
        }
    }
}

}  // namespace detail

/// A node whose slots (owners: its rank-0 slots) differ from its quota (basic_partitions::off_quota).
struct partition_quota_gap {
    node_index node{};
    bool owners = false;
    std::uint32_t held = 0;
    std::uint32_t quota = 0;
};

/// Q equal partitions of the 64-bit hash space, each held by n ranked replicas. A point's
/// partition is its top log2(Q) bits, p = point >> (64 - log2 Q); pick(point) is the rank-0
/// replica of p; pick_n lists p's replicas in rank order, then the replicas of p + 1, p + 2, ...
/// (wrapping), a full preference walk. Partition p is the arc (p * S - 1, (p + 1) * S - 1] with
/// S = 2^64 / Q, which regions() reports, so analysis.hpp's ownership and movement are exact.
/// Nodes are sorted by id.
///
/// The table is the state. build() claims a fresh table; with(), without() and reweighted()
/// derive the next table from this one, moving as little as the rules allow, so a table reached
/// through a history generally differs from a fresh build of the same nodes: carry the table
/// (table(), from_table()) wherever a placement must be reproduced.
///
/// Claim rules (the contract):
///  - Quotas. There are Q * n replica slots; a node holds at most one slot of a partition, so at
///    most Q. Shares are Q * n * w_i / W over weights quantized as every strategy does (units
///    of 2^-16), in exact integer arithmetic. A node whose share exceeds Q gets exactly Q and
///    the rest is shared among the others by weight, repeatedly (water-filling: only when some
///    weight exceeds W / n). Every other node's quota is the floor or the ceiling of its share,
///    the quotas summing to Q * n; the ceilings go first to the nodes holding more than their
///    floor now (each saves a move), then to larger remainders, then by node index.
///  - Moves. A donor over quota gives up its surplus, Σ max(0, have - quota) slots in all (a
///    leaving node's slots count as surplus): first slots whose partition has another replica in
///    the same spread domain, then (n > 1) owner slots as far as it owns more than its owner
///    quota (below), then its other slots, each group highest-numbered partition first and
///    partitions already holding a vacancy last (donors in node order). Each vacancy, in slot
///    order (partition, then rank), goes to the receiver furthest under quota, in the spread
///    domain furthest under quota, that the partition does not hold (ties by domain, then node
///    index), and takes the vacancy's rank. With n = 1 this moves exactly the minimum.
///  - Owners (n > 1). Rank 0 is what pick() returns, so owners have quotas of their own,
///    Q * w_i / W rounded as above. An owner vacancy goes first to a later replica of the same
///    partition under its owner quota (promoted: it has the data; its old rank becomes the
///    vacancy), then to receivers under their owner quota; other vacancies first to receivers
///    that need more slots than owner slots. Then ranks are swapped within partitions until
///    every owner count meets its quota (see detail::balance_owners): replica sets stay, but
///    keys of those partitions change owner among nodes that hold them.
///  - Spread. Two replicas of a partition never share a node. With spread rack, zone or region,
///    they go to distinct domains whenever every domain's quota total is at most Q (which needs at
///    least n domains). A vacancy no receiver can take that way is solved by its donor giving
///    another slot instead (a redirect: still one move), else by a swap (a replica of another
///    partition moves in and the receiver takes its place: one move more than the minimum);
///    the same two steps keep nodes distinct. A replica sharing a domain with an earlier rank of
///    its partition is moved off (repairing a table from an earlier topology). When the spread
///    is not attainable it is best effort and only nodes are kept distinct; with fewer domains
///    than n, replicas are spread over nodes only. crowded() counts partitions with two replicas
///    in one domain. Slots moved / minimum over random histories of 3 replicas (measured in
///    tests/partitions_test.cpp, 20 seeds): at most 1.008 over nodes, 1.05 over 8 racks.
///  - Fresh build: the same claim from an empty table, which stripes: partition 0 rank 0 to the
///    node with the largest quota, and so on.
///
/// Those are contract 1 (partitions_config::contract = 1: what documents stating no contract
/// mean, kept bit for bit). Contract 2 (the default) is contract 1 with spread node; with spread
/// rack, zone or region it changes these rules:
///  - Quotas, by level: the Q * n slots are split over the domains of the spread level by weight
///    (floor or ceiling of each share, capped at Q a node, the ceilings as above), each domain's
///    over its subdomains one level finer, down to racks, and each rack's over its nodes. A
///    domain d with quota T_d holds at most ceil(T_d / Q) replicas of one partition (its limit:
///    ceil(n * w_d / W) where quotas are exact, Swift's ring builder's dispersion rule); the
///    limits always admit a table (Σ T_d = Q n and T_d <= Q * limit), so the spread is strict.
///  - Moves. A replica over a limit counting its partition's earlier ranks leaves (repair). A
///    donor gives up first slots over a limit, then slots sharing a spread domain with another
///    replica, then the rest, each group in partitions without a vacancy first, highest-numbered
///    first. Then a partition with two vacancies more than another reachable one passes one on
///    (level_vacancies: a donor keeps one slot and gives another). A fresh build fills rank by
///    rank. A vacancy goes first to a receiver in a domain the partition does not hold, then to
///    one under its limit (receivers in order as above; among those tied with the first, the
///    first at or after p mod N by index). A vacancy no receiver fits is filled by the shortest
///    chain of copies this claim placed, rank changes and donors keeping a slot (reroute: no move
///    more than the minimum), else by a swap, else by such a chain that may move replicas of
///    other partitions (one move more each), else best effort as contract 1.
///  - overcrowded() counts partitions over a limit: 0 after every claim measured but one (1
///    partition in 2 steps of 10 random histories of 150 steps over 4 zones of 3 racks, where
///    the chains found no placement: tests/partitions_test.cpp, zone_history).
///  Measured against Swift's ring builder (tests/swift_oracle.py): no partition over a limit
///  where Swift leaves none, no more partitions with two replicas in a zone, and no more
///  replica slots moved over each history of joins, leaves and weight changes.
///
/// build() throws keyplace::error: the node errors of every strategy; a contract other than 1
/// or 2 (invalid_argument, "partitions implements contract 1 to 2, not 3"); a partition count that is
/// not a power of two in 1 .. 2^20 (invalid_partition_count); a replica count of 0, above 64 or
/// above the node count (invalid_replica_count); an unknown spread level (invalid_argument); a
/// node without the location part of the spread level (missing_location); weights summing to
/// 2^48 or more (invalid_weight). A derivation that would break them throws the same and leaves
/// this value unchanged. Build O(Q n log N); a derivation O(Q n) plus O(log N) a moved slot;
/// a redirect, a swap or an owner chain searches the table, O(Q n) each.
template <class Unused = void>
class basic_partitions : public detail::lifecycle<basic_partitions<Unused>, keyplace::node, partitions_config,
                                                  detail::derivation::any, detail::node_order::by_id> {
    using lifecycle = detail::lifecycle<basic_partitions, keyplace::node, partitions_config, detail::derivation::any,
                                        detail::node_order::by_id>;
    friend lifecycle;
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;

public:
    using key_hash = xxh3;

    /// A value from an explicit table (a snapshot's): table[p * n + r] is the node of partition
    /// p at rank r, as an index into the nodes sorted by id. Throws as build() does, and
    /// errc::invalid_partition_table for a table of another size than Q * n, an index that is not
    /// a node, or a partition naming a node twice. Quotas and spread are not checked: the next
    /// derivation restores them.
    [[nodiscard]] static auto from_table(std::span<const keyplace::node> nodes, const partitions_config& config,
                                         std::span<const node_index> table) -> basic_partitions {
        basic_partitions d;
        return detail::value_or_raise(d.assign_table(nodes, config, table), std::move(d));
    }
    [[nodiscard]] static auto try_from_table(std::span<const keyplace::node> nodes, const partitions_config& config,
                                             std::span<const node_index> table, error_info& err)
        -> std::optional<basic_partitions> {
        basic_partitions d;
        return detail::report(d.assign_table(nodes, config, table), std::move(d), err);
    }

    /// A new value with node id's weight changed; this one is unchanged. Throws errc::unknown_id
    /// if id is not a member, and the weight errors of build().
    [[nodiscard]] auto reweighted(std::string_view id, double weight) const -> basic_partitions {
        basic_partitions d;
        return detail::value_or_raise(d.assign_reweighted(*this, id, weight), std::move(d));
    }
    [[nodiscard]] auto try_reweighted(std::string_view id, double weight, error_info& err) const
        -> std::optional<basic_partitions> {
        basic_partitions d;
        return detail::report(d.assign_reweighted(*this, id, weight), std::move(d), err);
    }

    /// A new value for another membership — any joins, leaves and weight changes at once —
    /// derived from this table by one claim, as with() and without() derive one change: with
    /// n = 1 it moves exactly the minimum for the whole change (a partition of a leaving node
    /// goes straight to a joining one, never through a third). Throws as build() does.
    [[nodiscard]] auto transitioned(std::span<const keyplace::node> members) const -> basic_partitions {
        basic_partitions d;
        return detail::value_or_raise(d.assign_transition(*this, members), std::move(d));
    }
    [[nodiscard]] auto try_transitioned(std::span<const keyplace::node> members, error_info& err) const
        -> std::optional<basic_partitions> {
        basic_partitions d;
        return detail::report(d.assign_transition(*this, members), std::move(d), err);
    }

    /// Q and n.
    [[nodiscard]] auto partition_count() const noexcept -> std::uint32_t { return this->config_.partitions; }
    [[nodiscard]] auto replica_count() const noexcept -> std::uint32_t { return this->config_.replicas; }
    /// The partition of a point: its top log2(Q) bits.
    [[nodiscard]] auto partition(std::uint64_t point) const noexcept -> std::uint32_t {
        return static_cast<std::uint32_t>((point >> 1U) >> (63U - bits_));  // two shifts: Q = 1 shifts by 64
    }
    /// The node of partition p < Q at rank r < n (rank 0 is the owner).
    [[nodiscard]] auto owner(std::uint32_t p, std::uint32_t r) const noexcept -> node_index {
        KEYPLACE_ASSERT(p < partition_count() && r < replica_count());
        return r == 0 ? owners_[p] : node_index{rest_[std::size_t{p} * (replica_count() - 1) + r - 1]};
    }
    /// The table as from_table() takes it: entry p * n + r is owner(p, r).
    [[nodiscard]] auto table() const -> std::vector<node_index> {
        std::vector<node_index> out;
        out.reserve(std::size_t{partition_count()} * replica_count());
        for (std::uint32_t p = 0; p < partition_count(); ++p) {
            for (std::uint32_t r = 0; r < replica_count(); ++r) {
                out.push_back(owner(p, r));
            }
        }
        return out;
    }
    /// Slots node i < size() holds, every rank counted.
    [[nodiscard]] auto slots(node_index i) const noexcept -> std::uint32_t {
        KEYPLACE_ASSERT(i.value < held_.size());
        return held_[i.value];
    }
    /// The node furthest from the slot quota its weight gives it (claim rules, "Quotas"; ties by
    /// index), else (n > 1) the one furthest from its owner quota ("Owners"), or nullopt when
    /// every node is at both. A table the claim made is at quota; one given to from_table() may
    /// not be (say, a weight changed without a derivation). O(Q n + N log N).
    [[nodiscard]] auto off_quota() const -> std::optional<partition_quota_gap> {
        prepared prep;
        (void)prepare(this->nodes_, this->config_, prep);  // valid: the value was built
        const auto& weight = prep.weight;
        lazy_vector<std::uint32_t> owned(this->nodes_.size(), 0);
        for (const node_index o : owners_) {
            ++owned[o.value];
        }
        const auto quota = slot_quotas(this->config_, prep, held_);
        const auto owner_quota = detail::partition_quotas<Unused>(weight, owned, partition_count(), 1, prep.total);
        std::optional<partition_quota_gap> worst;
        const auto gap = [](const partition_quota_gap& g) { return g.held > g.quota ? g.held - g.quota : g.quota - g.held; };
        for (const bool owners : {false, true}) {
            if (owners && (worst || replica_count() == 1)) {
                break;
            }
            for (std::uint32_t i = 0; i < weight.size(); ++i) {
                const partition_quota_gap g{node_index{i}, owners, owners ? owned[i] : held_[i],
                                            owners ? owner_quota[i] : quota[i]};
                if (g.held != g.quota && (!worst || gap(g) > gap(*worst))) {
                    worst = g;
                }
            }
        }
        return worst;
    }
    /// Partitions with two replicas in one domain of the spread level (0 unless the topology
    /// does not allow the spread, or the table came from from_table()).
    [[nodiscard]] auto crowded() const noexcept -> std::uint32_t { return crowded_; }
    /// Partitions with more replicas in one domain than its limit, at some level from the spread
    /// level down to racks: ceil(T_d / Q) replicas for a domain whose nodes hold T_d slots (with
    /// T_d <= Q, one). Contract 2 aims at 0 (the limits always admit a table; see "Contract 2"
    /// for the rare claim that falls back to best effort); contract 1 leaves some where a domain
    /// holds more than Q slots.
    [[nodiscard]] auto overcrowded() const noexcept -> std::uint32_t { return overcrowded_; }

    /// The owner of a hashed key: O(1), one table entry.
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index { return owners_[partition(point)]; }
    /// The first min(out.size(), holders()) distinct nodes of walk(point): the partition's
    /// replicas in rank order first.
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept -> std::size_t {
        return detail::collect_distinct(*this, point, out);
    }
    /// Visits the replicas of partition(point) in rank order, then those of the following
    /// partitions (wrapping), once around, until visit(node_index) returns false.
    template <class Visit>
    void walk(std::uint64_t point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        std::uint32_t p = partition(point);
        for (std::uint32_t step = 0; step < partition_count(); ++step) {
            for (std::uint32_t r = 0; r < replica_count(); ++r) {
                if (!visit(owner(p, r))) {
                    return;
                }
            }
            p = p + 1 == partition_count() ? 0 : p + 1;
        }
    }
    /// Nodes that hold a slot of any rank (the ones a walk visits; pick() returns only rank-0
    /// holders), and whether node i does.
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return holders_; }
    [[nodiscard]] auto holds(node_index i) const noexcept -> bool { return slots(i) != 0; }
    /// Partition p as the arc ending at (p + 1) * S - 1, owned by its rank-0 replica.
    [[nodiscard]] auto regions() const noexcept -> arc_regions<std::uint64_t> {
        return {*points_, owners_, lookup_rule::at_or_after};
    }
    /// Bytes of the table and the region points (the node list not counted).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return points_->capacity() * sizeof(std::uint64_t) + owners_.capacity() * sizeof(node_index) +
               rest_.capacity() * sizeof(std::uint32_t);
    }

private:
    basic_partitions() = default;

    // What the claim needs of a membership: quantized weights and spread domains.
    struct prepared {
        lazy_vector<std::uint64_t> weight;
        std::uint64_t total = 0;
        lazy_vector<std::uint32_t> dom;  // spread domains, or node indices with fewer than n domains
        std::uint32_t domains = 0;
        lazy_vector<std::uint32_t> real_dom;  // spread domains, for crowded()
        detail::partition_levels<Unused> levels;  // the spread level down to racks (for overcrowded())
    };

    // Contract 2 over racks, zones or regions (with spread node it is contract 1).
    static auto by_levels(const partitions_config& config, const prepared& prep) noexcept -> bool {
        return config.contract == 2 && !prep.levels.dom.empty();
    }

    // The nodes' slot quotas (claim rules, "Quotas"); fills prep.levels.limit under contract 2.
    static auto slot_quotas(const partitions_config& config, prepared& prep, std::span<const std::uint32_t> have)
        -> lazy_vector<std::uint32_t> {
        return by_levels(config, prep)
                   ? detail::level_quotas<Unused>(prep.weight, have, config.partitions, config.replicas, prep.levels)
                   : detail::partition_quotas<Unused>(prep.weight, have, config.partitions, config.replicas,
                                                      prep.total);
    }

    static auto prepare(std::span<const keyplace::node> sorted, const partitions_config& config, prepared& out)
        -> detail::failure {
        using detail::fail;
        const std::uint32_t q = config.partitions;
        if (q == 0 || q > max_partitions) {
            return fail(errc::invalid_partition_count,
                        "partition count " + std::to_string(q) + " is outside 1.." + std::to_string(max_partitions))
                .at("partitions");
        }
        if ((q & (q - 1)) != 0) {
            return fail(errc::invalid_partition_count, "partition count " + std::to_string(q) + " is not a power of two")
                .at("partitions");
        }
        if (config.replicas == 0 || config.replicas > max_partition_replicas) {
            return fail(errc::invalid_replica_count, "replica count " + std::to_string(config.replicas) +
                                                         " is outside 1.." + std::to_string(max_partition_replicas))
                .at("replicas");
        }
        if (config.replicas > sorted.size()) {
            return fail(errc::invalid_replica_count, "replica count " + std::to_string(config.replicas) +
                                                         " is more than the " + std::to_string(sorted.size()) +
                                                         " nodes")
                .at("replicas");
        }
        if (config.contract < min_partitions_contract || config.contract > max_partitions_contract) {
            return fail(errc::invalid_argument, "partitions implements contract " +
                                                    std::to_string(min_partitions_contract) + " to " +
                                                    std::to_string(max_partitions_contract) + ", not " +
                                                    std::to_string(config.contract))
                .at("contract");
        }
        if (!detail::valid_level(config.spread)) {
            return fail(errc::invalid_argument,
                        "unknown failure-domain level " + std::to_string(static_cast<int>(config.spread)))
                .at("spread");
        }
        if (auto f = detail::check_located(sorted, config.spread)) {
            return f;
        }
        out.weight.resize(sorted.size());
        out.total = 0;
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (auto f = detail::quantize_weight(sorted[i], out.weight[i])) {
                return std::move(f).at_node(i);
            }
            if (out.weight[i] > ~std::uint64_t{0} - out.total) {
                return fail(errc::invalid_weight, "the node weights sum to 2^48 or more");
            }
            out.total += out.weight[i];
        }
        std::map<std::string, std::uint32_t> ids;
        out.real_dom.resize(sorted.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            out.real_dom[i] = ids.emplace(detail::domain_path(sorted[i], config.spread),
                                          static_cast<std::uint32_t>(ids.size()))
                                  .first->second;
        }
        for (int l = static_cast<int>(config.spread); l >= static_cast<int>(failure_domain::rack); --l) {
            std::map<std::string, std::uint32_t> level_ids;
            lazy_vector<std::uint32_t> dom(sorted.size());
            for (std::size_t i = 0; i < sorted.size(); ++i) {
                dom[i] = level_ids.emplace(detail::domain_path(sorted[i], static_cast<failure_domain>(l)),
                                           static_cast<std::uint32_t>(level_ids.size()))
                             .first->second;
            }
            out.levels.dom.push_back(std::move(dom));
            out.levels.domains.push_back(static_cast<std::uint32_t>(level_ids.size()));
        }
        if (ids.size() >= config.replicas || config.contract == 2) {
            out.dom = out.real_dom;
            out.domains = static_cast<std::uint32_t>(ids.size());
        } else {
            out.dom.resize(sorted.size());
            for (std::size_t i = 0; i < sorted.size(); ++i) {
                out.dom[i] = static_cast<std::uint32_t>(i);
            }
            out.domains = static_cast<std::uint32_t>(sorted.size());
        }
        return {};
    }

    // Claims slots (vacant where the previous table had a departed node, or everywhere) for
    // sorted, then stores the result.
    auto rebalance(lazy_vector<keyplace::node> sorted, const partitions_config& config,
                   lazy_vector<std::uint32_t> slots, const basic_partitions* from) -> detail::failure {
        prepared prep;
        if (auto f = prepare(sorted, config, prep)) {
            return f;
        }
        if (slots.empty()) {
            slots.assign(std::size_t{config.partitions} * config.replicas, detail::vacant_slot);
        }
        lazy_vector<std::uint32_t> have(sorted.size(), 0);
        for (const std::uint32_t s : slots) {
            if (s != detail::vacant_slot) {
                ++have[s];
            }
        }
        const bool levels = by_levels(config, prep);
        const auto quota = slot_quotas(config, prep, have);
        lazy_vector<std::uint32_t> owner_quota;
        if (config.replicas > 1) {
            lazy_vector<std::uint32_t> owned(sorted.size(), 0);
            for (std::size_t k = 0; k < slots.size(); k += config.replicas) {
                if (slots[k] != detail::vacant_slot) {
                    ++owned[slots[k]];
                }
            }
            owner_quota = detail::partition_quotas<Unused>(prep.weight, owned, config.partitions, 1, prep.total);
        }
        detail::partition_claim<Unused>(config.partitions, config.replicas, slots, quota, owner_quota, prep.dom,
                                        prep.domains, levels ? &prep.levels : nullptr);
        if (config.replicas > 1) {
            detail::balance_owners<Unused>(slots, prep.weight, prep.total, config.partitions, config.replicas);
        }
        store(std::move(sorted), config, slots, prep, from);
        return {};
    }

    void store(lazy_vector<keyplace::node> sorted, const partitions_config& config,
               const lazy_vector<std::uint32_t>& slots, const prepared& prep, const basic_partitions* from) {
        const auto& dom = prep.real_dom;
        const std::uint32_t q = config.partitions;
        const std::uint32_t n = config.replicas;
        bits_ = static_cast<std::uint32_t>(std::countr_zero(q));
        if (from != nullptr && from->config_.partitions == q) {
            points_ = from->points_;  // the points depend on Q alone: shared across derivations
        } else {
            auto points = std::make_shared<lazy_vector<std::uint64_t>>(q);
            const std::uint64_t low = ~std::uint64_t{0} >> bits_;  // S - 1
            for (std::uint32_t p = 0; p < q; ++p) {
                (*points)[p] = p == 0 ? low : (std::uint64_t{p} << (64U - bits_)) | low;
            }
            points_ = std::move(points);
        }
        owners_.assign(q, node_index{});
        rest_.assign(std::size_t{q} * (n - 1), 0);
        held_.assign(sorted.size(), 0);
        crowded_ = 0;
        for (std::size_t p = 0; p < q; ++p) {
            owners_[p] = node_index{slots[p * n]};
            bool crowded = false;
            for (std::size_t r = 0; r < n; ++r) {
                const std::uint32_t s = slots[p * n + r];
                ++held_[s];
                if (r > 0) {
                    rest_[p * (n - 1) + r - 1] = s;
                }
                for (std::size_t e = 0; e < r; ++e) {
                    crowded = crowded || dom[slots[p * n + e]] == dom[s];
                }
            }
            crowded_ += crowded ? 1U : 0U;
        }
        holders_ = static_cast<std::size_t>(std::count_if(held_.begin(), held_.end(), [](std::uint32_t c) { return c != 0; }));
        // Over a limit: a domain of some level from the spread level down to racks holding more
        // than ceil(T_d / Q) replicas of a partition, T_d the slots its nodes hold.
        overcrowded_ = 0;
        const auto& levels = prep.levels;
        lazy_vector<lazy_vector<std::uint32_t>> limit(levels.dom.size());
        for (std::size_t l = 0; l < levels.dom.size(); ++l) {
            lazy_vector<std::uint32_t> total(levels.domains[l], 0);
            for (std::size_t i = 0; i < held_.size(); ++i) {
                total[levels.dom[l][i]] += held_[i];
            }
            for (const std::uint32_t t : total) {
                limit[l].push_back((t + q - 1) / q);
            }
        }
        for (std::size_t p = 0; p < q; ++p) {
            bool over = false;
            for (std::size_t l = 0; l < levels.dom.size() && !over; ++l) {
                for (std::size_t r = 0; r < n && !over; ++r) {
                    const std::uint32_t d = levels.dom[l][slots[p * n + r]];
                    std::uint32_t in = 0;
                    for (std::size_t e = 0; e < n; ++e) {
                        in += levels.dom[l][slots[p * n + e]] == d ? 1U : 0U;
                    }
                    over = in > limit[l][d];
                }
            }
            overcrowded_ += over ? 1U : 0U;
        }
        this->nodes_ = std::move(sorted);
        this->config_ = config;
    }

    // The table as slots, with old node indices mapped through remap (vacant_slot: departed).
    template <class Remap>
    [[nodiscard]] auto remapped(Remap&& remap) const -> lazy_vector<std::uint32_t> {
        lazy_vector<std::uint32_t> slots;
        slots.reserve(std::size_t{partition_count()} * replica_count());
        for (const node_index i : table()) {
            slots.push_back(remap(i.value));
        }
        return slots;
    }

    auto assign(std::span<const keyplace::node> input, const partitions_config& config) -> detail::failure {
        lazy_vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        return detail::in_input_order(rebalance(std::move(sorted), config, {}, nullptr), input);
    }

    auto assign_with(const basic_partitions& from, const keyplace::node& m) -> detail::failure {
        lazy_vector<keyplace::node> sorted;
        const auto k = static_cast<std::uint32_t>(detail::insert_sorted(sorted, from.nodes_, m));
        return rebalance(std::move(sorted), from.config_, from.remapped([k](std::uint32_t i) { return i >= k ? i + 1 : i; }),
                         &from);
    }

    auto assign_without(const basic_partitions& from, node_index gone) -> detail::failure {
        lazy_vector<keyplace::node> sorted(from.nodes_.begin(), from.nodes_.end());
        sorted.erase(sorted.begin() + static_cast<std::ptrdiff_t>(gone.value));
        const std::uint32_t k = gone.value;
        return rebalance(std::move(sorted), from.config_,
                         from.remapped([k](std::uint32_t i) { return i == k ? detail::vacant_slot : i > k ? i - 1 : i; }),
                         &from);
    }

    auto assign_reweighted(const basic_partitions& from, std::string_view id, double weight) -> detail::failure {
        const auto found = from.find(id);
        if (!found) {
            return detail::fail(errc::unknown_id, "node id " + detail::quote(id) + " is not a member");
        }
        lazy_vector<keyplace::node> sorted(from.nodes_.begin(), from.nodes_.end());
        sorted[found->value].weight = weight;
        if (auto f = detail::check_node(sorted[found->value])) {
            return f;
        }
        return rebalance(std::move(sorted), from.config_, from.remapped([](std::uint32_t i) { return i; }), &from);
    }

    auto assign_transition(const basic_partitions& from, std::span<const keyplace::node> input) -> detail::failure {
        lazy_vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        // Old node index -> new one (vacant when it left): one claim for the whole change.
        lazy_vector<std::uint32_t> to(from.nodes_.size(), detail::vacant_slot);
        for (std::size_t i = 0; i < from.nodes_.size(); ++i) {
            const std::size_t at = detail::find_sorted(sorted, from.nodes_[i].id);
            to[i] = at == sorted.size() ? detail::vacant_slot : static_cast<std::uint32_t>(at);
        }
        return detail::in_input_order(
            rebalance(std::move(sorted), from.config_, from.remapped([&to](std::uint32_t i) { return to[i]; }), &from),
            input);
    }

    auto assign_table(std::span<const keyplace::node> input, const partitions_config& config,
                      std::span<const node_index> table) -> detail::failure {
        using detail::fail;
        lazy_vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        prepared prep;
        if (auto f = prepare(sorted, config, prep)) {
            return detail::in_input_order(std::move(f), input);
        }
        const std::size_t n = config.replicas;
        const std::size_t want = std::size_t{config.partitions} * n;
        if (table.size() != want) {
            return fail(errc::invalid_partition_table,
                        "the table has " + std::to_string(table.size()) + " entries; " +
                            std::to_string(config.partitions) + " partitions x " + std::to_string(n) +
                            " replicas need " + std::to_string(want));
        }
        lazy_vector<std::uint32_t> slots(want);
        for (std::size_t k = 0; k < want; ++k) {
            const std::string where = "partition " + std::to_string(k / n) + " rank " + std::to_string(k % n);
            if (table[k].value >= sorted.size()) {
                return fail(errc::invalid_partition_table, where + " names node index " +
                                                               std::to_string(table[k].value) + "; there are " +
                                                               std::to_string(sorted.size()) + " nodes");
            }
            for (std::size_t e = k / n * n; e < k; ++e) {
                if (slots[e] == table[k].value) {
                    return fail(errc::invalid_partition_table,
                                where + " names " + detail::quote(sorted[slots[e]].id) + ", already at rank " +
                                    std::to_string(e % n));
                }
            }
            slots[k] = table[k].value;
        }
        store(std::move(sorted), config, slots, prep, nullptr);
        return {};
    }

    std::uint32_t bits_ = 0;
    std::shared_ptr<const lazy_vector<std::uint64_t>> points_;
    lazy_vector<node_index> owners_;  // rank 0, by partition
    lazy_vector<std::uint32_t> rest_;  // ranks 1 .. n - 1, partition-major
    lazy_vector<std::uint32_t> held_;  // slots per node
    std::size_t holders_ = 0;
    std::uint32_t crowded_ = 0;
    std::uint32_t overcrowded_ = 0;
};

/// (A template only so that translation units that do not use it do not compile it.)
using partitions = basic_partitions<>;

/// One partition whose ranked replicas differ between two tables.
struct partition_change {
    std::uint32_t partition = 0;
    std::vector<std::string> before;  ///< replica ids by rank
    std::vector<std::string> after;
    std::vector<std::string> leaves;  ///< in before and not after, in before's rank order
    std::vector<std::string> joins;   ///< in after and not before, in after's rank order: copies to make
};

/// The transfer plan between two tables of the same Q and n.
struct partition_plan {
    std::vector<partition_change> changes;  ///< by partition, only those that differ (ranks included)
    std::size_t moved = 0;                  ///< replica copies to make: the joins
    std::size_t minimum = 0;  ///< Σ over ids of max(0, slots after - slots before): what any table with after's counts moves
    std::size_t owner_changes = 0;  ///< partitions whose rank-0 owner differs (pick() changes for their keys)
};

/// The diff of two tables partition by partition, by node id. Throws keyplace::error
/// (invalid_argument) when Q or n differ.
template <class U>
[[nodiscard]] auto partition_moves(const basic_partitions<U>& before, const basic_partitions<U>& after)
    -> partition_plan {
    const std::uint32_t q = before.partition_count();
    const std::uint32_t n = before.replica_count();
    if (after.partition_count() != q || after.replica_count() != n) {
        detail::raise(detail::fail(errc::invalid_argument,
                                   "tables of " + std::to_string(q) + "x" + std::to_string(n) + " and " +
                                       std::to_string(after.partition_count()) + "x" +
                                       std::to_string(after.replica_count()) + " slots cannot be compared"));
    }
    partition_plan plan;
    const auto same = [&](std::uint32_t p, std::uint32_t r) {
        return before.node(before.owner(p, r)).id == after.node(after.owner(p, r)).id;
    };
    const auto ids = [n](const basic_partitions<U>& s, std::uint32_t p) {
        std::vector<std::string> out;
        for (std::uint32_t r = 0; r < n; ++r) {
            out.push_back(s.node(s.owner(p, r)).id);
        }
        return out;
    };
    const auto missing = [](const std::vector<std::string>& from, const std::vector<std::string>& in) {
        std::vector<std::string> out;
        for (const auto& id : from) {
            if (std::find(in.begin(), in.end(), id) == in.end()) {
                out.push_back(id);
            }
        }
        return out;
    };
    for (std::uint32_t p = 0; p < q; ++p) {
        bool changed = false;
        for (std::uint32_t r = 0; r < n && !changed; ++r) {
            changed = !same(p, r);
        }
        if (!changed) {
            continue;
        }
        partition_change c{p, ids(before, p), ids(after, p), {}, {}};
        c.leaves = missing(c.before, c.after);
        c.joins = missing(c.after, c.before);
        plan.moved += c.joins.size();
        plan.owner_changes += same(p, 0) ? 0U : 1U;
        plan.changes.push_back(std::move(c));
    }
    for (std::uint32_t i = 0; i < after.size(); ++i) {
        const node_index a{i};
        const auto b = before.find(after.node(a).id);
        const std::uint32_t had = b ? before.slots(*b) : 0;
        plan.minimum += after.slots(a) > had ? after.slots(a) - had : 0;
    }
    return plan;
}

KEYPLACE_NAMESPACE_END

#endif
