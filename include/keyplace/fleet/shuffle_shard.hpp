// keyplace — which node owns a key. Shuffle sharding: each tenant gets its own small set of a
// snapshot's nodes, spread evenly over zones, so that a tenant that harms its nodes harms only
// the tenants whose shards overlap its own. A tenant's shard is stable: a join or leave changes it
// by at most one member. Optionally an allocator keeps every two tenants' overlap at most m.
#ifndef KEYPLACE_FLEET_SHUFFLE_SHARD_HPP_INCLUDED
#define KEYPLACE_FLEET_SHUFFLE_SHARD_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/version.hpp>

#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The attempts shard_allocator makes for a tenant before it reports that it cannot place it.
inline constexpr std::size_t shuffle_shard_attempts = 1000;

namespace detail {

/// A node's score for a tenant's attempt: XXH3-64 of the node id, seeded with XXH3-64 of the
/// tenant and the attempt number. Higher scores are chosen first.
inline auto shard_score(std::uint64_t seed, std::string_view id) noexcept -> std::uint64_t {
    return XXH3_64bits_withSeed(id.data(), id.size(), seed);
}
inline auto shard_seed(std::string_view tenant, std::uint64_t attempt) noexcept -> std::uint64_t {
    return XXH3_64bits_withSeed(tenant.data(), tenant.size(), 0x73687566666c6521ULL + attempt);
}

/// The nodes a shard may take: those active in the snapshot (not joining, leaving, left or
/// read-only), grouped by zone.
struct shard_pool {
    std::vector<std::string_view> zones;                 // sorted
    std::vector<std::vector<std::uint32_t>> members;     // by zone: node indices
    std::size_t total = 0;

