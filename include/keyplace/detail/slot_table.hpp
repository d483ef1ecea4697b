// keyplace — which node owns a key. The slot-table engine: M slots each naming a node, stored in
// the narrowest width (1, 2 or 4 bytes; none for one node), a key going to slot point mod M; the
// Maglev population loop (Eisenbud et al., NSDI 2016) with the turn rule as a policy; the walk,
// holders and residue regions. The native Maglev, Envoy's Maglev and Redis Cluster's slot map are
// configurations of it. Not API.
#ifndef KEYPLACE_DETAIL_SLOT_TABLE_HPP_INCLUDED
#define KEYPLACE_DETAIL_SLOT_TABLE_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/lazy.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/engine_strategy.hpp>
#include <keyplace/detail/lifecycle.hpp>
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

/// Maglev's population: in rounds r = 1, 2, ..., each host h in order for which turn(r, h) says
/// so takes the next slot of its permutation offset_h + j * skip_h (mod m) that is still empty,
/// until all m slots are taken. Returns the host (position in the spans) of each slot. The turn
/// policy carries the weighting: the native integer credits, or Envoy's double targets.
template <class Turn>
[[nodiscard]] auto populate_slots(std::span<const std::uint64_t> offsets, std::span<const std::uint64_t> skips,
                                  std::uint64_t m, Turn&& turn) -> std::vector<std::uint32_t> {
    constexpr auto vacant = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> slot(m, vacant);
    std::vector<std::uint64_t> position(offsets.begin(), offsets.end());
    std::uint64_t filled = 0;
    for (std::uint64_t round = 1; filled < m; ++round) {
        for (std::size_t h = 0; h < offsets.size() && filled < m; ++h) {
            if (!turn(round, h)) {
                continue;
            }
            std::uint64_t c = position[h];
            while (slot[c] != vacant) {
                c += skips[h];
                c -= c >= m ? m : 0;
            }
            slot[c] = static_cast<std::uint32_t>(h);
            ++filled;
            c += skips[h];
            position[h] = c - (c >= m ? m : 0);
        }
    }
    return slot;
}

/// M slots of node indices in the narrowest width that holds them: 1 byte a slot up to 256
/// nodes, 2 up to 65536, else 4; or no storage when one node takes every slot.
template <class Unused = void>
class basic_slot_table {
    template <class T>
    using lazy_vector = detail::lazy_vector<T, Unused>;  // detail/lazy.hpp

public:
    /// slots[s] is the node of slot s, out of `nodes` nodes.
    void assign(const lazy_vector<std::uint32_t>& slots, std::size_t nodes) {
        size_ = slots.size();
        width_ = nodes <= 256 ? 1 : nodes <= 65536 ? 2 : 4;
        narrow8_.clear();
        narrow16_.clear();
        wide_.clear();
        if (width_ == 1) {
            narrow8_.assign(slots.begin(), slots.end());
        } else if (width_ == 2) {
            narrow16_.assign(slots.begin(), slots.end());
        } else {
            wide_ = slots;
        }
        counts_.assign(nodes, 0);
        for (const std::uint32_t s : slots) {
            ++counts_[s];
        }
        finish();
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
            case 1: return node_index{narrow8_[slot]};
            case 2: return node_index{narrow16_[slot]};
            default: return node_index{wide_[slot]};
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
