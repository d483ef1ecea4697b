// keyplace — which node owns a key. Shadow compare: the keys a service actually serves, looked
// up under the snapshot it serves and under a candidate, sampled by key hash so every process
// samples the same keys, with a verdict against the exact expectation from analysis.
#ifndef KEYPLACE_FLEET_SHADOW_HPP_INCLUDED
#define KEYPLACE_FLEET_SHADOW_HPP_INCLUDED

#include <keyplace/analysis.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// What the change looks like, judged on the sampled keys.
enum class shadow_verdict : std::uint8_t {
    insufficient,  ///< fewer than shadow_min_keys keys sampled: no judgement
    minimal,       ///< moved no more than the minimum any placement must move, and no survivor moves
    excess,        ///< more than the minimum, or keys moved between nodes that did not change
    /// More than half of what could have stayed moved, or no node is in both with its weight:
    /// the hash, the ids or the point derivation changed.
    remap,
};

[[nodiscard]] constexpr auto to_string(shadow_verdict v) noexcept -> std::string_view {
    switch (v) {
        case shadow_verdict::insufficient: return "insufficient";
        case shadow_verdict::minimal: return "minimal";
        case shadow_verdict::excess: return "excess";
        case shadow_verdict::remap: return "remap";
    }
    return "?";
}

/// The seed of the sampling hash ("keyplace" in ASCII, big-endian).
inline constexpr std::uint64_t shadow_sample_seed = 0x6b6579706c616365ULL;

/// The fewest sampled keys a verdict is given on.
inline constexpr std::uint64_t shadow_min_keys = 100;

struct shadow_options {
    /// Keys sampled per million: a key is sampled when XXH3-64 of it with the seed
    /// shadow_sample_seed, mod 10^6, is below this, whatever the strategies, so every process
    /// samples the same keys. The seed keeps the sample independent of placements that use the
    /// unseeded XXH3 (modulo's residues would otherwise line up with the sample). At most 10^6.
    std::uint32_t sample_per_million = 10'000;
    /// The most distinct keys remembered (8 bytes each plus the set's overhead); keys beyond it
    /// count as requests only (keys_dropped).
    std::size_t max_keys = std::size_t{1} << 20;
};

/// Moved keys from one node to another.
struct shadow_flow {
    std::string from;
    std::string to;
    std::uint64_t keys = 0;
    std::uint64_t requests = 0;
};

/// The counters, plain, with the expectation from analysis next to them. Fractions are of the
/// sampled keys (moved_fraction) or sampled requests (moved_request_fraction).
struct shadow_report {
    std::uint64_t before_epoch = 0;
    std::uint64_t after_epoch = 0;
    std::uint32_t sample_per_million = 0;
    std::uint64_t requests_seen = 0;     ///< every request observed
    std::uint64_t keys_sampled = 0;      ///< distinct sampled keys
    std::uint64_t requests_sampled = 0;  ///< requests for sampled keys
    std::uint64_t keys_dropped = 0;      ///< observations of sampled keys not remembered (past max_keys)
    std::uint64_t keys_moved = 0;
    std::uint64_t requests_moved = 0;
    /// Keys moved between two nodes present in both with an unchanged weight.
    std::uint64_t survivor_keys_moved = 0;
    double moved_fraction = 0;
    double moved_request_fraction = 0;
    double survivor_fraction = 0;
    /// Four binomial standard deviations of moved_fraction around the expectation, plus 1/keys.
    double tolerance = 0;
    /// The expectation: what analysis says moves, over the whole hash space where exact.
    double expected_moved = 0;
    double expected_survivor = 0;
    double minimum = 0;  ///< the least any placement must move to reach the after-shares
    bool expected_exact = false;
    /// |moved_fraction - expected_moved| <= tolerance: the served keys moved as predicted.
    bool as_predicted = false;
    shadow_verdict verdict = shadow_verdict::insufficient;
    std::vector<shadow_flow> flows;  ///< from -> to, moved keys only, sorted by (from, to)

    [[nodiscard]] auto to_text() const -> std::string;
    [[nodiscard]] auto to_json() const -> std::string;
};

