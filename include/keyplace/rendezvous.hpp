// keyplace — which node owns a key. Weighted rendezvous (highest random weight) hashing:
// Thaler & Ravishankar, "Using Name-Based Mappings to Increase Hit Rates" (1998), with the
// logarithmic weighting of Schindelhauer & Schomaker, "Weighted Distributed Hash Tables"
// (SPAA 2005), in fixed-point integer arithmetic (placement contract v1, doc/contract.md).
#ifndef KEYPLACE_RENDEZVOUS_HPP_INCLUDED
#define KEYPLACE_RENDEZVOUS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/detail/log2.hpp>
#include <keyplace/detail/rendezvous_lanes.hpp>
#include <keyplace/detail/weight.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/detail/xxhash.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

namespace detail {

/// The rendezvous scorer: per node a seed and a quantized weight; for a key every node draws
/// E = -log2(u) in 2^-48 units, u from the key and the node's seed, and the node with the
/// smallest E / weight wins (ties to the lower index). Not API.
///
/// pick scores every node exactly below 8 nodes; from there it bounds each node's score from its
/// hash first (detail/rendezvous_lanes.hpp) and scores exactly only the few the bound cannot rule
/// out, eight nodes at a time where the CPU has AVX-512. Every path gives the same owner.
template <class Unused = void>
class basic_rendezvous_scorer {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

public:
    /// How pick scores: `automatic` chooses by size and CPU; the others are for tests and bench/.
    enum class path { automatic, exact, bounded, avx512 };
    /// From this many nodes pick bounds first (measured: bench/lookup_bench.cpp, rendezvous_*).
    static constexpr std::size_t bounded_from = 8;
    static constexpr std::size_t portable_bounded_from = 24;

    basic_rendezvous_scorer() : table_(&log2_table()) {}

    /// Sets node at's seed (node_hash(id, 0)) and quantized weight, shifting the later ones up.
    void insert(std::size_t at, std::string_view id, std::uint64_t weight) { insert_seed(at, node_hasher(id)(0), weight); }
    /// The same with the seed given (tests give two nodes one seed to make ties).
    void insert_seed(std::size_t at, std::uint64_t seed, std::uint64_t weight) {
        unpad();
        const auto where = static_cast<std::ptrdiff_t>(at);
        seeds_.insert(seeds_.begin() + where, seed);
        weights_.insert(weights_.begin() + where, weight);
        scales_.insert(scales_.begin() + where, hrw_scale(weight));
        offsets_.insert(offsets_.begin() + where, hrw_offset(weight));
        pad();
    }
    void erase(std::size_t at) {
        unpad();
        const auto where = static_cast<std::ptrdiff_t>(at);
        seeds_.erase(seeds_.begin() + where);
        weights_.erase(weights_.begin() + where);
        scales_.erase(scales_.begin() + where);
        offsets_.erase(offsets_.begin() + where);
        pad();
    }
    /// Room for `nodes` nodes without reallocating (build reserves once: no doubling).
    void reserve(std::size_t nodes) {
        const std::size_t lanes = (nodes + 7) / 8 * 8;
        seeds_.reserve(lanes);
        weights_.reserve(nodes);
        scales_.reserve(lanes);
        offsets_.reserve(lanes);
    }
    /// The bytes the per-node arrays hold (capacity).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return (seeds_.capacity() + weights_.capacity()) * sizeof(std::uint64_t) +
               (scales_.capacity() + offsets_.capacity()) * sizeof(double);
    }
    [[nodiscard]] auto size() const noexcept -> std::size_t { return weights_.size(); }
    [[nodiscard]] auto seeds() const noexcept -> std::span<const std::uint64_t> {
        return std::span<const std::uint64_t>(seeds_).first(size());
    }
    [[nodiscard]] auto weights() const noexcept -> std::span<const std::uint64_t> { return weights_; }

