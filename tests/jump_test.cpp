// Tests of jump.hpp: the paper's and Guava's published vectors (Lamping and Veach 2014; Guava's tests),
// vectors from the real Guava 31.1 and the paper's C code (tests/golden), the class of keys on
// which they differ, movement from n to n+1 buckets, and bad input.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/jump.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

using keyplace::guava_consistent_hash;
using keyplace::jump_consistent_hash;
using keyplace::node;
using namespace keyplace_test;

namespace {

// Both forms agree on all of these (published as "compatible with the C++ implementation").
struct vec {
    std::uint64_t key;
    std::int32_t buckets;
    std::int32_t bucket;
};

void check_both(const vec& v) {
    INFO("key " << v.key << " buckets " << v.buckets);
    CHECK(jump_consistent_hash(v.key, v.buckets) == v.bucket);
    CHECK(guava_consistent_hash(static_cast<std::int64_t>(v.key), v.buckets) == v.bucket);
}

}  // namespace

TEST_CASE("jump: published vectors of the paper's code and of Guava", "[jump][golden]") {
    // Guava HashingTest: consistentHash(1..5, 100).
    for (const vec v : {vec{1, 100, 55}, vec{2, 100, 62}, vec{3, 100, 8}, vec{4, 100, 45}, vec{5, 100, 59}}) {
        check_both(v);
    }
    // dgryski/go-jump jump_test.go, generated from the reference C++ code, buckets 1..19.
    const std::array<std::pair<std::uint64_t, std::array<std::int32_t, 19>>, 4> go{{
        {0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
        {1, {0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 17, 17}},
        {0xdeadbeef, {0, 1, 2, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 16, 16, 16}},
        {0x0ddc0ffeebadf00d, {0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 15, 15, 15, 15}},
    }};
    for (const auto& [key, expected] : go) {
        for (std::int32_t n = 1; n <= 19; ++n) {
            check_both({key, n, expected[static_cast<std::size_t>(n - 1)]});
        }
    }
    check_both({256, 1024, 520});  // lithammer/go-jump-consistent-hash documentation
    // Computed with Guava (keys 1..10; buckets 10, 100, 1000, 65536, 2^31 - 1).
    const std::array<std::array<std::int32_t, 5>, 10> guava{{
        {6, 55, 549, 21134, 262355607},   {6, 62, 338, 3927, 736532115},
        {8, 8, 961, 59579, 1315363102},   {1, 45, 172, 2326, 1713570006},
        {4, 59, 231, 29347, 1968702175},  {9, 86, 421, 12215, 446590354},
        {0, 97, 97, 20139, 1388389443},   {4, 82, 191, 20777, 962498826},
        {7, 59, 254, 31791, 791651805},   {7, 73, 751, 32509, 2129077723},
    }};
    const std::array<std::int32_t, 5> sizes{10, 100, 1000, 65536, 2147483647};
    for (std::size_t k = 0; k < guava.size(); ++k) {
        for (std::size_t s = 0; s < sizes.size(); ++s) {
            check_both({k + 1, sizes[s], guava[k][s]});
        }
    }
    // Unsigned keys (buckets 100, 1000, 65536).
    const std::array<std::pair<std::uint64_t, std::array<std::int32_t, 3>>, 7> unsigned_keys{{
        {~0ULL, {92, 313, 18311}},
        {1ULL << 63, {84, 453, 53854}},
        {(1ULL << 63) - 1, {97, 972, 8550}},
        {0xdeadbeef, {87, 285, 64244}},
        {123456789, {34, 294, 42483}},
        {0x9999999999999999, {94, 626, 1754}},
        {0x0ddc0ffeebadf00d, {72, 113, 47800}},
    }};
    for (const auto& [key, expected] : unsigned_keys) {
        check_both({key, 100, expected[0]});
        check_both({key, 1000, expected[1]});
        check_both({key, 65536, expected[2]});
    }
    for (const std::int32_t n : {1, 2, 1000, 2147483647}) {
        check_both({0, n, 0});
    }
}

TEST_CASE("jump: every vector of the real Guava 31.1 and of the paper's C code", "[jump][golden]") {
    // tests/golden/guava_jump_31.1.txt comes from Guava's own jar (GuavaJumpVectors.java);
    // tests/golden/jump_paper.txt from the paper's reference function (jump_paper_reference.c),
    // over the same (key, buckets) pairs, including keys built to reach the two classes where
    // Guava's arithmetic differs: a state whose top 31 bits are all ones (its 32-bit int wraps
    // to -1.0) and steps where (c+1)/(x/2^31) and (b+1)*(2^31/x) round apart.
    const auto guava = golden_records("guava_jump_31.1.txt");
    const auto paper = golden_records("jump_paper.txt");
    REQUIRE(guava.size() == paper.size());
    REQUIRE(guava.size() > 2000);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < guava.size(); ++i) {
        const auto key = parse_u64(guava[i][1]);
        const auto buckets = static_cast<std::int32_t>(parse_u64(guava[i][2]));
        REQUIRE(paper[i][1] == guava[i][1]);
        REQUIRE(paper[i][2] == guava[i][2]);
        INFO("key " << key << " buckets " << buckets);
        CHECK(guava_consistent_hash(static_cast<std::int64_t>(key), buckets) ==
              static_cast<std::int32_t>(parse_u64(guava[i][3])));
        CHECK(jump_consistent_hash(key, buckets) == static_cast<std::int32_t>(parse_u64(paper[i][3])));
        differ += guava[i][3] != paper[i][3] ? 1 : 0;
    }
    CHECK(differ == 120);  // 111 wrap-class pairs and 9 rounding-class pairs; random pairs agree
}

