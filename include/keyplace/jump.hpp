// keyplace — which node owns a key. Jump consistent hash: Lamping & Veach, "A Fast, Minimal
// Memory, Consistent Hash Algorithm" (arXiv 1406.2294, 2014), and Guava's
// Hashing.consistentHash, which differs from the paper on a rare class of keys.
#ifndef KEYPLACE_JUMP_HPP_INCLUDED
#define KEYPLACE_JUMP_HPP_INCLUDED

#include <keyplace/concepts.hpp>
#include <keyplace/config.hpp>
#include <keyplace/detail/engine/lifecycle.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/version.hpp>

#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

// Jump's formula is defined by IEEE-754 binary64 division; -ffast-math may replace it with a
// reciprocal multiply and x87 excess precision rounds differently, either changing placement.
#if defined(__FAST_MATH__)
#error "keyplace/jump.hpp needs IEEE-754 division: compile without -ffast-math"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "keyplace/jump.hpp needs FLT_EVAL_METHOD == 0 (no excess precision; use SSE2 on x86)"
#endif

KEYPLACE_NAMESPACE_BEGIN

/// The jump hash LCG multiplier (Lamping & Veach; also Guava).
inline constexpr std::uint64_t jump_multiplier = 2862933555777941757ULL;

namespace detail {

// A bucket count below 1 (there is no bucket to return): refused through the one reporting path,
// as Guava refuses it (checkArgument, IllegalArgumentException, and the same message).
KEYPLACE_COLD [[noreturn]] inline void no_buckets(const char* function, std::int32_t buckets) {
    raise(fail(errc::invalid_argument, std::string(function) + ": buckets must be positive: " + std::to_string(buckets)));
}

// The two jump functions for buckets >= 1 (basic_jump::pick, whose node count is >= 1).
[[nodiscard]] inline auto jump_bucket(std::uint64_t key, std::int32_t buckets) noexcept -> std::int32_t {
    std::int64_t b = -1;
    std::int64_t j = 0;
    while (j < buckets) {
        b = j;
        key = key * jump_multiplier + 1;
        j = static_cast<std::int64_t>(static_cast<double>(b + 1) *
                                      (static_cast<double>(std::int64_t{1} << 31) /
                                       static_cast<double>((key >> 33) + 1)));
    }
    return static_cast<std::int32_t>(b);
}

[[nodiscard]] inline auto guava_bucket(std::int64_t input, std::int32_t buckets) noexcept -> std::int32_t {
    auto state = static_cast<std::uint64_t>(input);
    std::int32_t candidate = 0;
    for (;;) {
        state = state * jump_multiplier + 1;
        const auto top = static_cast<std::uint32_t>(state >> 33);
        const auto wrapped = static_cast<std::int32_t>(top + 1U);  // Java int overflow
        const double next_double = static_cast<double>(wrapped) / 2147483648.0;
        const double quotient = static_cast<double>(candidate + 1) / next_double;
        std::int32_t next = 0;  // Java's (int) cast: NaN -> 0, saturating at the int range
        if (quotient >= 2147483647.0) {
            next = std::numeric_limits<std::int32_t>::max();
        } else if (quotient <= -2147483648.0) {
            next = std::numeric_limits<std::int32_t>::min();
        } else if (quotient == quotient) {
            next = static_cast<std::int32_t>(quotient);
        }
        if (next < 0 || next >= buckets) {
            return candidate;
        }
        candidate = next;
    }
}

}  // namespace detail

/// The paper's reference function: the bucket in [0, buckets) of key. Throws keyplace::error
/// (errc::invalid_argument, "jump_consistent_hash: buckets must be positive: 0") for buckets < 1,
/// through the library's one reporting path (KEYPLACE_ON_ERROR, abort without exceptions).
[[nodiscard]] inline auto jump_consistent_hash(std::uint64_t key, std::int32_t buckets) -> std::int32_t {
    if (buckets < 1) {
        detail::no_buckets("jump_consistent_hash", buckets);
    }
    return detail::jump_bucket(key, buckets);
}

