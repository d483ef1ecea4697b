// keyplace — which node owns a key. Topology-aware replica placement over any ordered strategy:
// N distinct nodes spread over racks, zones or regions, in the spirit of Cassandra's
// NetworkTopologyStrategy and Ceph's chooseleaf, with an explicit rule for too few domains.
#ifndef KEYPLACE_REPLICAS_HPP_INCLUDED
#define KEYPLACE_REPLICAS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/error.hpp>
#include <keyplace/failure_domain.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Copies wanted in one domain (per-domain counts, like NetworkTopologyStrategy's per-DC RF).
struct domain_count {
    std::string domain;  ///< the domain's name at replica_policy::count_level
    std::size_t count;
};

struct replica_policy {
    /// Total copies. Ignored when per_domain is not empty (the total is then their sum).
    std::size_t count = 3;
    /// Copies go to distinct domains at this level (within each counted domain).
    failure_domain spread = failure_domain::node;
    shortfall on_shortfall = shortfall::fail;
    /// Optional per-domain counts, e.g. {{"eu", 3}, {"us", 2}} at the region level.
    std::vector<domain_count> per_domain{};
    failure_domain count_level = failure_domain::region;
};

/// What place() wrote: how many copies, and how well they are spread.
struct replica_result {
    std::size_t placed = 0;
    bool degraded = false;  ///< fewer domains than copies at the spread level (relax only)
    failure_domain achieved = failure_domain::node;  ///< the coarsest level all copies differ at
};

/// Places copies of a key on distinct nodes over a strategy's preference order.
///
/// Placement (the contract): with spread level L, pass L walks the strategy's preference order
/// and takes each node whose L-domain no copy has yet, until every copy is placed or every
/// L-domain holds one. If copies remain (relax only: fail refuses such a membership at build),
/// the next finer level runs a pass the same way, down to single nodes, so extra copies land
/// in distinct zones, then distinct racks, before a rack is reused. With per-domain counts,
/// each counted domain takes copies up to its count and spreading applies among the copies in
/// the same counted domain. Copies are listed in the order they were taken, so the first is
/// the key's owner whenever the owner is eligible. Two copies never share a node.
///
/// Whether the result is degraded depends only on the membership and the policy, so it is
/// decided at build: place() never fails, allocates nothing and writes into the caller's span.
/// An empty location part at the spread level is an error; below it (the passes of relax) an
/// empty part is one shared domain, a node without a rack being in the same rack as every
/// other rack-less node of its zone: spread is never overstated.
template <ordered_placement_strategy S>
class replica_placer {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, S>;  // detail/lazy.hpp

public:
    /// Throws keyplace::error: count 0 or more copies than nodes, whatever the shortfall rule
    /// (invalid_replica_count); an unknown level (invalid_argument); an empty location part at
    /// the spread or count level (missing_location); a counted domain without nodes
    /// (unknown_domain) or counted twice (duplicate_domain); and with shortfall::fail fewer
    /// holders or domains than copies (replica_shortfall). Only the strategy's holders take
    /// copies: with shortfall::relax, fewer holders than copies give every key as many copies as
    /// there are holders, and degraded() is true.
    [[nodiscard]] static auto build(std::shared_ptr<const S> strategy, replica_policy policy)
        -> replica_placer {
        replica_placer p;
        if (auto f = p.assign(std::move(strategy), std::move(policy))) {
            detail::raise(f);
        }
        return p;
    }
    [[nodiscard]] static auto build(const S& strategy, replica_policy policy) -> replica_placer {
        return build(std::make_shared<const S>(strategy), std::move(policy));
    }
    [[nodiscard]] static auto try_build(std::shared_ptr<const S> strategy, replica_policy policy,
                                        error_info& err) -> std::optional<replica_placer> {
        replica_placer p;
        auto f = p.assign(std::move(strategy), std::move(policy));
        return detail::report(std::move(f), std::move(p), err);
    }