/// An accumulator of one thread (not thread-safe: give each thread its own and merge()). Both
/// lookups are pure functions of the snapshots, which it keeps alive.
class shadow_compare {
public:
    /// Compares before.current() with after.current(). Throws keyplace::error (invalid_argument)
    /// on a null snapshot or a rate above 10^6.
    shadow_compare(std::shared_ptr<const snapshot> before, std::shared_ptr<const snapshot> after,
                   shadow_options options = {})
        : before_(std::move(before)), after_(std::move(after)), options_(options) {
        if (!before_ || !after_) {
            detail::raise(detail::fail(errc::invalid_argument, "shadow_compare needs two snapshots"));
        }
        if (options_.sample_per_million > 1'000'000) {
            detail::raise(detail::fail(errc::invalid_argument, "sample_per_million " +
                                                                   std::to_string(options_.sample_per_million) +
                                                                   " is above 1000000"));
        }
        expect();
    }

    /// Whether a key is in the sample (the same answer in every process).
    [[nodiscard]] auto sampled(std::string_view key) const noexcept -> bool {
        return sample_hash(key) % 1'000'000U < options_.sample_per_million;
    }

    /// Counts `requests` requests for key; returns whether it was sampled.
    auto observe(std::string_view key, std::uint64_t requests = 1) -> bool {
        requests_seen_ += requests;
        const std::uint64_t h = sample_hash(key);
        if (h % 1'000'000U >= options_.sample_per_million) {
            return false;
        }
        requests_sampled_ += requests;
        const std::uint32_t from = before_->current().owner(key);
        const std::uint32_t to = after_->current().owner(key);
        const bool moved = before_->nodes()[from].id != after_->nodes()[to].id;
        if (moved) {
            requests_moved_ += requests;
            flows_[{from, to}] += requests;
        }
        if (keys_.count(h) != 0) {
            return true;
        }
        if (keys_.size() >= options_.max_keys) {
            ++keys_dropped_;
            return true;
        }
        keys_.emplace(h, (std::uint64_t{from} << 32) | to);
        return true;
    }

    /// Adds another accumulator of the same two snapshots: requests add up, a key seen by both
    /// counts once.
    void merge(const shadow_compare& other) {
        if (other.before_ != before_ || other.after_ != after_) {
            detail::raise(detail::fail(errc::invalid_argument, "merge: the accumulators compare other snapshots"));
        }
        requests_seen_ += other.requests_seen_;
        requests_sampled_ += other.requests_sampled_;
        requests_moved_ += other.requests_moved_;
        keys_dropped_ += other.keys_dropped_;
        for (const auto& [pair, r] : other.flows_) {
            flows_[pair] += r;
        }
        for (const auto& [h, owners] : other.keys_) {
            if (keys_.count(h) == 0) {
                if (keys_.size() < options_.max_keys) {
                    keys_.emplace(h, owners);
                } else {
                    ++keys_dropped_;
                }
            }
        }
    }

    [[nodiscard]] auto report() const -> shadow_report;

private:
    [[nodiscard]] static auto sample_hash(std::string_view key) noexcept -> std::uint64_t {
        return XXH3_64bits_withSeed(key.data(), key.size(), shadow_sample_seed);
    }

    // A node present in both current placements with the same weight.
    [[nodiscard]] auto survives(const std::string& id) const noexcept -> bool {
        return survivors_.count(id) != 0;
    }

    void expect();

    std::shared_ptr<const snapshot> before_;
    std::shared_ptr<const snapshot> after_;
    shadow_options options_;
    std::unordered_map<std::uint64_t, std::uint64_t> keys_;  // key hash -> (before << 32) | after owner
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> flows_;  // moved requests
    std::map<std::string, int, std::less<>> survivors_;
    std::uint64_t requests_seen_ = 0;
    std::uint64_t requests_sampled_ = 0;
    std::uint64_t requests_moved_ = 0;
    std::uint64_t keys_dropped_ = 0;
    movement_report expected_{};
};

