// keyplace — which node owns a key. JumpBackHash: O. Ertl, "JumpBackHash: Say Goodbye to the
// Modulo Operation to Distribute Keys Uniformly to Buckets", Software: Practice and Experience
// 55(3), 2025 (doi 10.1002/spe.3385), exactly as Dynatrace's hash4j computes it with SplitMix64:
// ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1()).getBucket(hash, n).
#ifndef KEYPLACE_JUMPBACK_HPP_INCLUDED
#define KEYPLACE_JUMPBACK_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The largest bucket count JumpBackHash takes: hash4j's getBucket(long hash, int numBuckets)
/// takes a Java int, and its arithmetic keeps buckets in 31-bit int ranges. keyplace defines no
/// extension beyond it: jumpback_hash refuses a larger count (errc::invalid_argument) and a
/// jumpback strategy of more nodes is refused at construction (errc::too_many_nodes).
inline constexpr std::int64_t jumpback_max_buckets = std::numeric_limits<std::int32_t>::max();

namespace detail {

// SplitMix64 as hash4j's SplitMix64V1 (java.util.SplittableRandom's generator with its default
// gamma): reset(seed) sets the state, each nextLong() adds the gamma and mixes the state, which
// is detail::splitmix64 (detail/splitmix.hpp).
struct jumpback_splitmix64 {
    std::uint64_t state;

    [[nodiscard]] auto next() noexcept -> std::uint64_t { return splitmix64(state); }
};

// The bucket of hash among n >= 2 buckets (n <= 2^31 - 1), hash4j's getBucket step for step.
// Java reduces a shift count modulo the operand's width, where C++ makes an over-wide shift
// undefined; the two places Java relies on it are written out:
//   1 << ~nlz(x)            (int, count mod 32): 1 << (31 - nlz(x)), the highest set bit of x;
//   r0 >>> (bitCount(x) << 5) (long, count mod 64): by 32 when x has an odd number of bits set,
//                            by 0 when even.
// Every int value here lies in [0, 2^31): unsigned 32-bit arithmetic and comparisons agree with
// Java's signed ones.
[[nodiscard]] inline auto jumpback_bucket(std::uint64_t hash, std::uint32_t n) noexcept -> std::uint32_t {
    jumpback_splitmix64 random{hash};
    const std::uint64_t r0 = random.next();
    const std::uint32_t mask = 0xFFFFFFFFU >> std::countl_zero(n - 1U);  // n - 1 >= 1: a count <= 31
    auto x = static_cast<std::uint32_t>(r0 ^ (r0 >> 32)) & mask;
    for (;;) {
        if (x == 0) {
            return 0;
        }
        const auto top_shift = static_cast<unsigned>(~std::countl_zero(x)) & 31U;  // Java: mod 32
        const std::uint32_t range_min = 1U << top_shift;
        const auto r0_shift = (static_cast<unsigned>(std::popcount(x)) << 5) & 63U;  // Java: mod 64
        std::uint32_t bucket = range_min + (static_cast<std::uint32_t>(r0 >> r0_shift) & (range_min - 1U));
        if (bucket < n) {
            return bucket;
        }
        const std::uint32_t range_max = (range_min << 1) - 1U;
        for (;;) {
            const std::uint64_t r1 = random.next();
            bucket = static_cast<std::uint32_t>(r1) & range_max;
            if (bucket < range_min) {
                break;
            }
            if (bucket < n) {
                return bucket;
            }
            bucket = static_cast<std::uint32_t>(r1 >> 32) & range_max;
            if (bucket < range_min) {
                break;
            }
            if (bucket < n) {
                return bucket;
            }
        }
        x ^= range_min;
    }
}

// The one bucket count check of jumpback_hash: hash4j's checkNumberOfBuckets below 1 (its
// message), and keyplace's refusal above 2^31 - 1.
KEYPLACE_COLD [[noreturn]] inline void jumpback_bad_buckets(std::int64_t buckets) {
    raise(fail(errc::invalid_argument,
               "jumpback_hash: " +
                   std::string(buckets < 1 ? "number of buckets must be positive: "
                                           : "number of buckets must be at most 2^31 - 1 (2147483647): ") +
                   std::to_string(buckets)));
}

}  // namespace detail

