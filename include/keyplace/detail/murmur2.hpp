// keyplace — which node owns a key. 64-bit MurmurHash2 (Appleby) in the form GNU libstdc++'s
// std::_Hash_bytes computes it on 64-bit targets (std::hash<std::string> uses seed 0xc70f6907);
// Envoy's ring hash offers it as MURMUR_HASH_2 (source/common/common/hash.h, murmurHash2).
#ifndef KEYPLACE_DETAIL_MURMUR2_HPP_INCLUDED
#define KEYPLACE_DETAIL_MURMUR2_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// libstdc++'s seed for std::hash of strings (STD_HASH_SEED in Envoy).
inline constexpr std::uint64_t std_hash_seed = 0xc70f6907U;

[[nodiscard]] constexpr auto murmur2_shift_mix(std::uint64_t v) noexcept -> std::uint64_t {
    return v ^ (v >> 47);
}

/// MurmurHash2, 64-bit, libstdc++'s variant: whole 8-byte words are read little-endian (what
/// libstdc++ and Envoy read on the little-endian targets they run on; big-endian hosts give
/// other values there, never here), the 1 to 7 tail bytes as one little-endian value.
[[nodiscard]] constexpr auto murmur2_64(std::string_view bytes, std::uint64_t seed = std_hash_seed) noexcept
    -> std::uint64_t {
    constexpr std::uint64_t mul = 0xc6a4a7935bd1e995ULL;
    const auto byte = [&](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])); };
    const std::size_t len = bytes.size();
    const std::size_t whole = len - len % 8;
    std::uint64_t h = seed ^ (static_cast<std::uint64_t>(len) * mul);
    for (std::size_t at = 0; at < whole; at += 8) {
        std::uint64_t word = 0;
        for (std::size_t b = 8; b-- > 0;) {
            word = (word << 8) | byte(at + b);
        }
        h ^= murmur2_shift_mix(word * mul) * mul;
        h *= mul;
    }
    if (whole != len) {
        std::uint64_t tail = 0;
        for (std::size_t b = len; b-- > whole;) {
            tail = (tail << 8) | byte(b);
        }
        h ^= tail;
        h *= mul;
    }
    return murmur2_shift_mix(murmur2_shift_mix(h) * mul);
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