namespace detail {

#if KEYPLACE_DETAIL_DEFINE
/// A distinct address per key hash type: two strategies hash keys alike when their tags match.
template <class H>
inline constexpr char key_hash_tag = 0;

/// One side of a movement between two placements, taken from its strategy in one visit, so the
/// movement needs no visit over every pair of strategies: the strategy's nodes (id and weight),
/// its ownership, its key hash and its exact regions where it has them.
struct movement_side {
    struct member {
        std::string id;
        double weight = 0;
    };
    using regions_variant = std::variant<std::monostate, residue_regions, arc_regions<std::uint64_t>,
                                         arc_regions<std::uint32_t>, arc_regions<std::int64_t>>;

    const placement* p = nullptr;
    const char* key_hash = nullptr;
    std::vector<member> members;
    ownership_report owned;
    regions_variant regions;

    // What view_of and finish_movement read of a strategy.
    [[nodiscard]] auto size() const noexcept -> std::size_t { return members.size(); }
    [[nodiscard]] auto nodes() const noexcept -> std::span<const member> { return members; }
    [[nodiscard]] auto id_at(std::uint64_t point) const -> const std::string& {
        return members[p->pick(point).value].id;
    }
    [[nodiscard]] auto id_of(std::string_view key) const -> const std::string& {
        return members[p->pick_key(key).value].id;
    }
};

inline auto movement_side_of(const placement& p) -> movement_side {
    movement_side side;
    side.p = &p;
    p.visit([&](const auto& s) {
        using S = std::remove_cvref_t<decltype(s)>;
        side.key_hash = &key_hash_tag<typename S::key_hash>;
        for (std::size_t i = 0; i < s.size(); ++i) {
            side.members.push_back({s.nodes()[i].id, s.nodes()[i].weight});
        }
        side.owned = ownership(s);
        if constexpr (region_strategy<S>) {
            side.regions = s.regions();
        }
    });
    return side;
}

/// Movement between the current placements of two snapshots, by node id: analysis's movement()
/// where both hash keys alike to one point (exact over common regions where it can be, else over
/// analysis_sample()), else over the sample keys "keyplace.sample.<i>" (i < analysis_sample_size),
/// each placed as its own placement places it (its key hash, or its bytes: by_key_bytes()); the
/// minimum then comes from the two ownerships. Each placement is visited once.
template <class = void>  // instantiated only where used
auto snapshot_movement_of(const snapshot& before, const snapshot& after) -> movement_report {
    const movement_side b = movement_side_of(before.current());
    const movement_side a = movement_side_of(after.current());
    const auto vb = view_of(b, b.owned);
    const auto va = view_of(a, a.owned);
    movement_tally t{&vb, &va, {}, 0, 0};
    if (b.key_hash != a.key_hash || b.p->by_key_bytes() || a.p->by_key_bytes()) {
        std::string key;
        for (std::size_t i = 0; i < analysis_sample_size; ++i) {
            key = sample_key(i);
            t.add(b.id_of(key), a.id_of(key), 1.0);
        }
        auto r = finish_movement(b, a, vb, va, t, static_cast<double>(analysis_sample_size), share_method::sampled);
        r.keys = analysis_sample_size;
        return r;
    }
    // Both hash keys alike: analysis's movement(), with its method of the minimum.
    const auto method = b.owned.method == share_method::exact && a.owned.method == share_method::exact
                            ? share_method::exact
                        : b.owned.method == share_method::sampled || a.owned.method == share_method::sampled
                            ? share_method::sampled
                            : share_method::expected;
    double circle = 0;
    const bool exact = std::visit(
        [&](const auto& rb, const auto& ra) -> bool {
            using RB = std::remove_cvref_t<decltype(rb)>;
            using RA = std::remove_cvref_t<decltype(ra)>;
            if constexpr (std::is_same_v<RB, std::monostate> || std::is_same_v<RA, std::monostate>) {
                return false;
            } else {
                if (!refine_together(rb, ra)) {
                    return false;
                }
                for_each_common_region(rb, ra, [&](std::uint64_t point, const u128& m) {
                    t.add(b.id_at(point), a.id_at(point), to_double(m));
                });
                circle = circle_of(rb);
                return true;
            }
        },
        b.regions, a.regions);
    if (exact) {
        auto r = finish_movement(b, a, vb, va, t, circle, method);
        r.exact = true;
        return r;
    }
    const auto& points = analysis_sample();
    for (const auto point : points) {
        t.add(b.id_at(point), a.id_at(point), 1.0);
    }
    auto r = finish_movement(b, a, vb, va, t, static_cast<double>(points.size()), method);
    r.keys = points.size();
    return r;
}
#endif

#ifdef KEYPLACE_COMPILED
auto snapshot_movement(const snapshot& before, const snapshot& after) -> movement_report;  // keyplace::compiled
#else
/// snapshot_movement_of, instantiated only where called.
template <class = void>
auto snapshot_movement(const snapshot& before, const snapshot& after) -> movement_report {
    return snapshot_movement_of(before, after);
}
#endif

}  // namespace detail

