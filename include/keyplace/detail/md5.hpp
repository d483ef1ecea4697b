// keyplace — which node owns a key. MD5 (RFC 1321), written from the RFC, for the ketama
// compatibility modes: every ketama dialect hashes keys and point strings with it. Not for
// security. Incremental (update/finish) so long inputs can be streamed; usable in constexpr.
#ifndef KEYPLACE_DETAIL_MD5_HPP_INCLUDED
#define KEYPLACE_DETAIL_MD5_HPP_INCLUDED

#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

/// An MD5 digest: 16 bytes, in the RFC's output order.
using md5_digest_bytes = std::array<std::uint8_t, 16>;

/// Streaming MD5: update() any number of times, then finish() once.
class md5 {
    // Copies into the block a block's remainder at a time (a key is one copy, not a branch a
    // byte). Defined before its callers: clang 14 cannot evaluate a constexpr member template
    // at compile time when its definition comes after the caller's.
    template <class Byte>
    constexpr void append(const Byte* bytes, std::size_t size) noexcept {
        length_ += size;
        while (size > 0) {
            const std::size_t take = size < 64 - fill_ ? size : 64 - fill_;
            std::transform(bytes, bytes + take, block_.begin() + static_cast<std::ptrdiff_t>(fill_),
                           [](Byte b) { return static_cast<std::uint8_t>(b); });
            fill_ += take;
            bytes += take;
            size -= take;
            if (fill_ == 64) {
                compress();
                fill_ = 0;
            }
        }
    }

public:
    constexpr md5() noexcept = default;

    constexpr void update(std::span<const std::byte> bytes) noexcept { append(bytes.data(), bytes.size()); }
    constexpr void update(std::string_view bytes) noexcept { append(bytes.data(), bytes.size()); }

    /// Pads, appends the bit length (mod 2^64) and returns the digest. Call once.
    [[nodiscard]] constexpr auto finish() noexcept -> md5_digest_bytes {
        const std::uint64_t bits = length_ * 8U;
        block_[fill_++] = 0x80;
        if (fill_ > 56) {
            zero_to(64);
            compress();
            fill_ = 0;
        }
        zero_to(56);
        for (std::size_t i = 0; i < 8; ++i) {
            block_[56 + i] = static_cast<std::uint8_t>((bits >> (8U * i)) & 0xffU);
        }
        compress();
        md5_digest_bytes out{};
        for (std::size_t w = 0; w < 4; ++w) {
            for (std::size_t b = 0; b < 4; ++b) {
                out[4 * w + b] = static_cast<std::uint8_t>((state_[w] >> (8U * b)) & 0xffU);
            }
        }
        return out;
    }

private:
    constexpr void zero_to(std::size_t end) noexcept {
        const auto first = block_.begin() + static_cast<std::ptrdiff_t>(fill_);
        std::fill(first, block_.begin() + static_cast<std::ptrdiff_t>(end), std::uint8_t{0});
    }

    [[nodiscard]] static constexpr auto rotl(std::uint32_t x, unsigned s) noexcept -> std::uint32_t {
        return (x << s) | (x >> (32U - s));
    }

    // RFC 1321 §3.4: T[i] = floor(2^32 * |sin(i + 1)|); shifts per round; message word order.
    static constexpr std::array<std::uint32_t, 64> sine_table{
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
    static constexpr std::array<unsigned, 16> shifts{7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

    constexpr void compress() noexcept {
        std::array<std::uint32_t, 16> x{};
        for (std::size_t i = 0; i < 16; ++i) {
            x[i] = static_cast<std::uint32_t>(block_[4 * i]) |
                   (static_cast<std::uint32_t>(block_[4 * i + 1]) << 8U) |
                   (static_cast<std::uint32_t>(block_[4 * i + 2]) << 16U) |
                   (static_cast<std::uint32_t>(block_[4 * i + 3]) << 24U);
        }
        std::uint32_t a = state_[0];
        std::uint32_t b = state_[1];
        std::uint32_t c = state_[2];
        std::uint32_t d = state_[3];
        // One step of round r: a = b + rotl(a + f(b, c, d) + x[k] + T[i], s), then the words
        // rotate (a, b, c, d) <- (d, a', b, c). The four rounds are separate loops so each
        // unrolls with its own f and message-word order.
        auto step = [&](std::uint32_t f, std::size_t i, std::size_t k, unsigned s) noexcept {
            const std::uint32_t next = b + rotl(a + f + x[k] + sine_table[i], s);
            a = d;
            d = c;
            c = b;
            b = next;
        };
        // F = (b & c) | (~b & d) as d ^ (b & (c ^ d)): one operation after b is known. G =
        // (b & d) | (c & ~d) as a sum (the terms share no bit), so c & ~d adds in before b is
        // known. b is the newest word: the shorter its path, the shorter the chain of 64 steps.
        for (std::size_t i = 0; i < 16; ++i) {
            step(d ^ (b & (c ^ d)), i, i, shifts[i % 4]);
        }
        for (std::size_t i = 16; i < 32; ++i) {
            step((b & d) + (c & ~d), i, (1 + 5 * i) % 16, shifts[4 + i % 4]);
        }
        for (std::size_t i = 32; i < 48; ++i) {
            step(b ^ c ^ d, i, (5 + 3 * i) % 16, shifts[8 + i % 4]);
        }
        for (std::size_t i = 48; i < 64; ++i) {
            step(c ^ (b | ~d), i, (7 * i) % 16, shifts[12 + i % 4]);
        }
        state_[0] += a;
        state_[1] += b;
        state_[2] += c;
        state_[3] += d;
    }

    std::array<std::uint32_t, 4> state_{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    std::array<std::uint8_t, 64> block_{};
    std::size_t fill_ = 0;
    std::uint64_t length_ = 0;
};

/// MD5 of one byte string.
[[nodiscard]] constexpr auto md5_digest(std::string_view bytes) noexcept -> md5_digest_bytes {
    md5 h;
    h.update(bytes);
    return h.finish();
}
[[nodiscard]] constexpr auto md5_digest(std::span<const std::byte> bytes) noexcept -> md5_digest_bytes {
    md5 h;
    h.update(bytes);
    return h.finish();
}

/// Little-endian 32-bit word w (0..3) of a digest: ketama's four points per digest, word 0
/// being the key hash.
[[nodiscard]] constexpr auto md5_le32(const md5_digest_bytes& d, std::size_t w) noexcept -> std::uint32_t {
    return static_cast<std::uint32_t>(d[4 * w]) | (static_cast<std::uint32_t>(d[4 * w + 1]) << 8U) |
           (static_cast<std::uint32_t>(d[4 * w + 2]) << 16U) |
           (static_cast<std::uint32_t>(d[4 * w + 3]) << 24U);
}

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
