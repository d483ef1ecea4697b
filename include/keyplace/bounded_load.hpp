// keyplace — which node owns a key. Consistent hashing with bounded loads (Mirrokni, Thorup,
// Zadimoghaddam, SODA 2018) over any strategy with a preference order: a node takes a request
// while its load stays within its cap, else the request goes on along the order. load_caps (the
// exact cap arithmetic), load_tracker (the live form: lock-free admission of in-flight requests)
// and bounded_assign (the batch form, in a canonical order).
#ifndef KEYPLACE_BOUNDED_LOAD_HPP_INCLUDED
#define KEYPLACE_BOUNDED_LOAD_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/weight.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Bounded-load parameters. load_factor is c = 1 + epsilon: a node's cap is c times its fair
/// share of the requests counted. 1 <= c <= 2^20, or +infinity for no bound (the plain
/// strategy); c counts in units of 2^-16 (llround(c * 65536)).
struct bounded_load_config {
    double load_factor = 1.25;
};

/// The largest finite load factor, and the largest total (requests, or request weight) a cap is
/// computed for: the exact products then fit in 128 bits.
inline constexpr double bounded_load_max_factor = 1048576.0;
inline constexpr std::uint64_t bounded_load_max_total = std::uint64_t{1} << 32;

/// The caps of a strategy's nodes. With C = llround(c * 65536), q_i = llround(w_i * 65536) (the
/// weights of rendezvous and Maglev) and Q = the sum of q_i over the holders,
///   cap_i(T) = ceil(C * T * q_i / (65536 * Q))
/// in exact integer arithmetic, for a holder i; 0 for a node that holds nothing; unbounded
/// (UINT64_MAX) when c is infinite. T is the total the caps are taken of: in-flight requests,
/// the one being placed included (live form), or the weight placed so far, this request's
/// included (batch form). Since C >= 65536, the caps of the holders sum to at least T.
class load_caps {
public:
    /// Caps for s's nodes. Throws keyplace::error: a load factor that is NaN, below 1 or finite
    /// above 2^20 (invalid_argument), a node weight outside 2^-16 .. 2^37 (invalid_weight).
    template <placement_strategy S>
    [[nodiscard]] static auto build(const S& s, const bounded_load_config& config = {}) -> load_caps {
        load_caps out;
        return detail::value_or_raise(out.assign(s, config), std::move(out));
    }
    template <placement_strategy S>
    [[nodiscard]] static auto try_build(const S& s, const bounded_load_config& config, error_info& err)
        -> std::optional<load_caps> {
        load_caps out;
        auto f = out.assign(s, config);
        return detail::report(std::move(f), std::move(out), err);
    }

    /// The validation alone: the same message as build() would give, or none.
    [[nodiscard]] static auto check(const bounded_load_config& config) -> error_info {
        const double c = config.load_factor;
        if (std::isnan(c)) {
            return detail::fail(errc::invalid_argument, "load factor nan is not a number");
        }
        if (!(c >= 1.0)) {
            return detail::fail(errc::invalid_argument, "load factor " + detail::format_weight(c) +
                                                            " is below 1: the caps would hold fewer requests than arrive");
        }
        if (c > bounded_load_max_factor && !std::isinf(c)) {
            return detail::fail(errc::invalid_argument, "load factor " + detail::format_weight(c) +
                                                            " is above 1048576 (2^20); use infinity for no bound");
        }
        return {};
    }

