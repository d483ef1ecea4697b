// keyplace — which node owns a key. Weighted rendezvous (highest random weight) hashing:
// Thaler & Ravishankar, "Using Name-Based Mappings to Increase Hit Rates" (1998), with the
// logarithmic weighting of Schindelhauer & Schomaker, "Weighted Distributed Hash Tables"
// (SPAA 2005), in fixed-point integer arithmetic (placement contract v1, README).
#ifndef KEYPLACE_RENDEZVOUS_HPP_INCLUDED
#define KEYPLACE_RENDEZVOUS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/math.hpp>
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

/// Every key scores every node; the best score wins. A node of weight w wins w/Σw of the keys.
/// Adding a node moves only keys to it; removing one moves only its keys. Lookups are O(N):
/// past a few hundred nodes prefer the ring or Maglev (README, "Which strategy").
class rendezvous {
public:
    using key_hash = xxh3;

    /// Throws keyplace::error: empty list, empty or duplicate id, weight not finite and > 0,
    /// below 2^-16 or above 2^37 (weights count in units of 2^-16). O(N log N).
    [[nodiscard]] static auto build(std::span<const node> nodes) -> rendezvous {
        rendezvous r;
        if (auto f = r.assign(nodes)) {
            detail::throw_error(std::move(f));
        }
        return r;
    }
    [[nodiscard]] static auto build(std::initializer_list<node> nodes) -> rendezvous {
        return build(std::span<const node>(nodes.begin(), nodes.size()));
    }
    [[nodiscard]] static auto try_build(std::span<const node> nodes, std::error_code& ec)
        -> std::optional<rendezvous> {
        rendezvous r;
        return detail::report(r.assign(nodes), std::move(r), ec);
    }

    /// A new value with n added (O(N)); this one is unchanged. Throws as build() does and
    /// errc::duplicate_id if n's id is a member.
    [[nodiscard]] auto with(const node& n) const -> rendezvous {
        rendezvous r = *this;
        if (auto f = r.insert(n)) {
            detail::throw_error(std::move(f));
        }
        return r;
    }
    [[nodiscard]] auto try_with(const node& n, std::error_code& ec) const -> std::optional<rendezvous> {
        rendezvous r = *this;
        return detail::report(r.insert(n), std::move(r), ec);
    }

    /// A new value without id (O(N)). Throws errc::unknown_id, or errc::empty_membership for
    /// the last node.
    [[nodiscard]] auto without(std::string_view id) const -> rendezvous {
        rendezvous r = *this;
        if (auto f = r.erase(id)) {
            detail::throw_error(std::move(f));
        }
        return r;
    }
    [[nodiscard]] auto try_without(std::string_view id, std::error_code& ec) const
        -> std::optional<rendezvous> {
        rendezvous r = *this;
        return detail::report(r.erase(id), std::move(r), ec);
    }

    [[nodiscard]] auto size() const noexcept -> std::size_t { return nodes_.size(); }
    [[nodiscard]] auto nodes() const noexcept -> std::span<const node> { return nodes_; }
    [[nodiscard]] auto find(std::string_view id) const noexcept -> std::optional<node_index> {
        const std::size_t i = detail::find_sorted(nodes_, id);
        return i == nodes_.size() ? std::nullopt : std::optional(node_index{static_cast<std::uint32_t>(i)});
    }
    /// Per-node values fixed at build: the seed mixed with each key, and the quantized weight.
    [[nodiscard]] auto seeds() const noexcept -> std::span<const std::uint64_t> { return seeds_; }
    [[nodiscard]] auto quantized_weights() const noexcept -> std::span<const std::uint64_t> {
        return weights_;
    }

    /// The node with the best score for a hashed key. O(N).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        score best{draw(point, 0), weights_[0]};
        std::uint32_t winner = 0;
        for (std::size_t i = 1; i < nodes_.size(); ++i) {
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
        const std::size_t want = std::min(out.size(), nodes_.size());
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
        const std::size_t first = pick_n_buffered(point, std::span(best).first(std::min(buffered, nodes_.size())));
        for (std::size_t k = 0; k < first; ++k) {
            if (!visit(best[k])) {
                return;
            }
        }
        if (first < nodes_.size()) {
            rank_after(point, best[first - 1].value, visit);
        }
    }

