// keyplace — which node owns a key. The Maglev lookup table: Eisenbud et al., "Maglev: A Fast
// and Reliable Software Network Load Balancer" (NSDI 2016), weighted by integer rounds.
#ifndef KEYPLACE_MAGLEV_HPP_INCLUDED
#define KEYPLACE_MAGLEV_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/math.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

struct maglev_config {
    /// M: a prime >= the node count. 65537 is the paper's small table; keep M >= 100 x nodes
    /// for entry counts within about 1% of each other.
    std::uint64_t table_size = 65537;
};

/// The largest table size (the largest prime below 2^32).
inline constexpr std::uint64_t maglev_max_table_size = 4294967291ULL;

namespace detail {

/// Fills an M-entry table from each node's permutation (offset, skip) and quantized weight:
/// in rounds, node i gains weights[i] credit and, when its credit is >= 0, pays the largest
/// weight and takes its next preferred empty slot. Equal weights give the paper's listing 1.
/// Returns node indices per slot. Every node places in the first round, so each holds at
/// least one entry (M >= the node count).
[[nodiscard]] inline auto maglev_populate(std::span<const std::uint64_t> offsets,
                                          std::span<const std::uint64_t> skips,
                                          std::span<const std::uint64_t> weights, std::uint64_t m)
    -> std::vector<std::uint32_t> {
    constexpr auto empty = std::numeric_limits<std::uint32_t>::max();
    std::vector<std::uint32_t> entry(m, empty);
    const std::size_t n = offsets.size();
    const std::uint64_t top = *std::max_element(weights.begin(), weights.end());
    std::vector<std::uint64_t> position(offsets.begin(), offsets.end());  // perm_i(next_i)
    std::vector<std::int64_t> credit(n, 0);
    std::uint64_t filled = 0;
    while (filled < m) {
        for (std::size_t i = 0; i < n && filled < m; ++i) {
            credit[i] += static_cast<std::int64_t>(weights[i]);
            if (credit[i] < 0) {
                continue;
            }
            credit[i] -= static_cast<std::int64_t>(top);
            std::uint64_t c = position[i];
            while (entry[c] != empty) {
                c += skips[i];
                c -= c >= m ? m : 0;
            }
            entry[c] = static_cast<std::uint32_t>(i);
            ++filled;
            c += skips[i];
            position[i] = c - (c >= m ? m : 0);
        }
    }
    return entry;
}

/// A Maglev table of node indices in the narrowest width that holds them: 1 byte an entry up
/// to 256 nodes, 2 up to 65536, else 4; or, built with uniform(), no storage at all when one
/// node takes every slot.
class node_table {
public:
    node_table() = default;
    /// slots[s] is the node of slot s; nodes is how many nodes the indices range over.
    node_table(const std::vector<std::uint32_t>& slots, std::size_t nodes) : size_(slots.size()) {
        width_ = nodes <= 256 ? 1 : nodes <= 65536 ? 2 : 4;
        if (width_ == 1) {
            narrow8_.assign(slots.begin(), slots.end());
        } else if (width_ == 2) {
            narrow16_.assign(slots.begin(), slots.end());
        } else {
            wide_ = slots;
        }
    }
    /// m slots that all name node.
    [[nodiscard]] static auto uniform(std::uint32_t node, std::uint64_t m) -> node_table {
        node_table t;
        t.width_ = 0;
        t.only_ = node;
        t.size_ = m;
        return t;
    }

    /// Bytes per entry: 1, 2 or 4; 0 for a uniform table.
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
    /// Visits the nodes of slots start, start + 1, ... once around the table, wrapping (a
    /// uniform table's one node once), until visit returns false.
    template <class Visit>
    void walk(std::uint64_t start, Visit& visit) const noexcept {
        if (width_ == 0) {
            (void)visit(node_index{only_});
            return;
        }
        std::uint64_t slot = start;
        for (std::uint64_t step = 0; step < size_; ++step) {
            if (!visit(entry(slot))) {
                return;
            }
            slot = slot + 1 == size_ ? 0 : slot + 1;
        }
    }

private:
    std::size_t width_ = 1;
    std::uint64_t size_ = 0;
    std::uint32_t only_ = 0;
    std::vector<std::uint8_t> narrow8_;
    std::vector<std::uint16_t> narrow16_;
    std::vector<std::uint32_t> wide_;
};

}  // namespace detail

/// A lookup table of M entries, each naming a node; a key goes to entry[point mod M].
/// Near-perfect balance (entry counts differ by at most one at equal weights) and O(1)
/// lookups, at the price of a little extra movement: a change rebuilds the table and moves
/// some keys between nodes that stayed (measured in the tests and the README).
class maglev {
public:
    using key_hash = xxh3;