/// hash4j's ConsistentHashing.jumpBackHash(PseudoRandomGeneratorProvider.splitMix64_V1())
/// .getBucket(hash, buckets) as of hash4j 0.30.0: the bucket in [0, buckets) of a key's 64-bit
/// hash (Java's long, read as its two's-complement bits). Going from n to n + 1 buckets moves
/// only keys to bucket n, about 1/(n + 1) of them; expected constant time, integer arithmetic
/// only. Throws keyplace::error (errc::invalid_argument) for buckets < 1 (hash4j throws
/// IllegalArgumentException) and for buckets > 2^31 - 1, which hash4j cannot be asked.
[[nodiscard]] inline auto jumpback_hash(std::uint64_t hash, std::int64_t buckets) -> std::int32_t {
    if (buckets < 1 || buckets > jumpback_max_buckets) {
        detail::jumpback_bad_buckets(buckets);
    }
    if (buckets == 1) {
        return 0;
    }
    return static_cast<std::int32_t>(detail::jumpback_bucket(hash, static_cast<std::uint32_t>(buckets)));
}

/// JumpBackHash over the nodes in the order given: node i is bucket i. Jump's contract (no
/// table, no per-node state, 1/N each, growth moves only keys to the new node) in expected
/// constant time instead of jump's O(log N). Only appending a node (push_back) or removing the
/// last one (pop_back) is possible; weights are not supported. Its points are XXH3-64 of the key
/// bytes, given to hash4j's function as the key hash.
///
/// build() and push_back() throw keyplace::error: empty list, empty, over-long or duplicate id,
/// a weight other than 1 (errc::invalid_weight), more than 2^31 - 1 nodes (errc::too_many_nodes:
/// hash4j takes no more buckets, and keyplace defines no extension). pop_back() throws
/// errc::empty_membership for the last node. push_back is O(N) (a copy).
/// A class template (basic_jumpback<>, named jumpback below) so that a translation unit that
/// does not use it does not compile it.
template <class Unused = void>
class basic_jumpback : public detail::lifecycle<basic_jumpback<Unused>, node, no_config,
                                                detail::derivation::append_only, detail::node_order::as_given> {
    using base = detail::lifecycle<basic_jumpback, keyplace::node, no_config, detail::derivation::append_only,
                                   detail::node_order::as_given>;
    friend base;

public:
    using key_hash = xxh3;

    /// Every bucket can be picked.
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return this->size(); }
    [[nodiscard]] auto holds(node_index) const noexcept -> bool { return true; }

    /// Expected O(1): jumpback_hash(point, size()).
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        const auto n = static_cast<std::uint32_t>(this->nodes_.size());
        return node_index{n == 1 ? 0U : detail::jumpback_bucket(point, n)};
    }

    /// The defined share of each bucket: 1/N (analysis reports it as share_method::expected).
    [[nodiscard]] auto defined_shares() const -> std::vector<double> {
        return std::vector<double>(this->size(), 1.0 / static_cast<double>(this->size()));
    }

private:
    basic_jumpback() = default;

    // Inside the class, node names the base's node(i): the type is keyplace::node.
    auto assign(std::span<const keyplace::node> nodes, const no_config&) -> detail::failure {
        detail::lazy_vector<keyplace::node, basic_jumpback> sorted;
        if (auto f = detail::sorted_membership(nodes, sorted)) {
            return f;
        }
        if (nodes.size() > static_cast<std::size_t>(jumpback_max_buckets)) {
            return detail::fail(errc::too_many_nodes,
                                std::to_string(nodes.size()) + " nodes; jumpback takes at most 2^31 - 1");
        }
        if (auto f = detail::unit_weights(nodes, "jumpback")) {
            return f;
        }
        this->nodes_.assign(nodes.begin(), nodes.end());
        return {};
    }
};

/// JumpBackHash over the buckets in the order given.
using jumpback = basic_jumpback<>;

KEYPLACE_NAMESPACE_END

#endif