    explicit shard_pool(std::span<const snapshot_node> nodes) {
        for (const auto& n : nodes) {
            if (n.state == node_state::active) {
                zones.push_back(n.where.zone);
            }
        }
        std::sort(zones.begin(), zones.end());
        zones.erase(std::unique(zones.begin(), zones.end()), zones.end());
        members.resize(zones.size());
        for (std::uint32_t i = 0; i < nodes.size(); ++i) {
            if (nodes[i].state == node_state::active) {
                const auto z = std::lower_bound(zones.begin(), zones.end(), std::string_view(nodes[i].where.zone));
                members[static_cast<std::size_t>(z - zones.begin())].push_back(i);
                ++total;
            }
        }
    }
};

/// One shard: per zone its quota (k / Z, the first k mod Z zones in the tenant's own order of
/// zones one more; a zone with fewer nodes than its quota gives the rest to the next zones in
/// that order that have room), then in each zone the nodes of highest score. Sorted by index.
inline auto pick_shard(std::span<const snapshot_node> nodes, const shard_pool& pool, std::uint64_t seed, std::size_t k)
    -> std::vector<std::uint32_t> {
    const std::size_t zones = pool.zones.size();
    std::vector<std::pair<std::uint64_t, std::size_t>> order;  // the tenant's order of zones
    order.reserve(zones);
    for (std::size_t z = 0; z < zones; ++z) {
        order.emplace_back(shard_score(seed, pool.zones[z]), z);
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a > b; });
    std::vector<std::size_t> quota(zones, k / zones);
    for (std::size_t j = 0; j < k % zones; ++j) {
        ++quota[order[j].second];
    }
    std::size_t deficit = 0;
    for (std::size_t z = 0; z < zones; ++z) {
        if (quota[z] > pool.members[z].size()) {
            deficit += quota[z] - pool.members[z].size();
            quota[z] = pool.members[z].size();
        }
    }
    while (deficit > 0) {  // k <= pool.total, so some zone has room
        for (std::size_t j = 0; j < zones && deficit > 0; ++j) {
            const std::size_t z = order[j].second;
            if (quota[z] < pool.members[z].size()) {
                ++quota[z];
                --deficit;
            }
        }
    }
    std::vector<std::uint32_t> out;
    out.reserve(k);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> ranked;
    for (std::size_t z = 0; z < zones; ++z) {
        ranked.clear();
        for (const auto i : pool.members[z]) {
            ranked.emplace_back(shard_score(seed, nodes[i].id), i);
        }
        const auto take = static_cast<std::ptrdiff_t>(quota[z]);
        std::partial_sort(ranked.begin(), ranked.begin() + take, ranked.end(),
                          [](const auto& a, const auto& b) { return a > b; });
        for (std::ptrdiff_t j = 0; j < take; ++j) {
            out.push_back(ranked[static_cast<std::size_t>(j)].second);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

inline auto check_shard(const shard_pool& pool, std::string_view tenant, std::size_t k, error_info& err) -> bool {
    if (tenant.empty()) {
        err = fail(errc::invalid_argument, "shuffle shard: the tenant is empty");
        return false;
    }
    if (k == 0 || k > pool.total) {
        err = fail(errc::invalid_argument, "shuffle shard: size " + std::to_string(k) + " for tenant " + quote(tenant) +
                                               " is outside 1.." + std::to_string(pool.total) +
                                               " (the snapshot's active nodes)");
        return false;
    }
    return true;
}

}  // namespace detail

/// The shard of `tenant`: k of the active nodes (indices into `nodes`, ascending), spread evenly
/// over zones — k / Z in each of the Z zones, k mod Z of them one more (which ones depends on the
/// tenant), a zone with too few nodes giving its share to the next — and in each zone the nodes
/// whose score for the tenant (XXH3 of the node id, seeded by the tenant's XXH3) is highest. A
/// join or leave that keeps the set of zones changes a shard by at most one member (one in, one
/// out). Only active nodes are chosen: not joining, leaving, left or read-only ones. Errors
/// (invalid_argument, naming the value): an empty tenant, k of 0 or above the active nodes.
/// O(N log N) for N nodes.
[[nodiscard]] inline auto try_shuffle_shard(std::span<const snapshot_node> nodes, std::string_view tenant,
                                            std::size_t k, error_info& err)
    -> std::optional<std::vector<std::uint32_t>> {
    const detail::shard_pool pool(nodes);
    if (!detail::check_shard(pool, tenant, k, err)) {
        return std::nullopt;
    }
    err.clear();
    return detail::pick_shard(nodes, pool, detail::shard_seed(tenant, 0), k);
}
/// Over a snapshot's nodes (indices into s.nodes()).
[[nodiscard]] inline auto try_shuffle_shard(const snapshot& s, std::string_view tenant, std::size_t k,
                                            error_info& err) -> std::optional<std::vector<std::uint32_t>> {
    return try_shuffle_shard(s.nodes(), tenant, k, err);
}
[[nodiscard]] inline auto shuffle_shard(const snapshot& s, std::string_view tenant, std::size_t k)
    -> std::vector<std::uint32_t> {
    error_info err;
    auto shard = try_shuffle_shard(s.nodes(), tenant, k, err);
    if (!shard) {
        detail::raise(err);
    }
    return std::move(*shard);
}

/// Shards with a bound on overlap: each tenant assigned gets a shard that shares at most
/// `max_overlap` nodes with every shard assigned before it (0 violations, by construction). Its
/// first choice is shuffle_shard()'s; when that overlaps too much it tries the tenant's next
/// seeds (the same zone balance), up to shuffle_shard_attempts, and then reports that it cannot
/// place the tenant, naming the tenant and which shard came closest. The shards depend on the
/// order tenants are assigned in, so keep the assignments (a service stores them; this class
/// holds them in memory). Not synchronized.
class shard_allocator {
public:
    /// Over the active nodes of `s` (which must outlive it).
    shard_allocator(const snapshot& s, std::size_t max_overlap) : s_(&s), pool_(s.nodes()), max_overlap_(max_overlap) {}

    /// Assigns `tenant` a shard of k nodes, or reports (invalid_argument) an empty tenant, a
    /// tenant assigned already, a size outside 1..active nodes, or no shard within the bound
    /// (nothing is assigned then).
    auto try_assign(std::string_view tenant, std::size_t k, error_info& err) -> std::optional<std::vector<std::uint32_t>> {
        if (!detail::check_shard(pool_, tenant, k, err)) {
            return std::nullopt;
        }
        for (const auto& [t, shard] : shards_) {
            if (t == tenant) {
                err = detail::fail(errc::invalid_argument, "shuffle shard: tenant " + detail::quote(tenant) +
                                                               " has a shard already");
                return std::nullopt;
            }
        }
        std::size_t closest = k + 1;
        std::string_view closest_to;
        for (std::uint64_t attempt = 0; attempt < shuffle_shard_attempts; ++attempt) {
            auto shard = detail::pick_shard(s_->nodes(), pool_, detail::shard_seed(tenant, attempt), k);
            std::size_t worst = 0;
            std::string_view worst_with;
            for (const auto& [t, other] : shards_) {
                const std::size_t o = overlap(shard, other);
                if (o > worst) {
                    worst = o;
                    worst_with = t;
                }
                if (worst > max_overlap_) {
                    break;
                }
            }
            if (worst <= max_overlap_) {
                shards_.emplace_back(std::string(tenant), shard);
                err.clear();
                return shard;
            }
            if (worst < closest) {
                closest = worst;
                closest_to = worst_with;
            }
        }
        err = detail::fail(errc::invalid_argument,
                           "shuffle shard: no shard of " + std::to_string(k) + " nodes for tenant " + detail::quote(tenant) +
                               " overlaps every assigned shard in at most " + std::to_string(max_overlap_) + " after " +
                               std::to_string(shuffle_shard_attempts) + " attempts (the closest shares " +
                               std::to_string(closest) + " with tenant " + detail::quote(closest_to) + ")");
        return std::nullopt;
    }

    /// The shards assigned, in order: (tenant, node indices ascending).
    [[nodiscard]] auto shards() const noexcept -> const std::vector<std::pair<std::string, std::vector<std::uint32_t>>>& {
        return shards_;
    }
    [[nodiscard]] auto max_overlap() const noexcept -> std::size_t { return max_overlap_; }

    /// Nodes two ascending index lists share.
    [[nodiscard]] static auto overlap(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) noexcept
        -> std::size_t {
        std::size_t n = 0;
        for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
            if (a[i] == b[j]) {
                ++n;
                ++i;
                ++j;
            } else if (a[i] < b[j]) {
                ++i;
            } else {
                ++j;
            }
        }
        return n;
    }

private:
    const snapshot* s_;
    detail::shard_pool pool_;
    std::size_t max_overlap_;
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> shards_;
};

KEYPLACE_NAMESPACE_END

#endif