    /// The node with the best score for a hashed key. O(N).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index { return pick(point, path::automatic); }
    /// The same by a chosen path (`avx512` where avx512_available(), else `bounded`).
    [[nodiscard]] auto pick(std::uint64_t point, path how) const noexcept -> node_index {
        how = chosen(how);
#if KEYPLACE_DETAIL_HRW_AVX512
        if (how == path::avx512 && hrw_avx512_available()) {
            return node_index{static_cast<std::uint32_t>(hrw_pick_avx512(view(), *table_, point))};
        }
#endif
        // Every other case, an `avx512` that cannot run included, takes a portable path.
        if (how == path::exact) {
            // No threshold to keep, so the few updates stay selects, not a mispredicted branch
            // (hrw_best here measured 1.7x slower at 10 nodes).
            score best{std::numeric_limits<std::uint64_t>::max(), 1};
            std::size_t winner = 0;
            auto keep = [&](std::size_t i, std::uint64_t h) noexcept {
                const score s{hrw_draw(*table_, h), weights_[i]};
                if (s.beats(best)) {
                    best = s;
                    winner = i;
                }
            };
            hrw_scan_portable<false>(view(), point, hrw_no_threshold, keep);
            return node_index{static_cast<std::uint32_t>(winner)};
        }
        hrw_best best;
        auto offer = [&](std::size_t i, std::uint64_t h) noexcept { best.offer(i, hrw_draw(*table_, h), weights_[i]); };
        hrw_scan_portable<true>(view(), point, best.threshold, offer);
        return node_index{static_cast<std::uint32_t>(best.index)};
    }
    /// Whether this build and CPU run the AVX-512 path.
    [[nodiscard]] static auto avx512_available() noexcept -> bool { return hrw_avx512_available(); }

    /// The min(out.size(), size()) best nodes, best first. O(N) up to 64 nodes, then O(N * n).
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept
        -> std::size_t {
        return pick_n(point, out, path::automatic);
    }
    /// The same by a chosen path (for the first 64; the rest score every node exactly). Nodes
    /// whose bound is above the n-th kept score are not scored, as in pick.
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out, path how) const noexcept
        -> std::size_t {
        const std::size_t want = std::min(out.size(), size());
        const hrw_key key = hrw_split(point);
        how = chosen_for_ranking(how);
        if (want <= buffered) {
            return pick_n_buffered(point, out.first(want), how);
        }
        const std::size_t first = pick_n_buffered(point, out.first(buffered), how);
        std::size_t got = first;
        rank_after(key, out[first - 1].value, [&](node_index i) noexcept {
            out[got++] = i;
            return got < want;
        });
        return got;
    }

    /// Visits every node once, best first. visit(node_index) returns whether to go on. The
    /// first 64 cost one scoring pass; each one after them another pass over all nodes.
    template <class Visit>
    void walk(std::uint64_t point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        const hrw_key key = hrw_split(point);
        std::array<node_index, buffered> best{};
        const std::size_t first =
            pick_n_buffered(point, std::span(best).first(std::min(buffered, size())), chosen_for_ranking(path::automatic));
        for (std::size_t k = 0; k < first; ++k) {
            if (!visit(best[k])) {
                return;
            }
        }
        if (first < size()) {
            rank_after(key, best[first - 1].value, visit);
        }
    }

    /// The draw E of node i for a key: -log2(u) in 2^-48 units, u from the key and node seed.
    /// The node with the smallest E / quantized weight wins.
    [[nodiscard]] auto draw(std::uint64_t point, std::size_t i) const noexcept -> std::uint64_t {
        return draw(hrw_split(point), i);
    }

