// keyplace — which node owns a key. The Maglev lookup table: Eisenbud et al., "Maglev: A Fast
// and Reliable Software Network Load Balancer" (NSDI 2016), weighted by integer rounds.
#ifndef KEYPLACE_MAGLEV_HPP_INCLUDED
#define KEYPLACE_MAGLEV_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/detail/engine/slot_table.hpp>
#include <keyplace/detail/weight.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
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
/// The native Maglev's turn policy: in each round node i gains its quantized weight w_i in credit
/// and, when its credit is >= 0, pays the largest weight and takes a slot. Equal weights give the
/// paper's listing 1 (every node every round). Given the round a node took a slot in, this
/// returns the round of its next: the first in which its credit is >= 0 again.
class maglev_credits {
public:
    explicit maglev_credits(std::span<const std::uint64_t> weights)
        : weights_(weights), credit_(weights.begin(), weights.end()),  // round 1's gain
          top_(static_cast<std::int64_t>(*std::max_element(weights.begin(), weights.end()))) {}
    auto operator()(std::uint64_t round, std::size_t i) -> std::uint64_t {
        // credit_[i] is what node i held when it took a slot (0 to w_i, after its gain); after
        // paying, -2^53 <= c <= 0, and it takes again after k = max(1, ceil(-c / w_i)) gains.
        const auto w = static_cast<std::int64_t>(weights_[i]);
        const std::int64_t c = credit_[i] - top_;
        const std::int64_t k = c == 0 ? 1 : (w - 1 - c) / w;
        credit_[i] = c + k * w;
        return round + static_cast<std::uint64_t>(k);
    }

private:
    std::span<const std::uint64_t> weights_;
    std::vector<std::int64_t> credit_;
    std::int64_t top_;
};
}  // namespace detail

/// A lookup table of M entries, each naming a node; a key goes to entry[point mod M].
/// Near-perfect balance (entry counts differ by at most one at equal weights) and O(1)
/// lookups, at the price of a little extra movement: a change rebuilds the table and moves
/// some keys between nodes that stayed (measured in the tests and doc/benchmarks.md). Nodes are sorted
/// by id. Node i's permutation is offset = node_hash(id, 0) mod M, skip = node_hash(id, 1) mod
/// (M - 1) + 1; in rounds, node i gains its quantized weight in credit and, when its credit is
/// >= 0, pays the largest weight and takes its next preferred empty slot (equal weights give the
/// paper's listing 1). Every node places in the first round, so each holds at least one entry.
///
/// build() throws keyplace::error: the node errors of every strategy (weights count in units of
/// 2^-16, up to 2^37), a table size that is not prime (errc::table_size_not_prime), above
/// 4294967291 or smaller than the node count (errc::invalid_table_size). O(M log M) expected,
/// whatever the weights; memory while building: the table at its width plus M / 8 bytes.
/// with() and without() rebuild.
template <class Unused = void>
class basic_maglev : public detail::table_strategy<basic_maglev<Unused>, xxh3, keyplace::node, maglev_config,
                                                   detail::derivation::any, detail::node_order::by_id> {
    friend detail::lifecycle<basic_maglev, keyplace::node, maglev_config, detail::derivation::any,
                             detail::node_order::by_id>;

private:
    basic_maglev() = default;

    auto assign(std::span<const keyplace::node> input, const maglev_config& config) -> detail::failure {
        const std::uint64_t m = config.table_size;
        if (m > maglev_max_table_size) {  // first: primality of a huge value costs up to 2^31 divisions
            return detail::fail(errc::invalid_table_size, "table size " + std::to_string(m) +
                                                              " is above the largest, " +
                                                              std::to_string(maglev_max_table_size));
        }
        if (!detail::is_prime(m)) {
            return detail::fail(errc::table_size_not_prime, "table size " + std::to_string(m) + " is not a prime");
        }
        std::vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        if (sorted.size() > m) {
            return detail::fail(errc::invalid_table_size, "table size " + std::to_string(m) +
                                                              " is smaller than the " +
                                                              std::to_string(sorted.size()) + " nodes");
        }
        std::vector<std::uint64_t> offsets(sorted.size());
        std::vector<std::uint64_t> skips(sorted.size());
        std::vector<std::uint64_t> weights(sorted.size());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (auto f = detail::quantize_weight(sorted[i], weights[i])) {
                return detail::in_input_order(std::move(f).at_node(i), input);
            }
            detail::node_hasher hash(sorted[i].id);
            offsets[i] = hash(0) % m;
            skips[i] = hash(1) % (m - 1) + 1;
        }
        if (sorted.size() == 1) {
            this->engine_.assign_uniform(0, m, 1);  // no table: 4 GiB saved at the largest m
        } else {
            this->engine_.assign_filled(m, sorted.size(), [&](auto slots) {
                detail::populate_slots(offsets, skips, slots, detail::maglev_credits(weights));
            });
        }
        this->nodes_ = std::move(sorted);
        this->config_ = config;
        return {};
    }
};

/// (A template only so that translation units that do not use it do not compile it.)
using maglev = basic_maglev<>;

KEYPLACE_NAMESPACE_END

#endif
