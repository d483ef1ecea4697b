// keyplace — which node owns a key. HAProxy's bounded loads, hash-balance-factor (src/lb_chash.c:
// chash_server_is_eligible, chash_get_server_hash; HAProxy 1.7+), applied over a keyplace ring:
// the slot apportionment, the closer of the two neighbouring points, the clockwise walk by points,
// admission while served < slots, the second-wrap guard. HAProxy's own ring points (full_hash of
// puid * 4096 + i over 32 bits) are not reproduced: the rules run over the ring given.
#ifndef KEYPLACE_COMPAT_HAPROXY_BOUNDED_HPP_INCLUDED
#define KEYPLACE_COMPAT_HAPROXY_BOUNDED_HPP_INCLUDED

#include <keyplace/bounded_load.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// HAProxy's effective weight per unit of server weight (BE_WEIGHT_SCALE).
inline constexpr std::uint32_t haproxy_weight_scale = 16;

/// chash_server_is_eligible's slots for one server, in HAProxy's 32-bit unsigned arithmetic:
/// tot = ((served + 1) * factor + 99) / 100, then eweight * (tot / tot_weight) plus the
/// telescoping share ((cumulative + eweight) * r) / tot_weight - (cumulative * r) / tot_weight of
/// the remainder r = tot % tot_weight, at least 1. served counts the backend's outstanding
/// requests, cumulative the eweights of the servers before this one (configuration order).
/// The servers' slots sum to tot exactly (unless the floor of 1 lifts one).
[[nodiscard]] constexpr auto haproxy_slots(std::uint32_t eweight, std::uint32_t cumulative, std::uint32_t tot_weight,
                                           std::uint32_t served, std::uint32_t factor) noexcept -> std::uint32_t {
    const std::uint32_t tot_slots = ((served + 1U) * factor + 99U) / 100U;
    const std::uint32_t per_weight = tot_slots / tot_weight;
    const std::uint32_t remainder = tot_slots % tot_weight;
    std::uint32_t slots = eweight * per_weight;
    slots += ((cumulative + eweight) * remainder) / tot_weight - (cumulative * remainder) / tot_weight;
    return slots == 0 ? 1U : slots;
}

/// hash-balance-factor must be 0 (off) or above 100; HAProxy's message for 1 .. 100.
[[nodiscard]] inline auto check_haproxy_balance_factor(std::uint32_t factor) -> error_info {
    if (factor != 0 && factor <= 100) {
        return detail::fail(errc::invalid_argument, "hash-balance-factor " + std::to_string(factor) +
                                                        ": 'hash-balance-factor' must be 0 or greater than 100.");
    }
    return {};
}

/// The servers as chash_server_is_eligible sees them: eweight (16 per unit of weight; weights
/// are whole numbers from 1 to 256, as HAProxy's), cumulative (the eweights before, in node
/// order, which stands for configuration order) and their total.
struct haproxy_servers {
    std::vector<std::uint32_t> eweight;
    std::vector<std::uint32_t> cumulative;
    std::uint32_t tot_weight = 0;
};

/// Throws keyplace::error (invalid_weight) for a weight that is not a whole number from 1 to 256.
template <placement_strategy S>
[[nodiscard]] auto haproxy_servers_of(const S& s) -> haproxy_servers {
    haproxy_servers out;
    for (const node& n : s.nodes()) {
        const double w = n.weight;
        if (!(w >= 1.0 && w <= 256.0 && w == static_cast<double>(static_cast<std::uint32_t>(w)))) {
            detail::raise(detail::fail(errc::invalid_weight, "node " + detail::quote(n.id) + ": weight " +
                                                                 detail::format_weight(w) +
                                                                 " is not a whole number from 1 to 256 (HAProxy's)"));
        }
        out.eweight.push_back(static_cast<std::uint32_t>(w) * haproxy_weight_scale);
        out.cumulative.push_back(out.tot_weight);
        out.tot_weight += out.eweight.back();
    }
    return out;
}

/// chash_get_server_hash with a balance factor, over a ring R (a ring_strategy: points(),
/// owners(), entry_of()): served[i] is server i's outstanding requests and total_served their
/// sum (servers from haproxy_servers_of). Starts at the point at or after `point` or the one before it, whichever is closer (the
/// one before on a tie, distances taken modulo the point width); then, while that point's server
/// is not eligible (factor != 0 and served < slots fails), the next point clockwise; on the
/// second wrap past the last point it stops and returns that server, eligible or not.
template <class R>
[[nodiscard]] auto haproxy_bounded_pick(const R& ring, std::uint64_t point, const haproxy_servers& servers,
                                        std::span<const std::uint32_t> served, std::uint32_t total_served,
                                        std::uint32_t factor) noexcept -> node_index {
    using P = typename R::point_type;
    const auto points = ring.points();
    const auto owners = ring.owners();
    const std::size_t n = points.size();
    std::size_t next = ring.entry_of(point);
    const std::size_t prev = next == 0 ? n - 1 : next - 1;
    const auto h = static_cast<P>(point);
    const auto dp = static_cast<P>(h - points[prev]);
    const auto dn = static_cast<P>(points[next] - h);
    if (dp <= dn) {
        next = prev;
    }
    const auto eligible = [&](node_index i) noexcept {
        return served[i.value] < haproxy_slots(servers.eweight[i.value], servers.cumulative[i.value],
                                               servers.tot_weight, total_served, factor);
    };
    int loop = 0;
    while (factor != 0 && !eligible(owners[next])) {
        if (++next == n) {
            next = 0;
            if (++loop > 1) {
                break;
            }
        }
    }
    return owners[next];
}

/// The batch form of HAProxy's rule over a ring: the requests at points placed in the canonical
/// order (by point, then input index), all held, each with served = the requests placed before
/// it. factor 0 picks the closer point alone. Throws keyplace::error: the factor (1 .. 100),
/// weights (as haproxy_servers_of), more than 2^32 - 1 requests.
template <class R>
[[nodiscard]] auto haproxy_bounded_assign(const R& ring, std::span<const std::uint64_t> points, std::uint32_t factor)
    -> std::vector<node_index> {
    if (auto f = check_haproxy_balance_factor(factor)) {
        detail::raise(f);
    }
    if (auto f = detail::check_batch(points.size(), {})) {
        detail::raise(f);
    }
    const haproxy_servers servers = haproxy_servers_of(ring);
    std::vector<std::uint32_t> served(ring.size());
    std::vector<node_index> out(points.size());
    std::uint32_t total = 0;
    for (const std::uint32_t k : detail::canonical_order(points)) {
        const node_index got = haproxy_bounded_pick(ring, points[k], servers, served, total, factor);
        ++served[got.value];
        ++total;
        out[k] = got;
    }
    return out;
}

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
