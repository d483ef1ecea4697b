// keyplace — which node owns a key. The skew advisor: before deployment, the distribution of the
// busiest node's share over its fair share for a strategy, a node count and weights, and the
// least vnode count, table size, partition count or allocated token count that keeps it under a
// target, with its memory.
#ifndef KEYPLACE_SKEW_ADVISOR_HPP_INCLUDED
#define KEYPLACE_SKEW_ADVISOR_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/rounding.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/error.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/ring.hpp>
#include <keyplace/token_allocation.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The busiest node's share of the key space over its fair share (its weight's part of the
/// total), across memberships: 1 is perfect balance.
struct skew_forecast {
    double p50 = 0;
    double p99 = 0;
    bool exact = false;      ///< the same for every membership (a table or partition count balances by count)
    std::size_t trials = 0;  ///< memberships drawn (0 when exact)
};

/// What the advisor recommends: the least parameter whose forecast p99 is at most the target.
struct skew_advice {
    std::string strategy;    ///< "ring", "maglev", "partitions" or "tokens"
    std::string parameter;   ///< "vnodes", "table_size", "partitions" or "tokens"
    std::uint64_t value = 0;
    skew_forecast forecast{};
    std::size_t memory_bytes = 0;  ///< one build with that value (node ids "node-0" ...)
};

/// The memberships a ring forecast draws by default: p99 then has a standard error of about
/// 0.15% at 1,000 nodes (doc/guide.md, "Forecasting skew").
inline constexpr std::size_t skew_forecast_trials = 20000;
/// The growths an allocated-token forecast runs by default: each is a real allocation, node by
/// node, and they differ only in the seed of the first node's tokens (doc/guide.md).
inline constexpr std::size_t token_forecast_trials = 5;

/// The busiest node's share over its fair share on the native ring with `vnodes` points a unit of
/// weight (node i has llround(vnodes * w_i) points, as ring::build gives it). With hashed points
/// independent and uniform, the arcs between N·V points are Dirichlet(1, ..., 1), so node i's
/// share is Dirichlet(k_1, ..., k_N)'s i-th part: drawn here `trials` times as normalized gamma
/// variables (Marsaglia and Tsang's method, from SplitMix64 with `seed`), and p50 and p99 read off
/// (nearest rank). Throws keyplace::error (invalid_argument) for no weights, a weight that is
/// not finite and > 0, a node with no point, or no trial.
[[nodiscard]] inline auto forecast_ring_skew(std::span<const double> weights, std::size_t vnodes,
                                             std::size_t trials = skew_forecast_trials, std::uint64_t seed = 1)
    -> skew_forecast;
/// Maglev of `table_size` entries (a prime): its population gives each node its entries in turn,
/// so the counts, and the figure, do not depend on the ids: one build (ids "node-<i>"), exact.
[[nodiscard]] inline auto forecast_maglev_skew(std::span<const double> weights, std::uint64_t table_size)
    -> skew_forecast;
/// Fixed partitions (`partition_count` a power of two, one replica): each node's quota of partitions
/// follows its weight, so one build gives the figure, exact.
[[nodiscard]] inline auto forecast_partitions_skew(std::span<const double> weights, std::uint32_t partition_count)
    -> skew_forecast;

/// Allocated tokens (token_allocation.hpp, one copy: Cassandra's NoReplicationTokenAllocator):
/// nodes "node-0" ... join one by one, node i asking for llround(tokens * w_i) tokens, and the
/// busiest node's share over its fair share is read exactly from the ring's arcs; `trials` such
/// growths, seeded seed, seed + 1, ... (the seed only draws the first node's tokens, so they
/// differ little: 1.0307 to 1.0314 over three seeds at 1,000 nodes and 16 tokens). A real run of
/// the allocator, not a model: O(N^2 T log(N T)) a growth, about 1.6 s at 1,000 nodes × 16 tokens.
/// Throws keyplace::error: bad weights or no trial (invalid_argument), a node given no token or
/// more than max_allocated_tokens (invalid_vnodes).
[[nodiscard]] inline auto forecast_token_skew(std::span<const double> weights, std::size_t tokens,
                                              std::size_t trials = token_forecast_trials, std::uint64_t seed = 1)
    -> skew_forecast;