private:
    static constexpr std::size_t buffered = 64;

    // The path `automatic` stands for: exact below 8 nodes, then AVX-512 where the CPU has it,
    // else the portable bound from 24 nodes.
    [[nodiscard]] auto chosen(path how) const noexcept -> path {
        if (how == path::avx512 && !hrw_avx512_available()) {
            return path::bounded;
        }
        if (how != path::automatic) {
            return how;
        }
        return size() < bounded_from                ? path::exact
               : hrw_avx512_available()             ? path::avx512
               : size() >= portable_bounded_from    ? path::bounded
                                                    : path::exact;
    }
    // A ranking keeps several nodes, so more of them pass the bound: below 24 nodes scoring every
    // node is faster on every CPU (rendezvous_replicas3/10: 251 ns bounded, 211 ns exact).
    [[nodiscard]] auto chosen_for_ranking(path how) const noexcept -> path {
        return how == path::automatic && size() < portable_bounded_from ? path::exact : chosen(how);
    }
    [[nodiscard]] auto draw(const hrw_key& key, std::size_t i) const noexcept -> std::uint64_t {
        return hrw_draw(*table_, hrw_hash(key, seeds_[i]));
    }
    [[nodiscard]] auto view() const noexcept -> hrw_nodes {
        return {seeds_.data(), scales_.data(), offsets_.data(), weights_.data(), size(), seeds_.size()};
    }
    // The padded arrays hold size() rounded up to a multiple of 8 lanes; padding never passes.
    void unpad() {
        seeds_.resize(size());
        scales_.resize(size());
        offsets_.resize(size());
    }
    void pad() {
        const std::size_t lanes = (size() + 7) / 8 * 8;
        seeds_.resize(lanes, 0);
        scales_.resize(lanes, 0.0);
        offsets_.resize(lanes, hrw_padding);
    }

    struct score {
        std::uint64_t draw;
        std::uint64_t weight;
        // Strictly better: smaller draw / weight, compared exactly. Ties go to the node met
        // first, and nodes are met in index order.
        [[nodiscard]] auto beats(const score& other) const noexcept -> bool {
            return product_less(draw, other.weight, other.draw, weight);
        }
    };

    // Keeps the best `out.size()` nodes sorted, their scores on the stack. Once out.size() are
    // kept, a node whose bound (rendezvous_lanes.hpp) is above the last kept one's threshold
    // ranks after it, and is not scored.
    [[nodiscard]] auto pick_n_buffered(std::uint64_t point, std::span<node_index> out, path how) const noexcept
        -> std::size_t {
        if (out.empty()) {
            return 0;
        }
        std::array<score, buffered> kept;  // read only where written: no 1 KB clear a call
        std::size_t got = 0;
        double threshold = hrw_no_threshold;
        auto offer = [&](std::size_t i, std::uint64_t h) noexcept {
            const score s{hrw_draw(*table_, h), weights_[i]};
            std::size_t at = got;
            while (at > 0 && s.beats(kept[at - 1])) {
                --at;
            }
            if (at == out.size()) {
                return;
            }
            const std::size_t last = std::min(got, out.size() - 1);
            for (std::size_t j = last; j > at; --j) {
                kept[j] = kept[j - 1];
                out[j] = out[j - 1];
            }
            kept[at] = s;
            out[at] = node_index{static_cast<std::uint32_t>(i)};
            got = std::min(got + 1, out.size());
            if (got == out.size()) {
                threshold = hrw_threshold(kept[got - 1].draw, kept[got - 1].weight);
            }
        };
#if KEYPLACE_DETAIL_HRW_AVX512
        if (how == path::avx512 && hrw_avx512_available()) {
            hrw_scan_avx512(view(), point, threshold, offer);
            return got;
        }
#endif
        // Every other case, an `avx512` that cannot run included (bounded, portably).
        if (how == path::exact) {
            hrw_scan_portable<false>(view(), point, threshold, offer);
        } else {
            hrw_scan_portable<true>(view(), point, threshold, offer);
        }
        return got;
    }

    // Selection by rounds after node `after`: each round scores every node and emits the best
    // one ranked after the previous emission, until emit returns false or none is left.
    template <class Emit>
    void rank_after(const hrw_key& key, std::size_t after, Emit&& emit) const noexcept {
        score previous{draw(key, after), weights_[after]};
        std::size_t previous_index = after;
        for (;;) {
            score best{0, 1};
            std::size_t best_index = size();
            for (std::size_t i = 0; i < size(); ++i) {
                const score s{draw(key, i), weights_[i]};
                if (!ranks_after(s, i, previous, previous_index)) {
                    continue;
                }
                if (best_index == size() || ranks_after(best, best_index, s, i)) {
                    best = s;
                    best_index = i;
                }
            }
            if (best_index == size() || !emit(node_index{static_cast<std::uint32_t>(best_index)})) {
                return;
            }
            previous = best;
            previous_index = best_index;
        }
    }

    // Whether (a, ia) comes after (b, ib) in preference order.
    [[nodiscard]] static auto ranks_after(const score& a, std::size_t ia, const score& b,
                                          std::size_t ib) noexcept -> bool {
        return hrw_precedes(b.draw, b.weight, ib, a.draw, a.weight, ia);
    }

    lazy_vector<std::uint64_t> seeds_;    // padded
    lazy_vector<std::uint64_t> weights_;
    lazy_vector<double> scales_;          // padded: the bound's coefficients (rendezvous_lanes.hpp)
    lazy_vector<double> offsets_;         // padded
    const log2_table_type* table_;
};

/// (A template only so that translation units that do not use it do not compile it.)
using rendezvous_scorer = basic_rendezvous_scorer<>;

}  // namespace detail

