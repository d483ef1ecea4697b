// keyplace — which node owns a key. The slot-table engine: M slots each naming a node, stored in
// the narrowest width (1, 2 or 4 bytes; none for one node), a key going to slot point mod M; the
// Maglev population loop (Eisenbud et al., NSDI 2016) with the turn rule as a policy; the walk,
// holders and residue regions. The native Maglev, Envoy's Maglev and Redis Cluster's slot map are
// configurations of it. Not API.
#ifndef KEYPLACE_DETAIL_ENGINE_SLOT_TABLE_HPP_INCLUDED
#define KEYPLACE_DETAIL_ENGINE_SLOT_TABLE_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/engine/engine_strategy.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// A slot number or slot count as an index. Every table has fewer than 2^32 slots (Maglev's
/// largest table size is 4294967291, Envoy's 5000011, Redis's 16384), so it fits std::size_t on
/// 32-bit targets too (sums such as slot + skip need not, and stay 64-bit).
[[nodiscard]] constexpr auto slot_index(std::uint64_t s) noexcept -> std::size_t {
    static_assert(sizeof(std::size_t) >= sizeof(std::uint32_t));
    return static_cast<std::size_t>(s);
}

/// Maglev's population: in rounds r = 1, 2, ..., each host h in order whose turn it is takes the
/// next slot of its permutation offset_h + j * skip_h (mod m) that is still empty, until all m =
/// slot.size() slots are taken; slot[s] is set to the host (position in the spans) of slot s.
/// Every host's first turn is round 1; next_round(r, h), called when host h has taken a slot in
/// round r, returns its next turn (> r). The policy carries the weighting: the native integer
/// credits, or Envoy's double targets. Hosts wait by (round, host), so a round visits only the
/// hosts whose turn it is: O(M + N log N) for any weights, where asking every host every round
/// was O(M N) (one heavy host among light ones needs about M rounds). The occupancy is a bitmap,
/// so slot may be as narrow as the host count allows.
template <class Slot, class NextRound>
void populate_slots(std::span<const std::uint64_t> offsets, std::span<const std::uint64_t> skips, std::span<Slot> slot,
                    NextRound&& next_round) {
    struct waiting {
        std::uint64_t round;
        std::uint32_t host;
    };
    // The heap keeps its "largest" first: the earliest turn, the lower host on one round.
    const auto later = [](const waiting& a, const waiting& b) {
        return a.round != b.round ? a.round > b.round : a.host > b.host;
    };
    const std::uint64_t m = slot.size();
    std::vector<std::uint64_t> taken(slot_index((m + 63) / 64), 0);
    std::vector<std::uint64_t> position(offsets.begin(), offsets.end());
    std::vector<std::uint32_t> now(offsets.size());   // this round's hosts, in host order
    std::vector<std::uint32_t> next;                  // the next round's, in host order
    std::vector<std::uint32_t> late;                  // hosts leaving the queue for this round
    std::vector<waiting> queue;                       // the later rounds' hosts, a heap
    for (std::size_t h = 0; h < now.size(); ++h) {
        now[h] = static_cast<std::uint32_t>(h);
    }
    std::uint64_t filled = 0;
    for (std::uint64_t round = 1;;) {
        for (const std::uint32_t h : now) {
            std::uint64_t c = position[h];
            while (((taken[slot_index(c >> 6)] >> (c & 63)) & 1U) != 0) {
                c += skips[h];
                c -= c >= m ? m : 0;
            }
            taken[slot_index(c >> 6)] |= std::uint64_t{1} << (c & 63);
            slot[slot_index(c)] = static_cast<Slot>(h);
            if (++filled == m) {
                return;
            }
            c += skips[h];
            position[h] = c - (c >= m ? m : 0);
            const std::uint64_t turn = next_round(round, h);
            if (turn == round + 1) {
                next.push_back(h);
            } else {
                queue.push_back({turn, h});
                std::push_heap(queue.begin(), queue.end(), later);
            }
        }
        round = next.empty() ? queue.front().round : round + 1;  // rounds nobody takes are skipped
        while (!queue.empty() && queue.front().round == round) {
            late.push_back(queue.front().host);
            std::pop_heap(queue.begin(), queue.end(), later);
            queue.pop_back();
        }
        now.resize(next.size() + late.size());
        std::merge(next.begin(), next.end(), late.begin(), late.end(), now.begin());
        next.clear();
        late.clear();
    }
}

