// keyplace — which node owns a key. Envoy's bounded loads, hash_balance_factor
// (BoundedLoadHashingLoadBalancer, source/extensions/load_balancing_policies/common/
// thread_aware_lb_impl.cc): over envoy_ring_hash and envoy_maglev, a host over its slots is
// replaced by the first host of a hash-seeded std::mt19937 shuffle that is not.
#ifndef KEYPLACE_COMPAT_ENVOY_BOUNDED_HPP_INCLUDED
#define KEYPLACE_COMPAT_ENVOY_BOUNDED_HPP_INCLUDED

#include <keyplace/bounded_load.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace compat {

/// Envoy's host order for an overloaded pick: a lazy Fisher–Yates shuffle of 0 .. n-1 drawn
/// from std::mt19937 seeded with the request hash (the seed taken modulo 2^32, as the engine's
/// constructor does), each step's index from Envoy's rejection-sampled uniform(k). The whole
/// sequence for n = 5 and seed 2 is 2 1 0 4 3 (Envoy's test).
class envoy_shuffle {
public:
    envoy_shuffle(std::uint64_t hash, std::uint32_t n)
        : rng_(static_cast<std::uint32_t>(hash)), order_(n) {
        for (std::uint32_t i = 0; i < n; ++i) {
            order_[i] = i;
        }
    }
    /// Whether next() has more to give.
    [[nodiscard]] auto done() const noexcept -> bool { return at_ == order_.size(); }
    /// The next host index (precondition: !done()).
    [[nodiscard]] auto next() noexcept -> std::uint32_t {
        const auto left = static_cast<std::uint32_t>(order_.size() - at_);
        const std::uint32_t j = uniform(left);
        std::swap(order_[at_], order_[at_ + j]);
        return order_[at_++];
    }

private:
    // uniform(k): x = rng() / ((max + 1) / k), redrawn while x >= k.
    auto uniform(std::uint32_t k) noexcept -> std::uint32_t {
        const std::uint64_t bucket = (static_cast<std::uint64_t>(std::mt19937::max()) + 1) / k;
        for (;;) {
            const std::uint64_t x = static_cast<std::uint64_t>(rng_()) / bucket;
            if (x < k) {
                return static_cast<std::uint32_t>(x);
            }
        }
    }

    std::mt19937 rng_;
    std::vector<std::uint32_t> order_;
    std::size_t at_ = 0;
};

/// Envoy's hostOverloadFactor: total_slots = ((overall_active + 1) * factor + 99) / 100 in
/// 32-bit unsigned arithmetic (wrapping, as Envoy's), slots = max(uint32(ceil(total_slots *
/// weight)), 1) with weight the host's normalized weight (the hosts' weights sum to 1), and
/// the result host_active / slots. A host is overloaded when this is above 1.
[[nodiscard]] inline auto envoy_overload_factor(std::uint32_t host_active, std::uint32_t overall_active,
                                                double weight, std::uint32_t factor) noexcept -> double {
    const std::uint32_t total_slots = ((overall_active + 1U) * factor + 99U) / 100U;
    auto slots = static_cast<std::uint32_t>(std::ceil(static_cast<double>(total_slots) * weight));
    if (slots < 1U) {
        slots = 1U;
    }
    return static_cast<double>(host_active) / static_cast<double>(slots);
}

/// Envoy's chooseHost over an inner pick: `picked` (a host index, 0 .. hosts-1) if
/// overload(picked) <= 1; else the first host of envoy_shuffle(hash, hosts), skipping picked,
/// whose overload(i) <= 1; if there is none, the least overloaded host met (picked first, so a
/// tie keeps the earlier). overload(i) -> double is hostOverloadFactor of host i.
template <class Overload>
[[nodiscard]] auto envoy_bounded_choose(std::uint64_t hash, std::uint32_t picked, std::uint32_t hosts,
                                        Overload&& overload) -> std::uint32_t {
    double least = overload(picked);
    if (least <= 1.0) {
        return picked;
    }
    std::uint32_t best = picked;
    envoy_shuffle order(hash, hosts);
    while (!order.done()) {
        const std::uint32_t k = order.next();
        if (k == picked) {
            continue;
        }
        const double f = overload(k);
        if (f <= 1.0) {
            return k;
        }
        if (f < least) {
            least = f;
            best = k;
        }
    }
    return best;
}

/// hash_balance_factor must be >= 100 (the proto's rule); 0 means unset (no bound).
[[nodiscard]] inline auto check_envoy_balance_factor(std::uint32_t factor) -> error_info {
    if (factor != 0 && factor < 100) {
        return detail::fail(errc::invalid_argument, "hash_balance_factor " + std::to_string(factor) +
                                                        " is below 100 (Envoy's minimum; 0 leaves it unset)");
    }
    return {};
}

/// The batch form of Envoy's rule over an envoy_ring_hash or envoy_maglev (S): the requests at
/// points (XXH64 of the keys, as Envoy hashes them) are placed in the canonical order (by point,
/// then input index), all held, each with overall_active = the requests placed before it and
/// host_active = its host's; the host index is the position in Envoy's normalized host list
/// (node order, or locality order with locality weights). factor 0: the plain strategy.
/// Throws keyplace::error (invalid_argument) for a factor from 1 to 99, or more than 2^32 - 1
/// requests.
template <class S>
[[nodiscard]] auto envoy_bounded_assign(const S& s, std::span<const std::uint64_t> points, std::uint32_t factor)
    -> std::vector<node_index> {
    if (auto f = check_envoy_balance_factor(factor)) {
        detail::raise(f);
    }
    if (auto f = detail::check_batch(points.size(), {})) {
        detail::raise(f);
    }
    detail::envoy_weights w;
    const location* local = nullptr;
    if constexpr (requires { s.config().local_locality; }) {
        local = s.config().local_locality ? &*s.config().local_locality : nullptr;
    }
    if (auto f = detail::envoy_normalize(s.nodes(), s.config().locality_weights, local, w)) {
        detail::raise(f);
    }
    constexpr std::uint32_t none = detail::no_node;
    std::vector<std::uint32_t> host_of(s.size(), none);  // node index -> host index
    for (std::size_t h = 0; h < w.hosts.size(); ++h) {
        host_of[w.hosts[h].node] = static_cast<std::uint32_t>(h);
    }
    std::vector<std::uint32_t> active(w.hosts.size());
    std::vector<node_index> out(points.size());
    std::uint32_t overall = 0;
    for (const std::uint32_t k : detail::canonical_order(points)) {
        const node_index inner = s.pick(points[k]);
        std::uint32_t host = host_of[inner.value];
        if (factor != 0) {
            host = envoy_bounded_choose(points[k], host, static_cast<std::uint32_t>(w.hosts.size()),
                                        [&](std::uint32_t i) {
                                            return envoy_overload_factor(active[i], overall, w.hosts[i].weight,
                                                                         factor);
                                        });
        }
        ++active[host];
        ++overall;
        out[k] = node_index{w.hosts[host].node};
    }
    return out;
}

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