    /// cap_i(T) as above; T is clamped to bounded_load_max_total. O(1). Precondition: i is below
    /// the node count, checked by KEYPLACE_ASSERT (config.hpp).
    [[nodiscard]] auto cap(node_index i, std::uint64_t total) const noexcept -> std::uint64_t {
        KEYPLACE_ASSERT(i.value < weight_q_.size());
        if (factor_q_ == 0) {
            return std::numeric_limits<std::uint64_t>::max();
        }
        const std::uint64_t t = std::min(total, bounded_load_max_total);
        // C * T * q_i <= 2^36 * 2^32 * 2^53 and 65536 * Q <= 2^16 * 2^32 * 2^53 fit 128 bits, and
        // the cap, at most ceil(C * T / 65536) <= 2^52, fits 64 (u128: also where there is no
        // 128-bit integer type, as on 32-bit targets).
        const detail::u128 num = detail::mul(detail::mul_wide(factor_q_, t), weight_q_[i.value]);
        return detail::div_ceil(num, detail::mul(sum_q_, 65536U));
    }
    /// Whether c is infinite (every cap unbounded).
    [[nodiscard]] auto unbounded() const noexcept -> bool { return factor_q_ == 0; }
    [[nodiscard]] auto load_factor() const noexcept -> double { return factor_; }
    [[nodiscard]] auto size() const noexcept -> std::size_t { return weight_q_.size(); }

private:
    template <placement_strategy S>
    auto assign(const S& s, const bounded_load_config& config) -> detail::failure {
        if (auto f = check(config)) {
            return f;
        }
        std::vector<std::uint64_t> q(s.size());
        detail::u128 sum{0, 0};  // up to 2^32 nodes of 2^53
        for (std::size_t i = 0; i < q.size(); ++i) {
            const node_index at{static_cast<std::uint32_t>(i)};
            if (!s.holds(at)) {
                continue;
            }
            if (auto f = detail::quantize_weight(s.node(at), q[i])) {
                return f;
            }
            sum = detail::add(sum, {0, q[i]});
        }
        weight_q_ = std::move(q);
        sum_q_ = sum;
        factor_ = config.load_factor;
        factor_q_ = std::isinf(config.load_factor)
                        ? 0
                        : detail::round_half_away(config.load_factor * detail::weight_scale);  // exact product
        return {};
    }

    std::vector<std::uint64_t> weight_q_;
    detail::u128 sum_q_{0, 1};
    double factor_ = 1.25;
    std::uint64_t factor_q_ = 0;  // 0: unbounded
};

namespace detail {
inline constexpr std::uint32_t no_node = std::numeric_limits<std::uint32_t>::max();

/// The first node of s's walk from point that admit(i) accepts, or no_node when the walk ends
/// without one (it visits every holder, a ring's nodes once per point).
template <class S, class Admit>
[[nodiscard]] auto first_admitted(const S& s, std::uint64_t point, Admit& admit) noexcept -> std::uint32_t {
    std::uint32_t got = no_node;
    s.walk(point, [&](node_index i) noexcept {
        if (admit(i)) {
            got = i.value;
            return false;
        }
        return true;
    });
    return got;
}
}  // namespace detail

/// The live form, for request routing: in-flight requests per node, admitted lock-free from any
/// number of threads. A tracker is bound to one strategy value (a copy it owns); a new
/// membership is a new tracker. Tokens keep their tracker's counters alive, so a token of a
/// retired tracker releases safely (into counters nobody reads any more).
///
/// Admission: acquire counts the request in the total T first, then walks the strategy's
/// preference order from the key's point and takes the first node i whose load l satisfies
/// l + 1 <= cap_i(T), by compare-and-swap of l to l + 1 (T as read once per pass). So no
/// admission ever lifts a node above its cap at the total it saw; with no releases under way
/// the total only grows and every node is at all times within its cap at the current total.
/// A release lowers the node's load, then the total (so the loads never sum above the total);
/// a smaller total may leave a node above its new cap, and it then takes nothing until it is
/// under again. Since the caps sum to at least T and the loads to at most T - 1 when a pass
/// reads T, a pass in which every node looks full saw another admission happen: the pass is
/// repeated with a fresh T, and some acquire always completes (lock-free; alone, one pass).
/// Hence "every node full" never returns a node over its cap: it retries.
template <ordered_placement_strategy S>
class load_tracker {
    struct alignas(64) counter {
        std::atomic<std::uint64_t> value{0};
    };
    struct state {
        S strategy;
        load_caps caps;
        std::unique_ptr<counter[]> loads;
        counter total;
        counter overflows;
        state(S s, load_caps c) : strategy(std::move(s)), caps(std::move(c)), loads(new counter[strategy.size()]) {}
    };

public:
    /// A held request: move-only, releases its node on destruction or release().
    class token {
    public:
        token() = default;
        token(const token&) = delete;
        auto operator=(const token&) -> token& = delete;
        token(token&& o) noexcept : state_(std::move(o.state_)), node_(o.node_) {}
        auto operator=(token&& o) noexcept -> token& {
            if (this != &o) {
                release();
                state_ = std::move(o.state_);
                node_ = o.node_;
            }
            return *this;
        }
        ~token() { release(); }

