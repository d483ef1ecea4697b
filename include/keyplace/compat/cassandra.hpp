// keyplace — which node owns a key. Cassandra's Murmur3Partitioner token: MurmurHash3_x64_128
// (Appleby) as Cassandra's Java port computes it, including its sign-extended tail bytes, and
// the serialization of partition keys (int, bigint, text, blob, uuid, composite).
#ifndef KEYPLACE_COMPAT_CASSANDRA_HPP_INCLUDED
#define KEYPLACE_COMPAT_CASSANDRA_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {
[[nodiscard]] constexpr auto rotl64(std::uint64_t x, int r) noexcept -> std::uint64_t {
    return (x << r) | (x >> (64 - r));
}
[[nodiscard]] constexpr auto fmix64(std::uint64_t k) noexcept -> std::uint64_t {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}
}  // namespace detail

namespace compat {

/// The two 64-bit halves of MurmurHash3_x64_128.
struct murmur3_128_result {
    std::uint64_t h1;
    std::uint64_t h2;
};

/// Which tail rule to use. MurmurHash3 reads the last len % 16 bytes unsigned; Cassandra's Java
/// port reads them as signed Java bytes and sign-extends each before shifting it into place,
/// so keys whose tail has a byte >= 0x80 hash differently.
enum class murmur3_tail { canonical, cassandra };


/// MurmurHash3_x64_128 of bytes with a seed, with the chosen tail rule.
[[nodiscard]] constexpr auto murmur3_x64_128(std::span<const std::byte> bytes, std::uint64_t seed = 0,
                                             murmur3_tail tail = murmur3_tail::canonical) noexcept
    -> murmur3_128_result {
    constexpr std::uint64_t c1 = 0x87c37b91114253d5ULL;
    constexpr std::uint64_t c2 = 0x4cf5ad432745937fULL;
    const std::size_t len = bytes.size();
    std::uint64_t h1 = seed;
    std::uint64_t h2 = seed;
    auto byte_at = [&](std::size_t i) { return static_cast<std::uint64_t>(bytes[i]); };
    auto block = [&](std::size_t at) {
        std::uint64_t v = 0;
        for (std::size_t b = 0; b < 8; ++b) {
            v |= byte_at(at + b) << (8 * b);
        }
        return v;
    };
    const std::size_t blocks = len / 16;
    for (std::size_t i = 0; i < blocks; ++i) {
        std::uint64_t k1 = block(16 * i);
        std::uint64_t k2 = block(16 * i + 8);
        k1 *= c1;
        k1 = keyplace::detail::rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = keyplace::detail::rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = keyplace::detail::rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = keyplace::detail::rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    // Tail byte i of the last (len % 16): unsigned, or sign-extended as a Java byte.
    auto tail_byte = [&](std::size_t i) -> std::uint64_t {
        const std::uint64_t b = byte_at(16 * blocks + i);
        if (tail == murmur3_tail::cassandra && b >= 0x80) {
            return b | 0xffffffffffffff00ULL;
        }
        return b;
    };
    const std::size_t rest = len & 15;
    std::uint64_t k1 = 0;
    std::uint64_t k2 = 0;
    for (std::size_t i = rest; i > 8; --i) {
        k2 ^= tail_byte(i - 1) << (8 * (i - 9));
    }
    if (rest > 8) {
        k2 *= c2;
        k2 = keyplace::detail::rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    for (std::size_t i = rest < 8 ? rest : 8; i > 0; --i) {
        k1 ^= tail_byte(i - 1) << (8 * (i - 1));
    }
    if (rest > 0) {
        k1 *= c1;
        k1 = keyplace::detail::rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= len;
    h2 ^= len;
    h1 += h2;
    h2 += h1;
    h1 = keyplace::detail::fmix64(h1);
    h2 = keyplace::detail::fmix64(h2);
    h1 += h2;
    h2 += h1;
    return {h1, h2};
}

/// Cassandra's Murmur3Partitioner token of serialized partition-key bytes: h1 of Cassandra's
/// MurmurHash3 as a signed 64-bit value; Long.MIN_VALUE becomes Long.MAX_VALUE (MIN is
/// reserved), and the empty key is the minimum token, Long.MIN_VALUE (the server's rule).
[[nodiscard]] constexpr auto cassandra_token(std::span<const std::byte> key) noexcept -> std::int64_t {
    if (key.empty()) {
        return std::numeric_limits<std::int64_t>::min();
    }
    const auto h1 = static_cast<std::int64_t>(murmur3_x64_128(key, 0, murmur3_tail::cassandra).h1);
    return h1 == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max() : h1;
}

/// Partition-key serialization, as Cassandra hashes it.
namespace cql {

/// int: 4 bytes big-endian.
[[nodiscard]] inline auto int32(std::int32_t v) -> std::vector<std::byte> {
    std::vector<std::byte> out(4);
    const auto u = static_cast<std::uint32_t>(v);
    for (std::size_t i = 0; i < 4; ++i) {
        out[i] = static_cast<std::byte>((u >> (24 - 8 * i)) & 0xffU);
    }
    return out;
}
/// bigint: 8 bytes big-endian.
[[nodiscard]] inline auto bigint(std::int64_t v) -> std::vector<std::byte> {
    std::vector<std::byte> out(8);
    const auto u = static_cast<std::uint64_t>(v);
    for (std::size_t i = 0; i < 8; ++i) {
        out[i] = static_cast<std::byte>((u >> (56 - 8 * i)) & 0xffU);
    }
    return out;
}
/// text: the UTF-8 bytes as given.
[[nodiscard]] inline auto text(std::string_view s) -> std::vector<std::byte> {
    std::vector<std::byte> out(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        out[i] = static_cast<std::byte>(s[i]);
    }
    return out;
}
/// uuid: the 16 bytes in big-endian (text) order, from "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
/// nothing if the text is not a UUID.
[[nodiscard]] inline auto uuid(std::string_view s) -> std::optional<std::vector<std::byte>> {
    if (s.size() != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') {
        return std::nullopt;
    }
    std::vector<std::byte> out;
    int high = -1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            continue;
        }
        const char c = s[i];
        const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (v < 0) {
            return std::nullopt;
        }
        if (high < 0) {
            high = v;
        } else {
            out.push_back(static_cast<std::byte>(high * 16 + v));
            high = -1;
        }
    }
    return out;
}
/// A composite partition key: each component as [uint16 big-endian length][bytes][0x00].
[[nodiscard]] inline auto composite(std::span<const std::vector<std::byte>> components) -> std::vector<std::byte> {
    std::vector<std::byte> out;
    for (const auto& c : components) {
        out.push_back(static_cast<std::byte>((c.size() >> 8) & 0xffU));
        out.push_back(static_cast<std::byte>(c.size() & 0xffU));
        out.insert(out.end(), c.begin(), c.end());
        out.push_back(std::byte{0});
    }
    return out;
}

}  // namespace cql
}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