    /// The draw E of node i for a key: -log2(u) in 2^-48 units, u from the key and node seed.
    /// The node with the smallest E / quantized weight wins.
    [[nodiscard]] auto draw(std::uint64_t point, std::size_t i) const noexcept -> std::uint64_t {
        // le64(point) ++ le64(seed), written as whole words: byte-by-byte stores followed by
        // XXH3's word loads would stall store forwarding.
        std::array<std::uint64_t, 2> words{detail::to_le64(point), detail::to_le64(seeds_[i])};
        const std::uint64_t h = XXH3_64bits(words.data(), sizeof words);
        if (h == 0) {
            return 0;  // u = 1
        }
        return (std::uint64_t{64} << 48) - detail::log2fix(*table_, 0 - h);
    }

private:
    static constexpr std::size_t buffered = 64;

    struct score {
        std::uint64_t draw;
        std::uint64_t weight;
        // Strictly better: smaller draw / weight, compared exactly. Ties go to the node met
        // first, and nodes are met in index order.
        [[nodiscard]] auto beats(const score& other) const noexcept -> bool {
            return detail::product_less(draw, other.weight, other.draw, weight);
        }
    };

    rendezvous() : table_(&detail::log2_table()) {}

    // Keeps the best `out.size()` nodes sorted, their scores on the stack.
    [[nodiscard]] auto pick_n_buffered(std::uint64_t point, std::span<node_index> out) const noexcept
        -> std::size_t {
        std::array<score, buffered> kept{};
        std::size_t got = 0;
        for (std::size_t i = 0; i < nodes_.size() && !out.empty(); ++i) {
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
            std::size_t best_index = nodes_.size();
            for (std::size_t i = 0; i < nodes_.size(); ++i) {
                const score s{draw(point, i), weights_[i]};
                if (!ranks_after(s, i, previous, previous_index)) {
                    continue;
                }
                if (best_index == nodes_.size() || ranks_after(best, best_index, s, i)) {
                    best = s;
                    best_index = i;
                }
            }
            if (best_index == nodes_.size() || !emit(node_index{static_cast<std::uint32_t>(best_index)})) {
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

    auto assign(std::span<const node> input) -> detail::failure {
        std::vector<node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        std::vector<std::uint64_t> seeds(sorted.size());
        std::vector<std::uint64_t> weights(sorted.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (auto f = detail::quantize_weight(sorted[i], weights[i])) {
                return f;
            }
            seeds[i] = detail::node_hasher(sorted[i].id)(0);
        }
        nodes_ = std::move(sorted);
        seeds_ = std::move(seeds);
        weights_ = std::move(weights);
        return {};
    }

    auto insert(const node& n) -> detail::failure {
        if (auto f = detail::check_node(n)) {
            return f;
        }
        std::uint64_t q = 0;
        if (auto f = detail::quantize_weight(n, q)) {
            return f;
        }
        if (find(n.id)) {
            return detail::fail(errc::duplicate_id, "node id " + detail::quote(n.id) + " is already a member");
        }
        const auto at = static_cast<std::ptrdiff_t>(
            std::lower_bound(nodes_.begin(), nodes_.end(), n.id,
                             [](const node& a, const std::string& id) { return a.id < id; }) -
            nodes_.begin());
        nodes_.insert(nodes_.begin() + at, n);
        seeds_.insert(seeds_.begin() + at, detail::node_hasher(n.id)(0));
        weights_.insert(weights_.begin() + at, q);
        return {};
    }

    auto erase(std::string_view id) -> detail::failure {
        const auto found = find(id);
        if (!found) {
            return detail::fail(errc::unknown_id, "node id " + detail::quote(id) + " is not a member");
        }
        if (nodes_.size() == 1) {
            return detail::fail(errc::empty_membership,
                                "removing " + detail::quote(id) + " would leave no nodes");
        }
        const auto at = static_cast<std::ptrdiff_t>(found->value);
        nodes_.erase(nodes_.begin() + at);
        seeds_.erase(seeds_.begin() + at);
        weights_.erase(weights_.begin() + at);
        return {};
    }

    std::vector<node> nodes_;
    std::vector<std::uint64_t> seeds_;
    std::vector<std::uint64_t> weights_;
    const detail::log2_table_type* table_;
};

static_assert(ordered_placement_strategy<rendezvous>);

KEYPLACE_NAMESPACE_END

#endif