    [[nodiscard]] auto strategy() const noexcept -> const S& { return *strategy_; }
    [[nodiscard]] auto policy() const noexcept -> const replica_policy& { return policy_; }
    /// Copies each key gets: the policy's count, or fewer (relax only) when fewer nodes hold keys.
    [[nodiscard]] auto count() const noexcept -> std::size_t { return total_; }
    /// Copies the policy asks for.
    [[nodiscard]] auto requested() const noexcept -> std::size_t { return requested_; }
    /// Whether keys get fewer copies than asked, or copies spread below the asked level.
    [[nodiscard]] auto degraded() const noexcept -> bool {
        return achieved_ < policy_.spread || total_ < requested_;
    }
    [[nodiscard]] auto achieved() const noexcept -> failure_domain { return achieved_; }

    /// Writes min(out.size(), count()) copies for a hashed key. Every pass walks the preference
    /// order at most once and stops as soon as it has taken all it can.
    [[nodiscard]] auto place(std::uint64_t point, std::span<node_index> out) const noexcept -> replica_result {
        return place_walk([&](auto&& visit) noexcept { strategy_->walk(point, visit); }, out);
    }
    /// place() for key bytes, over the order a strategy that places a key by its bytes gives
    /// them (go-mpchash hashes a key twice: its point alone gives another order).
    [[nodiscard]] auto place_key(std::span<const std::byte> key, std::span<node_index> out) const noexcept
        -> replica_result
        requires detail::needs_key_bytes<S>
    {
        return place_walk([&](auto&& visit) noexcept { strategy_->walk_key(key, visit); }, out);
    }

    /// As place(), hashing key with the strategy's key hash; for a strategy that places a key by
    /// its bytes, place_key() with them, so the first copy is locate()'s owner.
    template <class Key>
    [[nodiscard]] auto locate(const Key& key, std::span<node_index> out) const noexcept -> replica_result {
        if constexpr (detail::needs_key_bytes<S>) {
            return detail::with_key_bytes(key, [&](std::span<const std::byte> b) noexcept { return place_key(b, out); });
        } else {
            return place(hash_key(typename S::key_hash{}, key), out);
        }
    }

private:
    // The passes of place(): walk(visit) walks the preference order of one key.
    template <class Walk>
    [[nodiscard]] auto place_walk(Walk&& walk, std::span<node_index> out) const noexcept -> replica_result {
        const std::size_t want = std::min(out.size(), total_);
        std::size_t got = 0;
        for (int level = static_cast<int>(policy_.spread); level >= 0 && got < want; --level) {
            const std::size_t reachable = std::min(want, reachable_[static_cast<std::size_t>(level)]);
            if (got >= reachable) {
                continue;
            }
            const auto& domain = domain_[static_cast<std::size_t>(level)];
            walk([&](node_index v) noexcept {
                const std::uint32_t group = group_[v.value];
                if (group == no_group) {
                    return true;
                }
                std::size_t in_group = 0;
                for (std::size_t k = 0; k < got; ++k) {
                    const std::uint32_t c = out[k].value;
                    if (c == v.value) {
                        return true;  // already a copy
                    }
                    if (group_[c] == group) {
                        ++in_group;
                        if (domain[c] == domain[v.value]) {
                            return true;  // its domain already holds a copy of this group
                        }
                    }
                }
                if (in_group >= quota_[group]) {
                    return true;
                }
                out[got++] = v;
                return got < reachable;
            });
        }
        return {got, degraded(), achieved_};
    }

    static constexpr std::uint32_t no_group = 0xffffffffU;
    static constexpr std::size_t levels = 4;

    replica_placer() = default;

    static auto part(const node& n, failure_domain level) -> const std::string& {
        return detail::domain_part(n, level);
    }
    static auto path(const node& n, failure_domain level) -> std::string { return detail::domain_path(n, level); }
    static auto valid(failure_domain level) -> bool { return detail::valid_level(level); }

