// keyplace — which node owns a key. SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast
// short-input PRF", INDOCRYPT 2012), 64-bit output: go-mpchash's hash (compat/mpchash.hpp).
// Not API.
#ifndef KEYPLACE_DETAIL_SIPHASH_HPP_INCLUDED
#define KEYPLACE_DETAIL_SIPHASH_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// SipHash-2-4 of bytes under the 128-bit key (k0, k1), the key's first 8 bytes being k0 read
/// little-endian: the paper's reference key 00 01 .. 0f is k0 = 0x0706050403020100,
/// k1 = 0x0f0e0d0c0b0a0908. Byte order of the input is the message's own (read as LE words).
[[nodiscard]] constexpr auto siphash24(std::uint64_t k0, std::uint64_t k1, std::span<const std::byte> in) noexcept
    -> std::uint64_t {
    std::uint64_t v0 = k0 ^ 0x736f6d6570736575ULL;
    std::uint64_t v1 = k1 ^ 0x646f72616e646f6dULL;
    std::uint64_t v2 = k0 ^ 0x6c7967656e657261ULL;
    std::uint64_t v3 = k1 ^ 0x7465646279746573ULL;
    const auto rotl = [](std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); };
    const auto round = [&] {
        v0 += v1;
        v1 = rotl(v1, 13);
        v1 ^= v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = rotl(v1, 17);
        v1 ^= v2;
        v2 = rotl(v2, 32);
    };
    const auto word = [&](std::size_t at, std::size_t n) {
        std::uint64_t m = 0;
        for (std::size_t b = 0; b < n; ++b) {
            m |= static_cast<std::uint64_t>(in[at + b]) << (8 * b);
        }
        return m;
    };
    const std::size_t whole = in.size() / 8 * 8;
    for (std::size_t at = 0; at < whole; at += 8) {
        const std::uint64_t m = word(at, 8);
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
    // The last block: the remaining bytes and the length's low byte in the top byte.
    const std::uint64_t last = word(whole, in.size() - whole) | (static_cast<std::uint64_t>(in.size() & 0xffU) << 56);
    v3 ^= last;
    round();
    round();
    v0 ^= last;
    v2 ^= 0xff;
    round();
    round();
    round();
    round();
    return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