TEST_CASE("jump: moving from n to n+1 buckets moves only keys to bucket n, about 1/(n+1)", "[jump][property]") {
    const auto points = random_points(200'000, 31);
    for (const std::int32_t n : {1, 10, 100, 1000}) {
        std::size_t moved = 0;
        std::size_t elsewhere = 0;
        for (const auto p : points) {
            const auto before = jump_consistent_hash(p, n);
            const auto after = jump_consistent_hash(p, n + 1);
            if (before != after) {
                ++moved;
                elsewhere += after != n ? 1 : 0;
            }
        }
        INFO("n = " << n);
        CHECK(elsewhere == 0);
        const double expected = 1.0 / (n + 1);
        CHECK(std::abs(static_cast<double>(moved) / 200'000.0 - expected) <= 5 * sigma(expected, points.size()));
    }
}

TEST_CASE("jump: the strategy keeps bucket order, with only push_back and pop_back", "[jump]") {
    const auto j = keyplace::jump::build({{"shard-0"}, {"shard-1"}, {"shard-2"}});
    CHECK(j.nodes()[2].id == "shard-2");
    CHECK(j.pick(1).value == static_cast<std::uint32_t>(jump_consistent_hash(1, 3)));
    const auto grown = j.push_back({"shard-3"});
    CHECK(grown.size() == 4);
    CHECK(grown.nodes()[3].id == "shard-3");
    CHECK(grown.pop_back().size() == 3);
    CHECK(j.size() == 3);  // unchanged
    const auto g = keyplace::jump_guava::build({{"a"}, {"b"}});
    CHECK(g.pick(5).value == static_cast<std::uint32_t>(guava_consistent_hash(5, 2)));
}

TEST_CASE("jump: bad input is rejected with an error naming it, nothing changes", "[jump][errors]") {
    using keyplace::errc;
    const auto j = keyplace::jump::build({{"a"}, {"b"}});
    expect_error([] { return keyplace::jump::build(std::vector<node>{}); }, errc::empty_membership, "empty");
    expect_error([] { return keyplace::jump::build({{"a"}, {"a"}}); }, errc::duplicate_id, "'a'");
    expect_error([] { return keyplace::jump::build({{""}}); }, errc::empty_id, "empty");
    expect_error([] { return keyplace::jump::build({{"a"}, {"b", 2.0}}); }, errc::invalid_weight,
           "'b': weight 2; jump places every node with weight 1");
    expect_error([] { return keyplace::jump::build({{"a", std::nan("")}}); }, errc::invalid_weight, "nan");
    expect_error([&] { return j.push_back({"a"}); }, errc::duplicate_id, "'a'");
    expect_error([&] { return j.push_back({"c", 0.5}); }, errc::invalid_weight, "'c': weight 0.5");
    expect_error([] { return keyplace::jump::build({{"solo"}}).pop_back(); }, errc::empty_membership, "'solo'");
    keyplace::error_info ec;
    CHECK_FALSE(keyplace::jump::try_build(std::vector<node>{{"x", 3.0}}, ec));
    CHECK(ec == errc::invalid_weight);
    CHECK(j.size() == 2);
    CHECK(j.nodes()[1].id == "b");
}

TEST_CASE("jump: Guava's consistentHash(HashCode, int) pads the code to a long", "[jump][golden]") {
    // tests/golden/guava_hashcode_31.1.txt comes from Guava's own jar (GuavaHashCodeVectors.java):
    // 16-byte murmur3_128 codes, 4-byte murmur3_32 codes (zero-extended), 1- to 8-byte codes.
    const auto rows = golden_records("guava_hashcode_31.1.txt");
    REQUIRE(rows.size() == 60);
    for (const auto& r : rows) {
        const auto bytes = unhex(r[0]);
        const auto code = std::as_bytes(std::span<const char>(bytes.data(), bytes.size()));
        INFO("hash code " << r[0] << " buckets " << r[1]);
        CHECK(keyplace::guava_consistent_hash(code, static_cast<std::int32_t>(parse_u64(r[1]))) ==
              static_cast<std::int32_t>(parse_u64(r[2])));
    }
    // murmur3_128("hello") prints 029bbd41b3a7d8cb...: padToLong is h1 = 0xcbd8a7b341bd9b02 (§7.1).
    const auto hello = unhex("029bbd41b3a7d8cb191dae486a901e5b");
    CHECK(static_cast<std::uint64_t>(keyplace::guava_pad_to_long(
              std::as_bytes(std::span<const char>(hello.data(), hello.size())))) == 0xcbd8a7b341bd9b02ULL);
    const auto four = unhex("ffffffff");
    CHECK(keyplace::guava_pad_to_long(std::as_bytes(std::span<const char>(four.data(), four.size()))) ==
          0xffffffffLL);  // zero-extended, not sign-extended
    CHECK(keyplace::guava_pad_to_long(std::span<const std::byte>()) == 0);
}

TEST_CASE("jump: a bucket count below 1 is refused by both functions, with Guava's message", "[jump][errors]") {
    using keyplace::errc;
    expect_error([] { return jump_consistent_hash(1, 0); }, errc::invalid_argument,
                 "jump_consistent_hash: buckets must be positive: 0");
    expect_error([] { return jump_consistent_hash(1, -7); }, errc::invalid_argument,
                 "jump_consistent_hash: buckets must be positive: -7");
    expect_error([] { return guava_consistent_hash(1, 0); }, errc::invalid_argument,
                 "guava_consistent_hash: buckets must be positive: 0");
    const std::array<std::byte, 4> code{};
    expect_error([&] { return guava_consistent_hash(std::span<const std::byte>(code), -1); }, errc::invalid_argument,
                 "guava_consistent_hash: buckets must be positive: -1");
    CHECK(jump_consistent_hash(1, 1) == 0);
    CHECK(guava_consistent_hash(1, 1) == 0);
}