    auto assign(std::shared_ptr<const S> strategy, replica_policy policy) -> detail::failure {
        using detail::fail;
        if (!strategy) {
            return fail(errc::invalid_argument, "no strategy given");
        }
        if (!valid(policy.spread) || !valid(policy.count_level)) {
            const auto bad = !valid(policy.spread) ? policy.spread : policy.count_level;
            return fail(errc::invalid_argument,
                        "unknown failure-domain level " + std::to_string(static_cast<int>(bad)));
        }
        const auto nodes = strategy->nodes();
        const bool counted = !policy.per_domain.empty();
        // Only holders take copies: a node that holds no key is never in a preference walk.
        const auto holds = [&](std::size_t i) { return strategy->holds(node_index{static_cast<std::uint32_t>(i)}); };
        if (counted && policy.count_level <= policy.spread && policy.spread != failure_domain::node) {
            return fail(errc::invalid_argument,
                        "per-domain counts at the " + std::string(to_string(policy.count_level)) +
                            " level cannot spread over " + std::string(to_string(policy.spread)) +
                            "s: choose a finer spread level");
        }
        // Groups: the counted domains, or one group holding every node.
        lazy_vector<std::uint32_t> group(nodes.size(), counted ? no_group : 0);
        lazy_vector<std::size_t> quota;
        std::size_t total = 0;
        if (counted) {
            std::map<std::string, std::uint32_t> names;
            for (const auto& dc : policy.per_domain) {
                if (dc.count == 0) {
                    return fail(errc::invalid_replica_count, "replica count 0 for domain " + detail::quote(dc.domain));
                }
                if (!names.emplace(dc.domain, static_cast<std::uint32_t>(quota.size())).second) {
                    return fail(errc::duplicate_domain, "domain " + detail::quote(dc.domain) + " is counted twice");
                }
                quota.push_back(dc.count);
                total += dc.count;
            }
            lazy_vector<std::size_t> members(quota.size(), 0);
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (part(nodes[i], policy.count_level).empty()) {
                    return fail(errc::missing_location,
                                "node " + detail::quote(nodes[i].id) + " has no " +
                                    std::string(to_string(policy.count_level)) +
                                    "; per-domain counts need every node's");
                }
                const auto it = names.find(part(nodes[i], policy.count_level));
                if (it != names.end()) {
                    group[i] = holds(i) ? it->second : no_group;
                    ++members[it->second];
                }
            }
            for (const auto& [name, g] : names) {
                if (members[g] == 0) {
                    return fail(errc::unknown_domain,
                                std::string(to_string(policy.count_level)) + " " + detail::quote(name) +
                                    " has no nodes");
                }
                if (quota[g] > members[g]) {
                    return fail(errc::invalid_replica_count,
                                std::to_string(quota[g]) + " copies in " + detail::quote(name) +
                                    " but it has only " + std::to_string(members[g]) + " nodes");
                }
            }
        } else {
            if (policy.count == 0) {
                return fail(errc::invalid_replica_count, "replica count 0; at least 1 copy is needed");
            }
            if (policy.count > nodes.size()) {
                return fail(errc::invalid_replica_count,
                            "replica count " + std::to_string(policy.count) + " is more than the " +
                                std::to_string(nodes.size()) + " nodes");
            }
            quota.push_back(policy.count);
            total = policy.count;
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                group[i] = holds(i) ? 0 : no_group;
            }
        }
        if (auto f = detail::check_located(nodes, policy.spread)) {
            return f;
        }
        // Dense domain ids per level, and per level how many copies the passes down to it can
        // hold: per group, min(quota, distinct domains of the group at that level).
        std::array<lazy_vector<std::uint32_t>, levels> domain;
        std::array<std::size_t, levels> reachable{};
        for (std::size_t l = 0; l < levels; ++l) {
            std::map<std::string, std::uint32_t> ids;
            lazy_vector<std::map<std::uint32_t, bool>> seen(quota.size());
            domain[l].resize(nodes.size());
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                const auto id = ids.emplace(path(nodes[i], static_cast<failure_domain>(l)),
                                            static_cast<std::uint32_t>(ids.size()))
                                    .first->second;
                domain[l][i] = id;
                if (group[i] != no_group) {
                    seen[group[i]][id] = true;
                }
            }
            for (std::size_t g = 0; g < quota.size(); ++g) {
                reachable[l] += std::min(quota[g], seen[g].size());
            }
        }
        const auto spread = static_cast<std::size_t>(policy.spread);
        if (reachable[spread] < total && policy.on_shortfall == shortfall::fail) {
            const auto idle = static_cast<std::size_t>(std::count_if(
                nodes.begin(), nodes.end(), [&](const node& n) { return !holds(static_cast<std::size_t>(&n - nodes.data())); }));
            return shortfall_error(policy, nodes, group, quota, domain[spread], idle);
        }
        // The passes from the spread level down reach `total` at the first level whose
        // domains suffice; that level is what every key achieves. If even single holders do
        // not suffice (relax only), every key gets as many copies as there are holders.
        failure_domain achieved = failure_domain::node;
        const std::size_t placed = std::min(total, reachable[0]);
        for (int l = static_cast<int>(spread); l >= 0; --l) {
            if (reachable[static_cast<std::size_t>(l)] >= placed) {
                achieved = static_cast<failure_domain>(l);
                break;
            }
        }
        for (int l = static_cast<int>(spread) - 1; l >= 0; --l) {
            // A finer pass can take what coarser ones could not: its reach is cumulative.
            reachable[static_cast<std::size_t>(l)] =
                std::max(reachable[static_cast<std::size_t>(l)], reachable[static_cast<std::size_t>(l) + 1]);
        }
        strategy_ = std::move(strategy);
        policy_ = std::move(policy);
        group_ = std::move(group);
        quota_ = std::move(quota);
        domain_ = std::move(domain);
        reachable_ = reachable;
        total_ = placed;
        requested_ = total;
        achieved_ = achieved;
        return {};
    }

    static auto shortfall_error(const replica_policy& policy, std::span<const node> nodes,
                                const lazy_vector<std::uint32_t>& group, const lazy_vector<std::size_t>& quota,
                                const lazy_vector<std::uint32_t>& domain, std::size_t idle) -> detail::failure {
        const std::string level(to_string(policy.spread));
        for (std::size_t g = 0; g < quota.size(); ++g) {
            std::map<std::uint32_t, std::string> names;
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                if (group[i] == g) {
                    names.emplace(domain[i], part(nodes[i], policy.spread));
                }
            }
            if (names.size() >= quota[g]) {
                continue;
            }
            std::string list;
            for (const auto& [id, name] : names) {
                list += (list.empty() ? "" : ", ") + detail::quote(name);
            }
            const std::string where = policy.per_domain.empty() ? "" : " in " + detail::quote(policy.per_domain[g].domain);
            return detail::fail(errc::replica_shortfall,
                                "spreading " + std::to_string(quota[g]) + " copies" + where + " over " + level +
                                    "s needs " + std::to_string(quota[g]) + " " + level + "s; there are " +
                                    std::to_string(names.size()) + " (" + list + ")" +
                                    (idle == 0 ? "" : " among the nodes that hold keys (" + std::to_string(idle) +
                                                          " hold none)") +
                                    "; relax the shortfall rule to accept fewer");
        }
        return detail::fail(errc::replica_shortfall, "too few " + level + "s");
    }

    std::shared_ptr<const S> strategy_;
    replica_policy policy_{};
    lazy_vector<std::uint32_t> group_;
    lazy_vector<std::size_t> quota_;
    std::array<lazy_vector<std::uint32_t>, levels> domain_;
    std::array<std::size_t, levels> reachable_{};
    std::size_t total_ = 0;      // copies each key gets
    std::size_t requested_ = 0;  // copies the policy asks for
    failure_domain achieved_ = failure_domain::node;
};

KEYPLACE_NAMESPACE_END

#endif