/// Every key scores every node; the best score wins. A node of weight w wins w/Σw of the keys.
/// Adding a node moves only keys to it; removing one moves only its keys. Lookups are O(N):
/// past a few hundred nodes prefer the ring or Maglev (README.md, "Which strategy"). Nodes are
/// sorted by id.
///
/// build() throws keyplace::error: empty list, empty, over-long or duplicate id, weight not
/// finite and > 0, below 2^-16 or above 2^37 (weights count in units of 2^-16). O(N log N).
/// with() and without() are O(N).
template <class Unused = void>
class basic_rendezvous : public detail::lifecycle<basic_rendezvous<Unused>, keyplace::node, no_config, detail::derivation::any,
                                            detail::node_order::by_id> {
    friend detail::lifecycle<basic_rendezvous, keyplace::node, no_config, detail::derivation::any,
                             detail::node_order::by_id>;

public:
    using key_hash = xxh3;

    /// Per-node values fixed at build: the seed mixed with each key, and the quantized weight.
    [[nodiscard]] auto seeds() const noexcept -> std::span<const std::uint64_t> { return scorer_.seeds(); }
    [[nodiscard]] auto quantized_weights() const noexcept -> std::span<const std::uint64_t> {
        return scorer_.weights();
    }
    /// The bytes of the per-node arrays: 32 a node (seed, quantized weight, the two coefficients
    /// of the score's bound), the padded arrays rounded up to 8 nodes. The node list is apart.
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t { return scorer_.memory_bytes(); }
    /// Every node can win a key.
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return this->size(); }
    [[nodiscard]] auto holds(node_index) const noexcept -> bool { return true; }

    /// The node with the best score for a hashed key. O(N).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index { return scorer_.pick(point); }
    /// The min(out.size(), size()) best nodes, best first. O(N * n).
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept -> std::size_t {
        return scorer_.pick_n(point, out);
    }
    /// Visits every node once, best first. visit(node_index) returns whether to go on. The
    /// first 64 cost one scoring pass; each one after them another pass over all nodes.
    template <class Visit>
    void walk(std::uint64_t point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        scorer_.walk(point, visit);
    }
    /// The draw of node i for a key (see detail::rendezvous_scorer). Precondition: i < size(),
    /// checked by KEYPLACE_ASSERT (config.hpp): a query cannot fail (errors are reported when a
    /// value is built), and an index past the end is the caller's bug, as for any node index.
    [[nodiscard]] auto draw(std::uint64_t point, std::size_t i) const noexcept -> std::uint64_t {
        KEYPLACE_ASSERT(i < this->size());
        return scorer_.draw(point, i);
    }
    /// The scorer, whose pick(point, path) runs a chosen path: for tests and bench/, not API.
    [[nodiscard]] auto detail_scorer() const noexcept -> const detail::rendezvous_scorer& { return scorer_; }

private:
    basic_rendezvous() = default;

    auto assign(std::span<const keyplace::node> input, const no_config&) -> detail::failure {
        std::vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        detail::rendezvous_scorer scorer;
        scorer.reserve(sorted.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            std::uint64_t q = 0;
            if (auto f = detail::quantize_weight(sorted[i], q)) {
                return detail::in_input_order(std::move(f).at_node(i), input);
            }
            scorer.insert(i, sorted[i].id, q);
        }
        this->nodes_ = std::move(sorted);
        scorer_ = std::move(scorer);
        return {};
    }

    // The lifecycle has checked n and that its id is new.
    auto assign_with(const basic_rendezvous& from, const keyplace::node& n) -> detail::failure {
        std::uint64_t q = 0;
        if (auto f = detail::quantize_weight(n, q)) {
            return f;
        }
        const std::size_t k = detail::insert_sorted(this->nodes_, from.nodes_, n);
        scorer_.reserve(from.size() + 1);
        scorer_ = from.scorer_;
        scorer_.insert(k, n.id, q);
        return {};
    }

    auto assign_without(const basic_rendezvous& from, node_index gone) -> detail::failure {
        this->nodes_ = from.nodes_;
        this->nodes_.erase(this->nodes_.begin() + static_cast<std::ptrdiff_t>(gone.value));
        scorer_ = from.scorer_;
        scorer_.erase(gone.value);
        return {};
    }

    detail::rendezvous_scorer scorer_;
};

/// (A template only so that translation units that do not use it do not compile it.)
using rendezvous = basic_rendezvous<>;

KEYPLACE_NAMESPACE_END

#endif
