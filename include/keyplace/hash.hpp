// keyplace — which node owns a key. Key hashing: XXH3-64 (the native key hash), XXH64, and the
// hasher concept. See xxHash (Collet), whose XXH3/XXH64 outputs are stable since v0.8.0.
#ifndef KEYPLACE_HASH_HPP_INCLUDED
#define KEYPLACE_HASH_HPP_INCLUDED

#include <keyplace/detail/xxhash.hpp>
#include <keyplace/version.hpp>

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

KEYPLACE_NAMESPACE_BEGIN

/// A key hasher maps key bytes to a point. Pure, const and noexcept: the same bytes give the
/// same point in every process, on every platform.
template <class H>
concept hasher = std::copyable<H> && requires(const H& h, std::span<const std::byte> bytes) {
    { h(bytes) } noexcept -> std::unsigned_integral;
};

/// XXH3-64 with seed 0: keyplace's native key hash (placement contract, doc/contract.md).
struct xxh3 {
    [[nodiscard]] auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint64_t {
        return XXH3_64bits(bytes.data(), bytes.size());
    }
    [[nodiscard]] auto operator()(std::string_view bytes) const noexcept -> std::uint64_t {
        return XXH3_64bits(bytes.data(), bytes.size());
    }
};

/// Classic XXH64 with a seed (default 0), as Envoy and many others use it.
struct xxh64 {
    std::uint64_t seed = 0;

    [[nodiscard]] auto operator()(std::span<const std::byte> bytes) const noexcept -> std::uint64_t {
        return XXH64(bytes.data(), bytes.size(), seed);
    }
    [[nodiscard]] auto operator()(std::string_view bytes) const noexcept -> std::uint64_t {
        return XXH64(bytes.data(), bytes.size(), seed);
    }
};

/// Integer keys (not bool) are hashed as their little-endian bytes, independent of the host's
/// byte order (placement contract).
template <class T>
concept integer_key = std::integral<T> && !std::same_as<std::remove_cv_t<T>, bool>;

/// The little-endian bytes of an integer key (see above).
template <integer_key T>
[[nodiscard]] constexpr auto key_bytes(T value) noexcept -> std::array<std::byte, sizeof(T)> {
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(value);
    std::array<std::byte, sizeof(T)> out{};
    for (auto& b : out) {
        b = static_cast<std::byte>(u & U{0xff});
        if constexpr (sizeof(T) > 1) {
            u = static_cast<U>(u >> 8U);
        }
    }
    return out;
}

/// The bytes of a string key, as they are.
[[nodiscard]] inline auto key_bytes(std::string_view key) noexcept -> std::span<const std::byte> {
    return std::as_bytes(std::span<const char>(key.data(), key.size()));
}

/// Hashes a key (string or integer) with hasher H.
template <hasher H, class Key>
[[nodiscard]] auto hash_key(const H& h, const Key& key) noexcept {
    if constexpr (integer_key<Key>) {
        if constexpr (std::endian::native == std::endian::little) {
            // The value's own bytes are already little-endian; copying them whole avoids the
            // store-forwarding stall of writing key_bytes() byte by byte and loading words.
            const Key copy = key;
            return h(std::as_bytes(std::span<const Key, 1>(&copy, 1)));
        } else {
            const auto bytes = key_bytes(key);
            return h(std::span<const std::byte>(bytes));
        }
    } else if constexpr (std::is_convertible_v<const Key&, std::span<const std::byte>>) {
        return h(std::span<const std::byte>(key));
    } else {
        return h(key_bytes(std::string_view(key)));
    }
}

namespace detail {

/// The per-node hashes of the placement contract: value j of a node id is
/// XXH3-64(le32(len(id)) ++ id ++ le32(j)). The ring's points are values 0..c-1; rendezvous
/// and Maglev use values 0 and 1. The length prefix keeps (id, j) pairs from colliding.
class node_hasher {
public:
    explicit node_hasher(std::string_view id) {
        buf_.reserve(id.size() + 8);
        append_le32(static_cast<std::uint32_t>(id.size()));
        buf_ += id;
        append_le32(0);
    }

    [[nodiscard]] auto operator()(std::uint32_t j) noexcept -> std::uint64_t {
        const std::size_t at = buf_.size() - 4;
        for (std::size_t b = 0; b < 4; ++b) {
            buf_[at + b] = static_cast<char>((j >> (8 * b)) & 0xffU);
        }
        return xxh3{}(std::string_view(buf_));
    }

private:
    void append_le32(std::uint32_t v) {
        for (int b = 0; b < 4; ++b) {
            buf_ += static_cast<char>((v >> (8 * b)) & 0xffU);
        }
    }
    std::string buf_;
};

}  // namespace detail

KEYPLACE_NAMESPACE_END

#endif