        /// Whether this token holds a request.
        [[nodiscard]] explicit operator bool() const noexcept { return state_ != nullptr; }
        /// The node the request was admitted to (meaningful while the token holds one).
        [[nodiscard]] auto node() const noexcept -> node_index { return node_; }
        /// Ends the request now; later calls (and the destructor) do nothing.
        void release() noexcept {
            if (state_) {
                state_->loads[node_.value].value.fetch_sub(1, std::memory_order_acq_rel);
                state_->total.value.fetch_sub(1, std::memory_order_acq_rel);
                state_.reset();
            }
        }

    private:
        friend class load_tracker;
        token(std::shared_ptr<state> s, node_index i) noexcept : state_(std::move(s)), node_(i) {}
        std::shared_ptr<state> state_;
        node_index node_{};
    };

    /// A tracker over s with no request in flight. Throws as load_caps::build.
    [[nodiscard]] static auto build(S s, const bounded_load_config& config = {}) -> load_tracker {
        load_caps caps = load_caps::build(s, config);
        return load_tracker(std::make_shared<state>(std::move(s), std::move(caps)));
    }
    [[nodiscard]] static auto try_build(S s, const bounded_load_config& config, error_info& err)
        -> std::optional<load_tracker> {
        auto caps = load_caps::try_build(s, config, err);
        if (!caps) {
            return std::nullopt;
        }
        return load_tracker(std::make_shared<state>(std::move(s), std::move(*caps)));
    }

    /// Admits a request for key (hashed with S::key_hash) and returns its token. noexcept apart
    /// from the token's shared ownership (no allocation: the counters exist already). Not for a
    /// strategy whose key point does not decide its owner (go-mpchash: detail::needs_key_bytes),
    /// which bounded loads cannot follow: it does not compile for one.
    template <class Key>
        requires(!detail::needs_key_bytes<S>)
    [[nodiscard]] auto acquire(const Key& key) noexcept -> token {
        return acquire_point(hash_key(typename S::key_hash{}, key));
    }
    /// Admits a request for an already hashed point.
    [[nodiscard]] auto acquire_point(std::uint64_t point) noexcept -> token {
        state& st = *state_;
        st.total.value.fetch_add(1, std::memory_order_acq_rel);
        bool passed_over = false;  // a node at its cap was passed over
        for (;;) {
            const std::uint64_t t = st.total.value.load(std::memory_order_acquire);
            auto admit = [&](node_index i) noexcept {
                const std::uint64_t cap = st.caps.cap(i, t);
                auto& load = st.loads[i.value].value;
                std::uint64_t cur = load.load(std::memory_order_relaxed);
                while (cur < cap) {
                    if (load.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel,
                                                   std::memory_order_relaxed)) {
                        return true;
                    }
                }
                passed_over = true;
                return false;
            };
            const std::uint32_t got = detail::first_admitted(st.strategy, point, admit);
            if (got != detail::no_node) {
                if (passed_over) {
                    st.overflows.value.fetch_add(1, std::memory_order_relaxed);
                }
                return token(state_, node_index{got});
            }
        }
    }

    /// Requests in flight on node i (precondition: i < size(), checked by KEYPLACE_ASSERT), and in all.
    [[nodiscard]] auto load(node_index i) const noexcept -> std::uint64_t {
        KEYPLACE_ASSERT(i.value < state_->strategy.size());
        return state_->loads[i.value].value.load(std::memory_order_acquire);
    }
    [[nodiscard]] auto in_flight() const noexcept -> std::uint64_t {
        return state_->total.value.load(std::memory_order_acquire);
    }
    /// Requests admitted, since the tracker was built, after passing over a node at its cap
    /// (their first choice was full): the overflows a bounded load exists for.
    [[nodiscard]] auto overflows() const noexcept -> std::uint64_t {
        return state_->overflows.value.load(std::memory_order_relaxed);
    }
    [[nodiscard]] auto strategy() const noexcept -> const S& { return state_->strategy; }
    [[nodiscard]] auto caps() const noexcept -> const load_caps& { return state_->caps; }

private:
    explicit load_tracker(std::shared_ptr<state> s) : state_(std::move(s)) {}
    std::shared_ptr<state> state_;
};

