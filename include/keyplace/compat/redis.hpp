// keyplace — which node owns a key. Redis Cluster placement: CRC16/XMODEM of the key (or of its
// hash tag) modulo 16384 slots, and a slot map from slot ranges to nodes, as the Redis server
// computes it (src/cluster.c keyHashSlot; redis.io cluster specification).
#ifndef KEYPLACE_COMPAT_REDIS_HPP_INCLUDED
#define KEYPLACE_COMPAT_REDIS_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/detail/engine/slot_table.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {
[[nodiscard]] constexpr auto crc16_xmodem_update(std::uint16_t crc, unsigned char byte) noexcept -> std::uint16_t {
    unsigned c = crc ^ (static_cast<unsigned>(byte) << 8U);
    for (int bit = 0; bit < 8; ++bit) {
        c = (c & 0x8000U) != 0 ? (c << 1U) ^ 0x1021U : c << 1U;
    }
    return static_cast<std::uint16_t>(c & 0xffffU);
}
}  // namespace detail

namespace compat {

/// Redis Cluster's slot count.
inline constexpr std::size_t redis_slot_count = 16384;


/// CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final xor
/// (CRC16("123456789") = 0x31C3). Redis uses it for slots.
[[nodiscard]] constexpr auto crc16_xmodem(std::string_view bytes) noexcept -> std::uint16_t {
    std::uint16_t crc = 0;
    for (const char c : bytes) {
        crc = keyplace::detail::crc16_xmodem_update(crc, static_cast<unsigned char>(c));
    }
    return crc;
}

/// The bytes Redis hashes for a key: between the first '{' and the first '}' after it, when
/// that part is not empty; otherwise the whole key ("foo{}{bar}" hashes whole, "foo{{bar}}zap"
/// hashes "{bar", "foo{bar}{zap}" hashes "bar").
[[nodiscard]] constexpr auto redis_hash_tag(std::string_view key) noexcept -> std::string_view {
    const auto open = key.find('{');
    if (open == std::string_view::npos) {
        return key;
    }
    const auto close = key.find('}', open + 1);
    if (close == std::string_view::npos || close == open + 1) {
        return key;
    }
    return key.substr(open + 1, close - open - 1);
}

/// The slot of a key, 0..16383.
[[nodiscard]] constexpr auto redis_slot(std::string_view key) noexcept -> std::uint16_t {
    return static_cast<std::uint16_t>(crc16_xmodem(redis_hash_tag(key)) & (redis_slot_count - 1));
}

/// The key hash of redis_cluster: a key's "point" is its slot.
struct redis_slot_hash {
    [[nodiscard]] auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint64_t {
        return redis_slot(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    }
};

/// A slot range [first, last] owned by one node (Redis's CLUSTER SLOTS rows).
struct slot_range {
    std::uint16_t first;
    std::uint16_t last;
    std::string node_id;
};

/// The even split of build_even into out: node i of N in id order gets [floor(i * 16384 / N),
/// floor((i + 1) * 16384 / N) - 1]. Fails as the node checks do, and with too_many_nodes above
/// 16384 nodes.
[[nodiscard]] inline auto redis_even_ranges(std::span<const keyplace::node> nodes, std::vector<slot_range>& out)
    -> detail::failure {
    std::vector<keyplace::node> sorted;
    if (auto f = detail::sorted_membership(nodes, sorted)) {
        return f;
    }
    if (sorted.size() > redis_slot_count) {
        return detail::fail(errc::too_many_nodes, std::to_string(sorted.size()) + " nodes for 16384 slots");
    }
    out.clear();
    const std::size_t n = sorted.size();
    for (std::size_t i = 0; i < n; ++i) {
        out.push_back({static_cast<std::uint16_t>(i * redis_slot_count / n),
                       static_cast<std::uint16_t>((i + 1) * redis_slot_count / n - 1), sorted[i].id});
    }
    return {};
}

/// Redis Cluster placement: a 16384-entry slot map on the slot-table engine. pick(point) takes a
/// slot (point mod 16384: only the low 14 bits count); locate(s, key) hashes the key to its
/// slot as the server does. Nodes are sorted by id. A slot map has no preference order (a
/// Redis replica is a node of its own, not the next slot's owner), so it offers no pick_n or
/// walk, and it does not derive: moving slots is a resharding plan, so build the new map.
///
/// build(nodes, ranges) throws keyplace::error naming the slot or range: a range reversed or
/// past 16383 (invalid_slot_range), a slot covered twice (slot_overlap) or not at all
/// (slot_gap), a range naming a node that is not in nodes (unknown_id); and the node errors.
template <class Unused = void>
class basic_redis_cluster
    : public detail::table_strategy<basic_redis_cluster<Unused>, redis_slot_hash, keyplace::node, std::vector<slot_range>,
                                    detail::derivation::none, detail::node_order::by_id> {
    friend detail::lifecycle<basic_redis_cluster, keyplace::node, std::vector<slot_range>, detail::derivation::none,
                             detail::node_order::by_id>;

public:
    /// Slots split evenly in node-id order: node i of N gets [floor(i * 16384 / N),
    /// floor((i + 1) * 16384 / N) - 1]. This is not `redis-cli --cluster create`'s split (it
    /// rounds single-precision running sums: 0-5460, 5461-10922, 10923-16383 for three masters);
    /// to place keys as a live cluster does, build from its CLUSTER SLOTS ranges. Throws as
    /// build() does, and errc::too_many_nodes above 16384 nodes.
    [[nodiscard]] static auto build_even(std::span<const keyplace::node> nodes) -> basic_redis_cluster {
        std::vector<slot_range> ranges;
        if (auto f = redis_even_ranges(nodes, ranges)) {
            detail::raise(f);
        }
        return basic_redis_cluster::build(nodes, ranges);
    }

    auto pick_n(std::uint64_t, std::span<node_index>) const noexcept -> std::size_t = delete;
    template <class Visit>
    void walk(std::uint64_t, Visit&&) const noexcept = delete;

private:
    basic_redis_cluster() = default;

    auto assign(std::span<const keyplace::node> input, const std::vector<slot_range>& ranges) -> detail::failure {
        std::vector<keyplace::node> sorted;
        if (auto f = detail::sorted_membership(input, sorted)) {
            return f;
        }
        constexpr std::uint32_t unset = 0xffffffffU;
        std::vector<std::uint32_t> owner(redis_slot_count, unset);
        for (const auto& r : ranges) {
            if (r.first > r.last || r.last >= redis_slot_count) {
                return detail::fail(errc::invalid_slot_range,
                                    "slot range " + std::to_string(r.first) + "-" + std::to_string(r.last) +
                                        (r.first > r.last ? " ends before it starts" : " is not within 0-16383"));
            }
            const std::size_t i = detail::find_sorted(sorted, r.node_id);
            if (i == sorted.size()) {
                return detail::fail(errc::unknown_id, "slot range " + std::to_string(r.first) + "-" +
                                                          std::to_string(r.last) + " names node " +
                                                          detail::quote(r.node_id) + ", which is not a member");
            }
            for (std::size_t slot = r.first; slot <= r.last; ++slot) {
                if (owner[slot] != unset) {
                    return detail::fail(errc::slot_overlap,
                                        "slot " + std::to_string(slot) + " is assigned twice (" +
                                            detail::quote(sorted[owner[slot]].id) + " and " + detail::quote(r.node_id) + ")");
                }
                owner[slot] = static_cast<std::uint32_t>(i);
            }
        }
        for (std::size_t slot = 0; slot < redis_slot_count; ++slot) {
            if (owner[slot] == unset) {
                return detail::fail(errc::slot_gap, "slot " + std::to_string(slot) + " is not assigned to any node");
            }
        }
        this->engine_.assign(owner, sorted.size());
        this->nodes_ = std::move(sorted);
        return {};
    }
};

/// (A template only so that translation units that do not use it do not compile it.)
using redis_cluster = basic_redis_cluster<>;

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