/// The least vnode count (ring), prime table size of at least 100 N (maglev), power-of-two
/// partition count (partitions) or token count a unit of weight (tokens) whose forecast p99 is at
/// most `target`, with its forecast and memory. Errors (invalid_argument, naming the value): a
/// target that is not finite or below 1 (1 itself only tables and partitions whose count divides
/// evenly reach), an unknown strategy, no weights or a bad weight, and a target no allowed value
/// reaches.
[[nodiscard]] inline auto try_advise_skew(std::string_view strategy, std::span<const double> weights, double target,
                                          error_info& err) -> std::optional<skew_advice>;
[[nodiscard]] inline auto advise_skew(std::string_view strategy, std::span<const double> weights, double target)
    -> skew_advice {
    error_info err;
    auto a = try_advise_skew(strategy, weights, target, err);
    if (!a) {
        detail::raise(err);
    }
    return std::move(*a);
}

namespace detail {

/// A standard normal draw (Box–Muller) and a gamma(shape >= 1) draw (Marsaglia and Tsang, 2000).
struct skew_sampler {
    std::uint64_t state;
    double spare = 0;
    bool has_spare = false;

    auto uniform() noexcept -> double {  // in (0, 1)
        return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53;
    }
    auto normal() noexcept -> double {
        if (has_spare) {
            has_spare = false;
            return spare;
        }
        const double r = std::sqrt(-2.0 * std::log(uniform()));
        const double t = 6.283185307179586476925 * uniform();
        spare = r * std::sin(t);
        has_spare = true;
        return r * std::cos(t);
    }
    auto gamma(double shape) noexcept -> double {
        const double d = shape - 1.0 / 3.0;
        const double c = 1.0 / std::sqrt(9.0 * d);
        for (;;) {
            double x = 0;
            double v = 0;
            do {
                x = normal();
                v = 1.0 + c * x;
            } while (v <= 0);
            v = v * v * v;
            const double u = uniform();
            if (u < 1.0 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) {
                return d * v;
            }
        }
    }
};

inline auto check_skew_weights(std::span<const double> weights, error_info& err) -> bool {
    if (weights.empty()) {
        err = fail(errc::invalid_argument, "skew forecast: no nodes");
        return false;
    }
    for (std::size_t i = 0; i < weights.size(); ++i) {
        if (!(weights[i] > 0) || !is_finite(weights[i])) {
            err = fail(errc::invalid_weight, "skew forecast: node " + std::to_string(i) + "'s weight " +
                                                 std::to_string(weights[i]) + " is not finite and > 0");
            return false;
        }
    }
    return true;
}

/// The nearest-rank quantile q of sorted values.
inline auto nearest_rank(const std::vector<double>& sorted, double q) -> double {
    const auto n = static_cast<double>(sorted.size());
    const auto rank = static_cast<std::size_t>(std::ceil(q * n));
    return sorted[rank == 0 ? 0 : rank - 1];
}

/// Nodes "node-0" ... with the weights.
inline auto skew_nodes(std::span<const double> weights) -> std::vector<node> {
    std::vector<node> nodes;
    nodes.reserve(weights.size());
    for (std::size_t i = 0; i < weights.size(); ++i) {
        nodes.push_back({"node-" + std::to_string(i), weights[i]});
    }
    return nodes;
}

/// The busiest node's share over its fair share, from exact shares.
template <class S>
auto busiest_over_fair(const S& s) -> double {
    const auto shares = ownership(s).share;
    double total = 0;
    for (const auto& n : s.nodes()) {
        total += n.weight;
    }
    double worst = 0;
    for (std::size_t i = 0; i < shares.size(); ++i) {
        worst = std::max(worst, shares[i] / (s.nodes()[i].weight / total));
    }
    return worst;
}

}  // namespace detail