/// Guava's Hashing.consistentHash(long input, int buckets) as of Guava 31.1, reproducing its
/// Java arithmetic: nextDouble() = ((int)(state >>> 33) + 1) / 2^31 in 32-bit int, so when the
/// state's top 31 bits are all ones it wraps to -1.0 and the walk stops where the paper's code
/// continues; next = (int)((candidate + 1) / nextDouble()) with Java's saturating cast.
/// Throws keyplace::error for buckets < 1, as jump_consistent_hash does (Guava throws
/// IllegalArgumentException with the same message).
[[nodiscard]] inline auto guava_consistent_hash(std::int64_t input, std::int32_t buckets) -> std::int32_t {
    if (buckets < 1) {
        detail::no_buckets("guava_consistent_hash", buckets);
    }
    return detail::guava_bucket(input, buckets);
}

/// Guava's HashCode.padToLong(): the first min(8, size) bytes of a hash code, little-endian,
/// zero-extended (a 4-byte code such as murmur3_32's becomes its unsigned value). A Guava
/// HashCode always holds at least one byte; an empty span gives 0.
[[nodiscard]] constexpr auto guava_pad_to_long(std::span<const std::byte> hash_code) noexcept -> std::int64_t {
    std::uint64_t v = 0;
    const std::size_t n = hash_code.size() < 8 ? hash_code.size() : 8;
    for (std::size_t i = 0; i < n; ++i) {
        v |= static_cast<std::uint64_t>(hash_code[i]) << (8 * i);
    }
    return static_cast<std::int64_t>(v);
}

/// Guava's Hashing.consistentHash(HashCode, int buckets): the bytes of the hash code (as
/// HashCode.asBytes() gives them) through padToLong(). Throws for buckets < 1.
[[nodiscard]] inline auto guava_consistent_hash(std::span<const std::byte> hash_code, std::int32_t buckets)
    -> std::int32_t {
    return guava_consistent_hash(guava_pad_to_long(hash_code), buckets);
}

/// Which jump function a basic_jump uses.
enum class jump_form {
    paper,  ///< Lamping & Veach's reference code
    guava,  ///< Guava's Hashing.consistentHash
};

/// Jump consistent hash over the nodes in the order given: node i is bucket i. No table, no
/// per-node state, perfect balance. Only appending a node (push_back) or removing the last one
/// (pop_back) is possible; an arbitrary node cannot be removed, and weights are not supported.
///
/// build() and push_back() throw keyplace::error: empty list, empty, over-long or duplicate id,
/// a weight other than 1 (errc::invalid_weight), more than 2^31 - 1 nodes (errc::too_many_nodes).
/// pop_back() throws errc::empty_membership for the last node. push_back is O(N) (a copy).
template <jump_form Form>
class basic_jump : public detail::lifecycle<basic_jump<Form>, node, no_config, detail::derivation::append_only,
                                            detail::node_order::as_given> {
    friend detail::lifecycle<basic_jump, node, no_config, detail::derivation::append_only,
                             detail::node_order::as_given>;

public:
    using key_hash = xxh3;

    /// Every bucket can be picked.
    [[nodiscard]] auto holders() const noexcept -> std::size_t { return this->size(); }
    [[nodiscard]] auto holds(node_index) const noexcept -> bool { return true; }

    /// O(log N) expected.
    [[nodiscard]] auto pick(std::uint64_t point) const noexcept -> node_index {
        const auto n = static_cast<std::int32_t>(this->nodes_.size());
        if constexpr (Form == jump_form::paper) {
            return node_index{static_cast<std::uint32_t>(detail::jump_bucket(point, n))};
        } else {
            return node_index{static_cast<std::uint32_t>(detail::guava_bucket(static_cast<std::int64_t>(point), n))};
        }
    }

    /// The defined share of each bucket: 1/N (analysis reports it as share_method::expected).
    [[nodiscard]] auto defined_shares() const -> std::vector<double> {
        return std::vector<double>(this->size(), 1.0 / static_cast<double>(this->size()));
    }

private:
    basic_jump() = default;

    auto assign(std::span<const node> nodes, const no_config&) -> detail::failure {
        std::vector<node> sorted;
        if (auto f = detail::sorted_membership(nodes, sorted)) {
            return f;
        }
        if (nodes.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
            return detail::fail(errc::too_many_nodes, std::to_string(nodes.size()) + " nodes; jump takes at most 2^31 - 1");
        }
        if (auto f = detail::unit_weights(nodes, "jump")) {
            return f;
        }
        this->nodes_.assign(nodes.begin(), nodes.end());
        return {};
    }
};

/// Jump as in the paper (the native form).
using jump = basic_jump<jump_form::paper>;
/// Jump as Guava computes it (a compatibility form).
using jump_guava = basic_jump<jump_form::guava>;


KEYPLACE_NAMESPACE_END

#endif