namespace detail {
/// The canonical order of a batch: by point, then input index.
[[nodiscard]] inline auto canonical_order(std::span<const std::uint64_t> points) -> std::vector<std::uint32_t> {
    std::vector<std::uint32_t> order(points.size());
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return points[a] != points[b] ? points[a] < points[b] : a < b;
    });
    return order;
}

[[nodiscard]] inline auto check_batch(std::size_t points, std::span<const std::uint32_t> weights) -> failure {
    if (points >= bounded_load_max_total) {
        return fail(errc::invalid_argument, "a batch of " + std::to_string(points) +
                                                " requests is above the limit of 4294967295");
    }
    if (weights.empty()) {
        return {};
    }
    if (weights.size() != points) {
        return fail(errc::invalid_argument, std::to_string(weights.size()) + " request weights for " +
                                                std::to_string(points) + " requests");
    }
    std::uint64_t sum = 0;
    for (std::size_t k = 0; k < weights.size(); ++k) {
        if (weights[k] == 0) {
            return fail(errc::invalid_argument, "request " + std::to_string(k) + " has weight 0; weights are >= 1");
        }
        sum += weights[k];
    }
    if (sum >= bounded_load_max_total) {
        return fail(errc::invalid_argument, "request weights sum to " + std::to_string(sum) +
                                                ", above the limit of 4294967295");
    }
    return {};
}
}  // namespace detail

/// The batch form: owners[k] for the request at points[k], weights[k] >= 1 (empty: all 1). The
/// requests are placed one at a time in the canonical order — by point, then by input index —
/// and all held: request k's total T is the weight placed before it plus its own, and it goes
/// to the first node of its preference order whose load l satisfies l + weights[k] <= cap(T).
/// With unit weights that node always exists (the caps sum to at least T); a heavier request
/// that fits nowhere goes to the node it overshoots least, the first in its order on a tie.
/// This is exactly a load_tracker acquiring the requests in that order and releasing none.
/// Throws keyplace::error (invalid_argument): the load factor (as load_caps), weights of another
/// length than points, a weight 0, a total weight of 2^32 or more. O(m log m) to sort plus the
/// walks.
template <ordered_placement_strategy S>
[[nodiscard]] auto try_bounded_assign(const S& s, std::span<const std::uint64_t> points,
                                      std::span<const std::uint32_t> weights, const bounded_load_config& config,
                                      error_info& err) -> std::optional<std::vector<node_index>> {
    if (auto f = detail::check_batch(points.size(), weights)) {
        err = std::move(f);
        return std::nullopt;
    }
    auto caps = load_caps::try_build(s, config, err);
    if (!caps) {
        return std::nullopt;
    }
    std::vector<std::uint64_t> load(s.size());
    std::vector<node_index> out(points.size());
    std::uint64_t total = 0;
    for (const std::uint32_t k : detail::canonical_order(points)) {
        const std::uint64_t r = weights.empty() ? 1 : weights[k];
        total += r;
        std::uint32_t least = detail::no_node;
        std::uint64_t least_over = 0;
        auto admit = [&](node_index i) noexcept {
            const std::uint64_t cap = caps->cap(i, total);
            if (load[i.value] + r <= cap) {
                return true;
            }
            const std::uint64_t over = load[i.value] + r - cap;
            if (least == detail::no_node || over < least_over) {
                least = i.value;
                least_over = over;
            }
            return false;
        };
        std::uint32_t got = detail::first_admitted(s, points[k], admit);
        if (got == detail::no_node) {
            got = least;
        }
        load[got] += r;
        out[k] = node_index{got};
    }
    err.clear();
    return out;
}

template <ordered_placement_strategy S>
[[nodiscard]] auto bounded_assign(const S& s, std::span<const std::uint64_t> points,
                                  std::span<const std::uint32_t> weights, const bounded_load_config& config = {})
    -> std::vector<node_index> {
    error_info err;
    auto out = try_bounded_assign(s, points, weights, config, err);
    if (!out) {
        detail::raise(err);
    }
    return std::move(*out);
}

/// Unit weights.
template <ordered_placement_strategy S>
[[nodiscard]] auto bounded_assign(const S& s, std::span<const std::uint64_t> points,
                                  const bounded_load_config& config = {}) -> std::vector<node_index> {
    return bounded_assign(s, points, std::span<const std::uint32_t>{}, config);
}

KEYPLACE_NAMESPACE_END

#endif