inline auto forecast_ring_skew(std::span<const double> weights, std::size_t vnodes, std::size_t trials,
                               std::uint64_t seed) -> skew_forecast {
    error_info err;
    if (!detail::check_skew_weights(weights, err)) {
        detail::raise(err);
    }
    if (trials == 0) {
        detail::raise(detail::fail(errc::invalid_argument, "skew forecast: no trials"));
    }
    std::vector<double> points(weights.size());
    double weight = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double want = static_cast<double>(vnodes) * weights[i];
        if (!(want < 0x1p40)) {  // a count far beyond any ring, and beyond exact integers soon after
            detail::raise(detail::fail(errc::invalid_vnodes, "skew forecast: " + std::to_string(vnodes) +
                                                                 " vnodes give node " + std::to_string(i) +
                                                                 " more than 2^40 points"));
        }
        const auto count = detail::round_half_away(want);
        points[i] = static_cast<double>(count);
        weight += weights[i];
        if (count == 0) {
            detail::raise(detail::fail(errc::invalid_vnodes, "skew forecast: " + std::to_string(vnodes) +
                                                                 " vnodes give node " + std::to_string(i) + " no point"));
        }
    }
    detail::skew_sampler rng{seed * 0x9e3779b97f4a7c15ULL + 0x6b6579706c616365ULL};
    std::vector<double> worst(trials);
    std::vector<double> g(weights.size());
    for (std::size_t t = 0; t < trials; ++t) {
        double sum = 0;
        for (std::size_t i = 0; i < g.size(); ++i) {
            g[i] = rng.gamma(points[i]);
            sum += g[i];
        }
        double w = 0;
        for (std::size_t i = 0; i < g.size(); ++i) {
            w = std::max(w, (g[i] / sum) / (weights[i] / weight));
        }
        worst[t] = w;
    }
    std::sort(worst.begin(), worst.end());
    return {detail::nearest_rank(worst, 0.50), detail::nearest_rank(worst, 0.99), false, trials};
}

inline auto forecast_maglev_skew(std::span<const double> weights, std::uint64_t table_size) -> skew_forecast {
    const auto m = maglev::build(detail::skew_nodes(weights), {.table_size = table_size});
    const double w = detail::busiest_over_fair(m);
    return {w, w, true, 0};
}

inline auto forecast_partitions_skew(std::span<const double> weights, std::uint32_t partition_count) -> skew_forecast {
    const auto p = partitions::build(detail::skew_nodes(weights), {.partitions = partition_count, .replicas = 1});
    const double w = detail::busiest_over_fair(p);
    return {w, w, true, 0};
}

namespace detail {

/// forecast_token_skew(), and the bytes of the last growth's ring in *memory when given.
inline auto token_forecast(std::span<const double> weights, std::size_t tokens, std::size_t trials,
                           std::uint64_t seed, std::size_t* memory) -> skew_forecast {
    error_info err;
    if (!check_skew_weights(weights, err)) {
        raise(err);
    }
    if (trials == 0) {
        raise(fail(errc::invalid_argument, "skew forecast: no trials"));
    }
    const auto nodes = skew_nodes(weights);
    std::vector<std::size_t> counts(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const double want = static_cast<double>(tokens) * weights[i];
        const auto c = want < static_cast<double>(max_allocated_tokens) + 1 ? round_half_away(want) : max_allocated_tokens + 1;
        if (c == 0 || c > max_allocated_tokens) {
            raise(fail(errc::invalid_vnodes, "skew forecast: " + std::to_string(tokens) + " tokens give node " +
                                                 std::to_string(i) + " " +
                                                 (c > max_allocated_tokens ? "more than " + std::to_string(max_allocated_tokens)
                                                                           : std::to_string(c)) +
                                                 " tokens, outside 1.." + std::to_string(max_allocated_tokens)));
        }
        counts[i] = static_cast<std::size_t>(c);
    }
    std::vector<double> worst(trials);
    for (std::size_t t = 0; t < trials; ++t) {
        std::vector<token_holder> holders;
        holders.reserve(nodes.size());
        std::vector<compat::ring_point<std::uint64_t>> points;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            auto chosen = allocate_tokens(holders, nodes[i], counts[i], {.factor = 1}, seed + t);
            for (const auto p : chosen) {
                points.push_back({p, static_cast<std::uint32_t>(i)});
            }
            holders.push_back({nodes[i], std::move(chosen)});
        }
        const auto circle = token_ring::build(nodes, compat::given_points<std::uint64_t>(std::move(points)));
        worst[t] = busiest_over_fair(circle);
        if (memory != nullptr) {
            *memory = circle.memory_bytes();
        }
    }
    std::sort(worst.begin(), worst.end());
    return {nearest_rank(worst, 0.50), nearest_rank(worst, 0.99), false, trials};
}

}  // namespace detail