// The definitions: here in a header-only build; in keyplace::compiled's source where
// KEYPLACE_COMPILED is defined (config.hpp).
#if KEYPLACE_DETAIL_DEFINE

KEYPLACE_DETAIL_INLINE void shadow_compare::expect() {
    for (const auto& b : before_->nodes()) {
        if (!owns_now(b.state)) {
            continue;
        }
        const snapshot_node* a = after_->find(b.id);
        if (a != nullptr && owns_now(a->state) && a->weight == b.weight) {
            survivors_.emplace(b.id, 0);
        }
    }
    expected_ = detail::snapshot_movement(*before_, *after_);
}

KEYPLACE_DETAIL_INLINE auto shadow_compare::report() const -> shadow_report {
    shadow_report r;
    r.before_epoch = before_->epoch();
    r.after_epoch = after_->epoch();
    r.sample_per_million = options_.sample_per_million;
    r.requests_seen = requests_seen_;
    r.keys_sampled = keys_.size();
    r.requests_sampled = requests_sampled_;
    r.keys_dropped = keys_dropped_;
    r.requests_moved = requests_moved_;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> moved_keys;
    for (const auto& [h, owners] : keys_) {
        const auto from = static_cast<std::uint32_t>(owners >> 32);
        const auto to = static_cast<std::uint32_t>(owners & 0xffffffffU);
        const auto& f = before_->nodes()[from].id;
        const auto& t = after_->nodes()[to].id;
        if (f != t) {
            ++r.keys_moved;
            ++moved_keys[{from, to}];
            r.survivor_keys_moved += survives(f) && survives(t) ? 1U : 0U;
        }
    }
    const auto n = static_cast<double>(r.keys_sampled);
    r.moved_fraction = n > 0 ? static_cast<double>(r.keys_moved) / n : 0;
    r.survivor_fraction = n > 0 ? static_cast<double>(r.survivor_keys_moved) / n : 0;
    r.moved_request_fraction =
        r.requests_sampled > 0 ? static_cast<double>(r.requests_moved) / static_cast<double>(r.requests_sampled) : 0;
    r.expected_moved = expected_.moved;
    r.expected_survivor = expected_.violations;
    r.minimum = expected_.minimum;
    r.expected_exact = expected_.exact;
    // Four standard deviations of a binomial proportion at the expected rate, plus one key; when
    // the expectation is itself sampled (2^17 keys), its own error adds.
    const auto sd = [](double p, double k) {
        p = p < 0 ? 0 : (p > 1 ? 1 : p);  // a sum of measures may pass 1 by an ulp
        return k > 0 ? detail::square_root(p * (1 - p) / k) : 1.0;
    };
    const double own = expected_.exact ? 0.0 : sd(expected_.moved, static_cast<double>(analysis_sample_size));
    r.tolerance = 4 * (sd(r.expected_moved, n) + own) + (n > 0 ? 1 / n : 1.0);
    const double d = r.moved_fraction - r.expected_moved;
    r.as_predicted = (d < 0 ? -d : d) <= r.tolerance;
    if (r.keys_sampled < shadow_min_keys) {
        r.verdict = shadow_verdict::insufficient;
    } else if (r.moved_fraction > r.minimum + (1 - r.minimum) / 2 ||
               (survivors_.empty() && r.moved_fraction > 0.5)) {
        r.verdict = shadow_verdict::remap;
    } else {
        const double slack = 4 * sd(r.minimum, n) + 1 / n;
        r.verdict = r.moved_fraction <= r.minimum + slack && r.survivor_keys_moved == 0 ? shadow_verdict::minimal
                                                                                         : shadow_verdict::excess;
    }
    for (const auto& [pair, requests] : flows_) {
        const auto k = moved_keys.find(pair);
        r.flows.push_back({before_->nodes()[pair.first].id, after_->nodes()[pair.second].id,
                           k == moved_keys.end() ? 0 : k->second, requests});
    }
    std::sort(r.flows.begin(), r.flows.end(), [](const shadow_flow& a, const shadow_flow& b) {
        return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    return r;
}

KEYPLACE_DETAIL_INLINE auto shadow_report::to_text() const -> std::string {
    const auto pct = [](double x) { return detail::fixed(100 * x, 4) + "%"; };
    std::string out;
    out += "shadow: epoch " + std::to_string(before_epoch) + " -> " + std::to_string(after_epoch) + ", sampling " +
           std::to_string(sample_per_million) + " per million keys\n";
    out += "requests seen    " + std::to_string(requests_seen) + "\n";
    out += "keys sampled     " + std::to_string(keys_sampled) + " (" + std::to_string(requests_sampled) +
           " requests" + (keys_dropped > 0 ? ", " + std::to_string(keys_dropped) + " keys past the limit" : "") +
           ")\n";
    out += "moved            " + std::to_string(keys_moved) + " keys " + pct(moved_fraction) + ", " +
           std::to_string(requests_moved) + " requests " + pct(moved_request_fraction) + "\n";
    out += "expected         " + pct(expected_moved) + (expected_exact ? " (exact)" : " (sampled)") + " +- " +
           pct(tolerance) + (as_predicted ? ": as predicted" : ": NOT as predicted") + "\n";
    out += "minimum          " + pct(minimum) + "\n";
    out += "survivor moves   " + std::to_string(survivor_keys_moved) + " keys " + pct(survivor_fraction) +
           " (expected " + pct(expected_survivor) + ")\n";
    out += "verdict          " + std::string(to_string(verdict)) + "\n";
    if (!flows.empty()) {
        out += "\nfrom -> to: keys, requests\n";
        for (const auto& f : flows) {
            out += f.from + " -> " + f.to + ": " + std::to_string(f.keys) + ", " + std::to_string(f.requests) + "\n";
        }
    }
    return out;
}

KEYPLACE_DETAIL_INLINE auto shadow_report::to_json() const -> std::string {
    detail::json_writer w;
    w.begin_object()
        .member("before_epoch", before_epoch)
        .member("after_epoch", after_epoch)
        .member("sample_per_million", sample_per_million)
        .member("requests_seen", requests_seen)
        .member("keys_sampled", keys_sampled)
        .member("requests_sampled", requests_sampled)
        .member("keys_dropped", keys_dropped)
        .member("keys_moved", keys_moved)
        .member("requests_moved", requests_moved)
        .member("survivor_keys_moved", survivor_keys_moved)
        .member("moved_fraction", moved_fraction)
        .member("moved_request_fraction", moved_request_fraction)
        .member("survivor_fraction", survivor_fraction)
        .member("expected_moved", expected_moved)
        .member("expected_survivor", expected_survivor)
        .member("minimum", minimum)
        .member("tolerance", tolerance)
        .member("expected_exact", expected_exact)
        .member("as_predicted", as_predicted)
        .member("verdict", to_string(verdict))
        .key("flows")
        .begin_array();
    for (const auto& f : flows) {
        w.begin_object().member("from", f.from).member("to", f.to).member("keys", f.keys).member("requests", f.requests).end_object();
    }
    w.end_array().end_object();
    return std::move(w).str();
}

#endif  // KEYPLACE_DETAIL_DEFINE

KEYPLACE_NAMESPACE_END

#endif
