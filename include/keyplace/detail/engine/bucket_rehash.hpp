// keyplace — which node owns a key. The per-bucket rehash that AnchorHash and MementoHash use to
// move a key off a removed bucket: XXH3-64 (seed 0) of the 16 bytes LE64(key) || LE64(bucket).
// An unambiguous encoding rather than the bucket as the seed (for short inputs XXH3 folds the
// seed into the input with XOR, so seeded short inputs can share hashes).
#ifndef KEYPLACE_DETAIL_ENGINE_BUCKET_REHASH_HPP_INCLUDED
#define KEYPLACE_DETAIL_ENGINE_BUCKET_REHASH_HPP_INCLUDED

#include <keyplace/hash.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// h_b(key): independent for every bucket b, a pure function of the 64-bit key hash and b.
[[nodiscard]] inline auto bucket_rehash(std::uint64_t key, std::uint64_t bucket) noexcept -> std::uint64_t {
    std::array<std::byte, 16> bytes{};
    for (std::size_t i = 0; i < 8; ++i) {
        bytes[i] = static_cast<std::byte>((key >> (8 * i)) & 0xffU);
        bytes[8 + i] = static_cast<std::byte>((bucket >> (8 * i)) & 0xffU);
    }
    return xxh3{}(std::span<const std::byte>(bytes));
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
