// Tests of hash.hpp: xxHash's published sanity vectors (Cyan4973/xxHash's sanity test), plain
// strings, integer keys as little-endian bytes, and the hasher concept.
#include "keyplace_catch.hpp"

#include <keyplace/hash.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace {

constexpr std::uint64_t prime32 = 2654435761U;
constexpr std::uint64_t prime64 = 11400714785074694797ULL;

// xxHash's sanity buffer: byte i is the top byte of gen, then gen *= PRIME64 (mod 2^64).
auto sanity_buffer() -> std::vector<std::byte> {
    std::vector<std::byte> buf(2367);
    std::uint64_t gen = prime32;
    for (auto& b : buf) {
        b = static_cast<std::byte>(gen >> 56);
        gen *= prime64;
    }
    return buf;
}

struct vector_case {
    std::size_t len;
    std::uint64_t seed;
    std::uint64_t expected;
};

}  // namespace

TEST_CASE("hash: XXH64 matches xxHash's sanity vectors", "[hash][golden]") {
    const auto buf = sanity_buffer();
    const std::array<vector_case, 9> cases{{
        {0, 0, 0xEF46DB3751D8E999},   {0, prime32, 0xAC75FDA2929B17EF},
        {1, 0, 0xE934A84ADB052768},   {1, prime32, 0x5014607643A9B4C3},
        {4, 0, 0x9136A0DCA57457EE},   {14, 0, 0x8282DCC4994E35C8},
        {14, prime32, 0xC3BD6BF63DEB6DF0}, {222, 0, 0xB641AE8CB691C174},
        {222, prime32, 0x20CB8AB7AE10C14A},
    }};
    for (const auto& c : cases) {
        INFO("len " << c.len << " seed " << c.seed);
        CHECK(keyplace::xxh64{c.seed}(std::span(buf).first(c.len)) == c.expected);
    }
}

TEST_CASE("hash: XXH3-64 matches xxHash's sanity vectors", "[hash][golden]") {
    const auto buf = sanity_buffer();
    const std::array<vector_case, 12> cases{{
        {0, 0, 0x2D06800538D394C2},    {1, 0, 0xC44BDFF4074EECDB},
        {6, 0, 0x27B56A84CD2D7325},    {12, 0, 0xA713DAF0DFBB77E7},
        {24, 0, 0xA3FE70BF9D3510EB},   {48, 0, 0x397DA259ECBA1F11},
        {80, 0, 0xBCDEFBBB2C47C90A},   {195, 0, 0xCD94217EE362EC3A},
        {403, 0, 0xCDEB804D65C6DEA4},  {512, 0, 0x617E49599013CB6B},
        {2048, 0, 0xDD59E2C3A5F038E0}, {2099, 0, 0xC6B9D9B3FC9AC765},
    }};
    for (const auto& c : cases) {
        INFO("len " << c.len);
        CHECK(keyplace::xxh3{}(std::span(buf).first(c.len)) == c.expected);
    }
}

TEST_CASE("hash: plain strings", "[hash][golden]") {
    struct row {
        std::string_view input;
        std::uint64_t xxh64;
        std::uint64_t xxh3;
    };
    const std::array<row, 7> rows{{
        {"", 0xef46db3751d8e999, 0x2d06800538d394c2},
        {"a", 0xd24ec4f1a98c6e5b, 0xe6c632b61e964e1f},
        {"abc", 0x44bc2cf5ad770999, 0x78af5f94892f3950},
        {"xxhash", 0x32dd38952c4bc720, 0xaa4c2b42ae6b13de},
        {"hello", 0x26c7827d889f6da3, 0x9555e8555c62dcfd},
        {"123456789", 0x8cb841db40e6ae83, 0x72dcb18b67a17dff},
        {"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1, 0x6cb00603b5cc47e9},
    }};
    for (const auto& r : rows) {
        INFO(r.input);
        CHECK(keyplace::xxh64{}(r.input) == r.xxh64);
        CHECK(keyplace::xxh3{}(r.input) == r.xxh3);
        CHECK(keyplace::hash_key(keyplace::xxh3{}, r.input) == r.xxh3);
    }
    CHECK(keyplace::xxh64{20141025}("xxhash") == 0xb559b98d844e0635);
    // Envoy's first ring point (envoyproxy/envoy's ring_hash_lb_test.cc).
    CHECK(keyplace::xxh64{}("127.0.0.1:90_0") == 16117243373044804889ULL);
}

TEST_CASE("hash: integer keys are their little-endian bytes", "[hash]") {
    constexpr auto bytes = keyplace::key_bytes(std::uint64_t{0x0102030405060708});
    static_assert(bytes[0] == std::byte{0x08} && bytes[7] == std::byte{0x01});
    static_assert(keyplace::key_bytes(std::int16_t{-2})[0] == std::byte{0xfe});
    static_assert(keyplace::key_bytes(std::int16_t{-2})[1] == std::byte{0xff});
    // Values from `xxhsum -H3` over the bytes 01 00 00 00, 2a 00 .. 00 and ff x 8.
    CHECK(keyplace::hash_key(keyplace::xxh3{}, std::uint32_t{1}) == 0xdb02334e96d65708);
    CHECK(keyplace::hash_key(keyplace::xxh3{}, std::int64_t{42}) == 0xd5a6f8c838df27c8);
    CHECK(keyplace::hash_key(keyplace::xxh3{}, std::int64_t{-1}) == 0x5111c7e47d784413);
    CHECK(keyplace::hash_key(keyplace::xxh3{}, std::uint64_t{~0ULL}) == 0x5111c7e47d784413);
    // A string and a byte span of the same bytes hash alike.
    const std::array<std::byte, 3> abc{std::byte{'a'}, std::byte{'b'}, std::byte{'c'}};
    CHECK(keyplace::hash_key(keyplace::xxh3{}, std::span<const std::byte>(abc)) == 0x78af5f94892f3950);
    CHECK(keyplace::hash_key(keyplace::xxh3{}, "abc") == 0x78af5f94892f3950);
}

namespace {
struct my_hasher {
    [[nodiscard]] auto operator()(std::span<const std::byte> b) const noexcept -> std::uint32_t {
        return static_cast<std::uint32_t>(b.size());
    }
};
struct throwing_hasher {
    auto operator()(std::span<const std::byte> b) const -> std::uint64_t { return b.size(); }
};
}  // namespace

TEST_CASE("hash: the hasher concept", "[hash]") {
    STATIC_REQUIRE(keyplace::hasher<keyplace::xxh3>);
    STATIC_REQUIRE(keyplace::hasher<keyplace::xxh64>);
    STATIC_REQUIRE(keyplace::hasher<my_hasher>);
    STATIC_REQUIRE_FALSE(keyplace::hasher<throwing_hasher>);  // must be noexcept
    STATIC_REQUIRE_FALSE(keyplace::hasher<int>);
    CHECK(keyplace::hash_key(my_hasher{}, "four") == 4U);
}
