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
template <class Unused = void>
class basic_rendezvous_scorer {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

public:
    basic_rendezvous_scorer() : table_(&log2_table()) {}

    /// Sets node at's seed (node_hash(id, 0)) and quantized weight, shifting the later ones up.
    void insert(std::size_t at, std::string_view id, std::uint64_t weight) {
        seeds_.insert(seeds_.begin() + static_cast<std::ptrdiff_t>(at), node_hasher(id)(0));
        weights_.insert(weights_.begin() + static_cast<std::ptrdiff_t>(at), weight);
    }
    void erase(std::size_t at) {
        seeds_.erase(seeds_.begin() + static_cast<std::ptrdiff_t>(at));
        weights_.erase(weights_.begin() + static_cast<std::ptrdiff_t>(at));
    }
    [[nodiscard]] auto size() const noexcept -> std::size_t { return seeds_.size(); }
    [[nodiscard]] auto seeds() const noexcept -> std::span<const std::uint64_t> { return seeds_; }
    [[nodiscard]] auto weights() const noexcept -> std::span<const std::uint64_t> { return weights_; }

    /// The node with the best score for a hashed key. O(N).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        score best{draw(point, 0), weights_[0]};
        std::uint32_t winner = 0;
        for (std::size_t i = 1; i < seeds_.size(); ++i) {
            const score s{draw(point, i), weights_[i]};
            if (s.beats(best)) {
                best = s;
                winner = static_cast<std::uint32_t>(i);
            }
        }
        return node_index{winner};
    }

    /// The min(out.size(), size()) best nodes, best first. O(N * n).
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept
        -> std::size_t {
        const std::size_t want = std::min(out.size(), seeds_.size());
        if (want <= buffered) {
            return pick_n_buffered(point, out.first(want));
        }
        const std::size_t first = pick_n_buffered(point, out.first(buffered));
        std::size_t got = first;
        rank_after(point, out[first - 1].value, [&](node_index i) noexcept {
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
        std::array<node_index, buffered> best{};
        const std::size_t first = pick_n_buffered(point, std::span(best).first(std::min(buffered, seeds_.size())));
        for (std::size_t k = 0; k < first; ++k) {
            if (!visit(best[k])) {
                return;
            }
        }
        if (first < seeds_.size()) {
            rank_after(point, best[first - 1].value, visit);
        }
    }

    /// The draw E of node i for a key: -log2(u) in 2^-48 units, u from the key and node seed.
    /// The node with the smallest E / quantized weight wins.
    [[nodiscard]] auto draw(std::uint64_t point, std::size_t i) const noexcept -> std::uint64_t {
        // le64(point) ++ le64(seed), written as whole words: byte-by-byte stores followed by
        // XXH3's word loads would stall store forwarding.
        std::array<std::uint64_t, 2> words{to_le64(point), to_le64(seeds_[i])};
        const std::uint64_t h = XXH3_64bits(words.data(), sizeof words);
        if (h == 0) {
            return 0;  // u = 1
        }
        return (std::uint64_t{64} << 48) - log2fix(*table_, 0 - h);
    }

private:
    static constexpr std::size_t buffered = 64;

    struct score {
        std::uint64_t draw;
        std::uint64_t weight;
        // Strictly better: smaller draw / weight, compared exactly. Ties go to the node met
        // first, and nodes are met in index order.
        [[nodiscard]] auto beats(const score& other) const noexcept -> bool {
            return product_less(draw, other.weight, other.draw, weight);
        }
    };

    // Keeps the best `out.size()` nodes sorted, their scores on the stack.
    [[nodiscard]] auto pick_n_buffered(std::uint64_t point, std::span<node_index> out) const noexcept
        -> std::size_t {
        std::array<score, buffered> kept{};
        std::size_t got = 0;
        for (std::size_t i = 0; i < seeds_.size() && !out.empty(); ++i) {
            const score s{draw(point, i), weights_[i]};
            std::size_t at = got;
            while (at > 0 && s.beats(kept[at - 1])) {
                --at;
            }
            if (at == out.size()) {
                continue;
            }
            const std::size_t last = std::min(got, out.size() - 1);
            for (std::size_t j = last; j > at; --j) {
                kept[j] = kept[j - 1];
                out[j] = out[j - 1];
            }
            kept[at] = s;
            out[at] = node_index{static_cast<std::uint32_t>(i)};
            got = std::min(got + 1, out.size());
        }
        return got;
    }

    // Selection by rounds after node `after`: each round scores every node and emits the best
    // one ranked after the previous emission, until emit returns false or none is left.
    template <class Emit>
    void rank_after(std::uint64_t point, std::size_t after, Emit&& emit) const noexcept {
        score previous{draw(point, after), weights_[after]};
        std::size_t previous_index = after;
        for (;;) {
            score best{0, 1};
            std::size_t best_index = seeds_.size();
            for (std::size_t i = 0; i < seeds_.size(); ++i) {
                const score s{draw(point, i), weights_[i]};
                if (!ranks_after(s, i, previous, previous_index)) {
                    continue;
                }
                if (best_index == seeds_.size() || ranks_after(best, best_index, s, i)) {
                    best = s;
                    best_index = i;
                }
            }
            if (best_index == seeds_.size() || !emit(node_index{static_cast<std::uint32_t>(best_index)})) {
                return;
            }
            previous = best;
            previous_index = best_index;
        }
    }

    // Whether (a, ia) comes after (b, ib) in preference order.
    [[nodiscard]] static auto ranks_after(const score& a, std::size_t ia, const score& b,
                                          std::size_t ib) noexcept -> bool {
        return b.beats(a) || (!a.beats(b) && ia > ib);
    }

    lazy_vector<std::uint64_t> seeds_;
    lazy_vector<std::uint64_t> weights_;
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

private:
    basic_rendezvous() = default;

    auto assign(std::span<const keyplace::node> input, const no_config&) -> detail::failure {
        std::vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        detail::rendezvous_scorer scorer;
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