    /// Throws keyplace::error: the node errors of every strategy (weights count in units of
    /// 2^-16, up to 2^37), a table size that is not prime, above 4294967291, or smaller than
    /// the node count. O(M log M) expected.
    [[nodiscard]] static auto build(std::span<const node> nodes, maglev_config config = {}) -> maglev {
        maglev g;
        if (auto f = g.assign(nodes, config)) {
            detail::throw_error(std::move(f));
        }
        return g;
    }
    [[nodiscard]] static auto build(std::initializer_list<node> nodes, maglev_config config = {})
        -> maglev {
        return build(std::span<const node>(nodes.begin(), nodes.size()), config);
    }
    [[nodiscard]] static auto try_build(std::span<const node> nodes, maglev_config config,
                                        std::error_code& ec) -> std::optional<maglev> {
        maglev g;
        return detail::report(g.assign(nodes, config), std::move(g), ec);
    }
    [[nodiscard]] static auto try_build(std::span<const node> nodes, std::error_code& ec)
        -> std::optional<maglev> {
        return try_build(nodes, maglev_config{}, ec);
    }

    /// A new table with n added (a full rebuild); this one is unchanged.
    [[nodiscard]] auto with(const node& n) const -> maglev {
        if (find(n.id)) {
            detail::throw_error(detail::fail(errc::duplicate_id,
                                             "node id " + detail::quote(n.id) + " is already a member"));
        }
        std::vector<node> next(nodes_);
        next.push_back(n);
        return build(next, config_);
    }
    /// A new table without id (a full rebuild). Throws errc::unknown_id, or
    /// errc::empty_membership for the last node.
    [[nodiscard]] auto without(std::string_view id) const -> maglev {
        const auto found = find(id);
        if (!found) {
            detail::throw_error(detail::fail(errc::unknown_id,
                                             "node id " + detail::quote(id) + " is not a member"));
        }
        if (nodes_.size() == 1) {
            detail::throw_error(detail::fail(errc::empty_membership,
                                             "removing " + detail::quote(id) + " would leave no nodes"));
        }
        std::vector<node> next(nodes_);
        next.erase(next.begin() + static_cast<std::ptrdiff_t>(found->value));
        return build(next, config_);
    }

    [[nodiscard]] auto size() const noexcept -> std::size_t { return nodes_.size(); }
    [[nodiscard]] auto nodes() const noexcept -> std::span<const node> { return nodes_; }
    [[nodiscard]] auto config() const noexcept -> const maglev_config& { return config_; }
    [[nodiscard]] auto table_size() const noexcept -> std::uint64_t { return config_.table_size; }
    [[nodiscard]] auto find(std::string_view id) const noexcept -> std::optional<node_index> {
        const std::size_t i = detail::find_sorted(nodes_, id);
        return i == nodes_.size() ? std::nullopt : std::optional(node_index{static_cast<std::uint32_t>(i)});
    }
    /// Bytes held by the table (the node list not counted).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t { return table_.memory_bytes(); }
    /// Bytes per table entry: 1 up to 256 nodes, 2 up to 65536, else 4.
    [[nodiscard]] auto entry_width() const noexcept -> std::size_t { return table_.width(); }

    /// The node of table slot s < table_size().
    [[nodiscard]] auto entry(std::uint64_t slot) const noexcept -> node_index { return table_.entry(slot); }

    /// entry[point mod M]. O(1).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        return entry(mod_(point));
    }

    /// Distinct nodes from slot point mod M onward, wrapping: min(out.size(), size()) of them.
    /// Every node holds at least one entry (each places one in the first round), so the walk
    /// finds them all. O(M * n) in the worst case, a few slots in the usual one.
    [[nodiscard]] auto pick_n(std::uint64_t point, std::span<node_index> out) const noexcept
        -> std::size_t {
        return detail::collect_distinct(*this, point, out);
    }

    /// Visits the nodes of slots point mod M, point mod M + 1, ... once around the table
    /// (repeating nodes with several entries). visit(node_index) returns whether to go on.
    template <class Visit>
    void walk(std::uint64_t point, Visit&& visit) const noexcept {
        static_assert(std::is_nothrow_invocable_r_v<bool, Visit&, node_index>);
        table_.walk(mod_(point), visit);
    }

private:
    maglev() = default;

    auto assign(std::span<const node> input, const maglev_config& config) -> detail::failure {
        const std::uint64_t m = config.table_size;
        if (m > maglev_max_table_size || !detail::is_prime(m)) {
            return detail::fail(errc::invalid_argument,
                                "table size " + std::to_string(m) + " is not a prime from 2 to " +
                                    std::to_string(maglev_max_table_size));
        }
        std::vector<node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (sorted.size() > m) {
            return detail::fail(errc::invalid_argument,
                                "table size " + std::to_string(m) + " is smaller than the " +
                                    std::to_string(sorted.size()) + " nodes");
        }
        std::vector<std::uint64_t> offsets(sorted.size());
        std::vector<std::uint64_t> skips(sorted.size());
        std::vector<std::uint64_t> weights(sorted.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (auto f = detail::quantize_weight(sorted[i], weights[i])) {
                return f;
            }
            detail::node_hasher hash(sorted[i].id);
            offsets[i] = hash(0) % m;
            skips[i] = hash(1) % (m - 1) + 1;
        }
        table_ = detail::node_table(detail::maglev_populate(offsets, skips, weights, m), sorted.size());
        nodes_ = std::move(sorted);
        config_ = config;
        mod_ = detail::fast_mod(m);
        return {};
    }

    std::vector<node> nodes_;
    maglev_config config_{};
    detail::fast_mod mod_{};
    detail::node_table table_;
};

static_assert(ordered_placement_strategy<maglev>);

KEYPLACE_NAMESPACE_END

#endif