/// M slots of node indices in the narrowest width that holds them: 1 byte a slot up to 256
/// nodes, 2 up to 65536, else 4; or no storage when one node takes every slot.
template <class Unused = void>
class basic_slot_table {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

public:
    /// m slots over `nodes` nodes, written in place at the table's width: fill(std::span<S>) sets
    /// every slot's node, S being the entry type (std::uint8_t, std::uint16_t or std::uint32_t).
    /// Nothing wider than an entry is allocated.
    template <class Fill>
    void assign_filled(std::uint64_t m, std::size_t nodes, Fill&& fill) {
        size_ = m;
        width_ = nodes <= 256 ? 1 : nodes <= 65536 ? 2 : 4;
        narrow8_ = lazy_vector<std::uint8_t>();  // (= {} would keep the capacity)
        narrow16_ = lazy_vector<std::uint16_t>();
        wide_ = lazy_vector<std::uint32_t>();
        counts_.assign(nodes, 0);
        const auto fill_and_count = [&](auto& table) {
            table.resize(slot_index(m));
            fill(std::span(table));
            for (const auto s : table) {
                ++counts_[s];
            }
        };
        if (width_ == 1) {
            fill_and_count(narrow8_);
        } else if (width_ == 2) {
            fill_and_count(narrow16_);
        } else {
            fill_and_count(wide_);
        }
        finish();
    }
    /// slots[s] is the node of slot s, out of `nodes` nodes.
    void assign(const lazy_vector<std::uint32_t>& slots, std::size_t nodes) {
        assign_filled(slots.size(), nodes, [&slots](auto table) {
            using entry_type = typename decltype(table)::value_type;
            std::transform(slots.begin(), slots.end(), table.begin(),
                           [](std::uint32_t s) { return static_cast<entry_type>(s); });
        });
    }
    /// m slots that all name node `only`, out of `nodes` nodes.
    void assign_uniform(std::uint32_t only, std::uint64_t m, std::size_t nodes) {
        size_ = m;
        width_ = 0;
        only_ = only;
        counts_.assign(nodes, 0);
        counts_[only] = m;
        finish();
    }

    [[nodiscard]] auto size() const noexcept -> std::uint64_t { return size_; }
    /// Bytes per slot: 1, 2 or 4; 0 for a table whose one node takes every slot.
    [[nodiscard]] auto width() const noexcept -> std::size_t { return width_; }
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        return narrow8_.capacity() + narrow16_.capacity() * 2 + wide_.capacity() * 4;
    }
    [[nodiscard]] auto entry(std::uint64_t slot) const noexcept -> node_index {
        switch (width_) {
            case 0: return node_index{only_};
            case 1: return node_index{narrow8_[slot_index(slot)]};
            case 2: return node_index{narrow16_[slot_index(slot)]};
            default: return node_index{wide_[slot_index(slot)]};
        }
    }
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index { return entry(mod_(point)); }
    /// out[i] = pick(points[i]) for i < n: in blocks, every slot prefetched before the first is
    /// read, so the blocks' cache misses overlap.
    void pick_batch(const std::uint64_t* points, node_index* out, std::size_t n) const noexcept {
        switch (width_) {
            case 0: std::fill(out, out + n, node_index{only_}); break;
            case 1: batch(narrow8_.data(), points, out, n); break;
            case 2: batch(narrow16_.data(), points, out, n); break;
            default: batch(wide_.data(), points, out, n); break;
        }
    }
    /// Slots held by node i.
    [[nodiscard]] auto count(node_index i) const noexcept -> std::uint64_t { return counts_[i.value]; }
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return holders_; }
    [[nodiscard]] auto regions() const noexcept -> residue_regions { return {size_}; }

    /// Visits the nodes of slots point mod M, then the next slots, once around the table,
    /// wrapping (a one-node table's node once), until visit returns false.
    template <class Visit>
    void walk(std::uint64_t point, Visit& visit) const noexcept {
        if (width_ == 0) {
            (void)visit(node_index{only_});
            return;
        }
        std::uint64_t slot = mod_(point);
        for (std::uint64_t step = 0; step < size_; ++step) {
            if (!visit(entry(slot))) {
                return;
            }
            slot = slot + 1 == size_ ? 0 : slot + 1;
        }
    }

private:
    template <class Slot>
    void batch(const Slot* table, const std::uint64_t* points, node_index* out, std::size_t n) const noexcept {
        prefetched_batch(
            points, out, n, [this](std::uint64_t point) { return mod_(point); },
            [table](std::uint64_t slot) { return table + slot; },
            [table](std::uint64_t slot) { return node_index{table[slot]}; });
    }

    void finish() {
        mod_ = fast_mod(size_);
        holders_ = static_cast<std::size_t>(
            std::count_if(counts_.begin(), counts_.end(), [](std::uint64_t c) { return c != 0; }));
    }

    std::size_t width_ = 1;
    std::uint64_t size_ = 0;
    std::uint32_t only_ = 0;
    fast_mod mod_{};
    std::size_t holders_ = 0;
    lazy_vector<std::uint8_t> narrow8_;
    lazy_vector<std::uint16_t> narrow16_;
    lazy_vector<std::uint32_t> wide_;
    lazy_vector<std::uint64_t> counts_;  // slots per node
};

/// (A template only so that translation units that do not use it do not compile it.)
using slot_table = basic_slot_table<>;

/// A strategy that is a slot table: the shared query surface plus the table's own.
template <class Derived, hasher KeyHash, class Member, class Config, derivation Derives, node_order Order>
class table_strategy : public engine_strategy<Derived, slot_table, KeyHash, Member, Config, Derives, Order> {
public:
    /// M, the number of slots.
    [[nodiscard]] auto table_size() const noexcept -> std::uint64_t { return this->engine_.size(); }
    /// The node of slot s < table_size().
    [[nodiscard]] auto entry(std::uint64_t slot) const noexcept -> node_index { return this->engine_.entry(slot); }
    /// Bytes per slot: 1 up to 256 nodes, 2 up to 65536, else 4; 0 when one node takes all.
    [[nodiscard]] auto entry_width() const noexcept -> std::size_t { return this->engine_.width(); }
    /// Slots per node, by node index.
    [[nodiscard]] auto entries_per_node() const -> std::vector<std::size_t> { return this->counts_per_node(); }

protected:
    table_strategy() = default;
};

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