inline auto forecast_token_skew(std::span<const double> weights, std::size_t tokens, std::size_t trials,
                                std::uint64_t seed) -> skew_forecast {
    return detail::token_forecast(weights, tokens, trials, seed, nullptr);
}

inline auto try_advise_skew(std::string_view strategy, std::span<const double> weights, double target, error_info& err)
    -> std::optional<skew_advice> {
    if (!detail::check_skew_weights(weights, err)) {
        return std::nullopt;
    }
    if (!(target >= 1.0) || !detail::is_finite(target)) {
        err = detail::fail(errc::invalid_argument,
                           "skew target " + std::to_string(target) + " is below 1 (1 is perfect balance)");
        return std::nullopt;
    }
    const auto unreachable = [&](const std::string& what) {
        err = detail::fail(errc::invalid_argument, "skew target " + std::to_string(target) + " is out of reach: " + what);
        return std::nullopt;
    };
    skew_advice a;
    a.strategy = std::string(strategy);
    const auto nodes = detail::skew_nodes(weights);
    if (strategy == "ring") {
        a.parameter = "vnodes";
        // The least V whose forecast p99 meets the target: bisection on a quick forecast (2,000
        // memberships), then the full one, stepping up while it misses.
        double least = *std::min_element(weights.begin(), weights.end());
        const std::size_t cap = std::size_t{1} << 16;
        if (!(std::ceil(0.5 / least) <= static_cast<double>(cap))) {
            return unreachable("the lightest node needs more than " + std::to_string(cap) +
                               " vnodes a unit of weight for one point");
        }
        const std::size_t first = static_cast<std::size_t>(std::ceil(0.5 / least));  // every node a point
        std::size_t hi = std::max<std::size_t>(first, 1);
        while (forecast_ring_skew(weights, hi, 2000).p99 > target) {
            if (hi >= cap) {
                return unreachable("a ring of " + std::to_string(cap) + " vnodes a unit of weight forecasts p99 " +
                                   std::to_string(forecast_ring_skew(weights, cap, 2000).p99));
            }
            hi = std::min(cap, hi * 2);
        }
        std::size_t lo = std::max<std::size_t>(first, hi / 2);
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (forecast_ring_skew(weights, mid, 2000).p99 > target) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        a.value = hi;
        a.forecast = forecast_ring_skew(weights, hi);
        while (a.forecast.p99 > target && a.value < cap) {
            a.value += std::max<std::uint64_t>(1, a.value / 100);
            a.forecast = forecast_ring_skew(weights, a.value);
        }
        // Memory is linear in the points: measured on a build of at most 2^22 points, scaled.
        double weight = 0;
        for (const double w : weights) {
            weight += w;
        }
        const auto built = std::max<std::uint64_t>(
            1, std::min<std::uint64_t>(a.value, static_cast<std::uint64_t>(4194304.0 / weight)));
        a.memory_bytes = static_cast<std::size_t>(
            static_cast<double>(ring::build(nodes, {.vnodes = static_cast<std::uint32_t>(built)}).memory_bytes()) *
            static_cast<double>(a.value) / static_cast<double>(built));
    } else if (strategy == "maglev") {
        a.parameter = "table_size";
        // From 100 N up: Maglev's paper keeps M above 100 N, and below that a change moves far
        // more than the minimum whatever the balance. Equal weights: entries are dealt in turns,
        // so the busiest node has ceil(M / N) of M entries, at most 1 + N / M times its share.
        // Weights: every prime 1% above the last, each built.
        const auto n = static_cast<std::uint64_t>(weights.size());
        const bool equal = std::all_of(weights.begin(), weights.end(), [&](double w) { return w == weights[0]; });
        constexpr std::uint64_t cap = std::uint64_t{1} << 24;
        std::uint64_t m = std::max<std::uint64_t>(100 * n, 2);
        while (a.value == 0) {
            while (!detail::is_prime(m)) {
                ++m;
            }
            if (m > cap || (equal && target == 1.0)) {  // a prime of at least 100 N entries never divides evenly
                return unreachable("no prime Maglev table of at most " + std::to_string(cap) + " entries meets it");
            }
            const bool may = !equal || static_cast<double>((m + n - 1) / n) * static_cast<double>(n) /
                                               static_cast<double>(m) <= target;
            if (may) {
                const auto f = forecast_maglev_skew(weights, m);
                if (f.p99 <= target) {
                    a.value = m;
                    a.forecast = f;
                    break;
                }
            }
            m = equal ? m + 1 : std::max(m + 1, m + m / 100);
        }
        a.memory_bytes = maglev::build(nodes, {.table_size = a.value}).memory_bytes();
    } else if (strategy == "partitions") {
        a.parameter = "partitions";
        std::uint32_t q = 1;
        while (q < weights.size()) {
            q *= 2;
        }
        for (;; q *= 2) {
            if (q > max_partitions) {
                return unreachable("no partition count up to " + std::to_string(max_partitions) + " meets it");
            }
            const auto f = forecast_partitions_skew(weights, q);
            if (f.p99 <= target) {
                a.value = q;
                a.forecast = f;
                break;
            }
        }
        a.memory_bytes = partitions::build(nodes, {.partitions = static_cast<std::uint32_t>(a.value), .replicas = 1})
                             .memory_bytes();
    } else if (strategy == "tokens") {
        a.parameter = "tokens";
        // The least token count a node whose growths meet the target: doubling from 1, then
        // bisection, each a real allocation (one growth while searching, the default after).
        const auto meets = [&](std::size_t t, std::size_t trials) {
            return forecast_token_skew(weights, t, trials).p99 <= target;
        };
        // Token counts from `first` (the least giving every node a token) to `cap_tokens` (1,024,
        // or fewer where the heaviest node would ask for more than max_allocated_tokens).
        const double least = *std::min_element(weights.begin(), weights.end());
        const double most = *std::max_element(weights.begin(), weights.end());
        const double first_real = std::ceil(0.5 / least);
        const double cap_real = std::floor(static_cast<double>(max_allocated_tokens) / most);
        const std::size_t cap_tokens = cap_real >= 1024.0 ? 1024 : static_cast<std::size_t>(std::max(cap_real, 0.0));
        if (!(first_real <= static_cast<double>(cap_tokens))) {
            return unreachable("the lightest node needs " + std::to_string(first_real) +
                               " tokens a unit of weight for one token, above the " + std::to_string(cap_tokens) +
                               " the heaviest node allows (at most " + std::to_string(max_allocated_tokens) +
                               " tokens a node, 1,024 a unit)");
        }
        const auto first = std::max<std::size_t>(1, static_cast<std::size_t>(first_real));
        std::size_t hi = first;
        while (!meets(hi, 1)) {
            if (hi >= cap_tokens) {
                return unreachable(std::to_string(cap_tokens) + " tokens a unit of weight forecast p99 " +
                                   std::to_string(forecast_token_skew(weights, cap_tokens, 1).p99));
            }
            hi = std::min(cap_tokens, hi * 2);
        }
        std::size_t lo = std::max<std::size_t>(first, hi / 2);
        while (lo < hi) {
            const std::size_t mid = lo + (hi - lo) / 2;
            if (meets(mid, 1)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        a.value = hi;
        a.forecast = detail::token_forecast(weights, hi, token_forecast_trials, 1, &a.memory_bytes);
        while (a.forecast.p99 > target && a.value < cap_tokens) {  // 1% steps, as the ring's
            a.value = std::min<std::uint64_t>(cap_tokens, a.value + std::max<std::uint64_t>(1, a.value / 100));
            a.forecast = detail::token_forecast(weights, a.value, token_forecast_trials, 1, &a.memory_bytes);
        }
        if (a.forecast.p99 > target) {
            return unreachable(std::to_string(cap_tokens) + " tokens a unit of weight forecast p99 " +
                               std::to_string(a.forecast.p99));
        }
    } else {
        err = detail::fail(errc::invalid_argument, "skew advisor: strategy " + detail::quote(strategy) +
                                                       " is not ring, maglev, partitions or tokens");
        return std::nullopt;
    }
    err.clear();
    return a;
}

KEYPLACE_NAMESPACE_END

#endif
