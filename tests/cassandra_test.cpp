// Tests of compat/cassandra.hpp against reference/algorithms.md §7.1: the cassandra-dtest
// token table, int/bigint/text/blob/uuid/composite tokens (a port verified against Cassandra
// 5.0), canonical MurmurHash3, and the sign-extended tail where Cassandra differs.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/cassandra.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using keyplace::compat::cassandra_token;
namespace cql = keyplace::compat::cql;

namespace {
auto bytes_of(std::initializer_list<int> v) -> std::vector<std::byte> {
    std::vector<std::byte> out;
    for (const int b : v) {
        out.push_back(static_cast<std::byte>(b));
    }
    return out;
}
auto range_bytes(int first, int last) -> std::vector<std::byte> {
    std::vector<std::byte> out;
    for (int b = first; b <= last; ++b) {
        out.push_back(static_cast<std::byte>(b));
    }
    return out;
}
}  // namespace

TEST_CASE("cassandra: canonical MurmurHash3_x64_128", "[cassandra][golden]") {
    const auto hello = keyplace::compat::murmur3_x64_128(cql::text("hello"));
    CHECK(hello.h1 == 0xcbd8a7b341bd9b02ULL);
    CHECK(hello.h2 == 0x5b1e906a48ae1d19ULL);
    const auto empty = keyplace::compat::murmur3_x64_128(std::span<const std::byte>());
    CHECK(empty.h1 == 0);
    CHECK(empty.h2 == 0);
    // Where Cassandra's signed tail differs from the canonical hash.
    CHECK(static_cast<std::int64_t>(keyplace::compat::murmur3_x64_128(bytes_of({0xff})).h1) == 5177511712917721324LL);
    CHECK(cassandra_token(bytes_of({0xff})) == -4442228696663692417LL);
    CHECK(static_cast<std::int64_t>(keyplace::compat::murmur3_x64_128(cql::text("\xc3\xa9")).h1) == -3956277427552623640LL);
    CHECK(cassandra_token(cql::text("\xc3\xa9")) == 5461403030378599040LL);
}

TEST_CASE("cassandra: the dtest token table, int keys 1..20", "[cassandra][golden]") {
    const std::int64_t expected[] = {
        -4069959284402364209, -3248873570005575792, 9010454139840013625,  -2729420104000364805,
        -7509452495886106294, 2705480034054113608,  1634052884888577606,  -3799847372828181882,
        3728482343045213994,  -6715243485458697746, -4156302194539278891, 8582886034424406875,
        -5034495173465742853, 4279681877540623768,  -1191135763843456182, -5477287129830487822,
        5467144456125416399,  -2695747960476065067, -3974532302236993209, 1388667306199997068};
    for (int k = 1; k <= 20; ++k) {
        INFO("int " << k);
        CHECK(cassandra_token(cql::int32(k)) == expected[k - 1]);
    }
}

TEST_CASE("cassandra: tokens of every key type", "[cassandra][golden]") {
    const std::vector<std::pair<std::int32_t, std::int64_t>> ints{
        {0, -3485513579396041028}, {-1, 7297452126230313552}, {42, -7160136740246525330},
        {127, 4443639997907684431}, {128, -9081975895656599623}, {255, -8423851636648339959},
        {256, 180151580513994396}, {1000, 7935772098093053663}, {-1000, 5905661066942090405},
        {2147483647, -765994672030311617}, {std::numeric_limits<std::int32_t>::min(), -420533958509279465}};
    for (const auto& [k, t] : ints) {
        INFO("int " << k);
        CHECK(cassandra_token(cql::int32(k)) == t);
    }
    const std::vector<std::pair<std::int64_t, std::int64_t>> bigints{
        {0, 2945182322382062539}, {1, 6292367497774912474}, {-1, 7071048584287372947},
        {std::numeric_limits<std::int64_t>::max(), -1722304415079482439},
        {std::numeric_limits<std::int64_t>::min(), 9204767954415360687}};
    for (const auto& [k, t] : bigints) {
        INFO("bigint " << k);
        CHECK(cassandra_token(cql::bigint(k)) == t);
    }
    const std::vector<std::pair<std::string, std::int64_t>> texts{
        {"a", -8839064797231613815}, {"ab", -7815133031266706642}, {"abc", -5434086359492102041},
        {"abcd", -5153323217664422577}, {"abcde", 2321271983248423864}, {"abcdef", -1982280103179862187},
        {"abcdefg", -6427428730009885543}, {"abcdefgh", -3708139591217214462}, {"hello", -3758069500696749310},
        {"cassandra", 356242581507269238}, {"murmur3", 5322121941860471994},
        {"test_key_12345", -3182120811138177122}, {"0123456789abcde", -6472281833689111727},
        {"0123456789abcdef", 5467490433528156583},
        {"this is a longer test key for murmur3 hashing", -7889617755374116647}};
    for (const auto& [k, t] : texts) {
        INFO("text " << k);
        CHECK(cassandra_token(cql::text(k)) == t);
    }
    CHECK(cassandra_token(bytes_of({0x00})) == 5048724184180415669);
    CHECK(cassandra_token(bytes_of({0x80})) == -5284281814142962636);
    CHECK(cassandra_token(bytes_of({0xff, 0xfe})) == -2002833339314343643);
    CHECK(cassandra_token(range_bytes(0x80, 0x89)) == -7623170703309721106);
    CHECK(cassandra_token(range_bytes(0x01, 0x0f)) == 597835946752277653);
    CHECK(cassandra_token(range_bytes(0x01, 0x10)) == -5563837382979743776);
    const std::vector<std::pair<std::string, std::int64_t>> uuids{
        {"00000000-0000-0000-0000-000000000000", 5457549051747178710},
        {"ffffffff-ffff-ffff-ffff-ffffffffffff", -2824192546314762522},
        {"550e8400-e29b-41d4-a716-446655440000", 4277286421682315655},
        {"12345678-1234-1234-1234-123456789abc", -8497799532739775204}};
    for (const auto& [u, t] : uuids) {
        INFO("uuid " << u);
        const auto b = cql::uuid(u);
        REQUIRE(b.has_value());
        CHECK(cassandra_token(*b) == t);
    }
    const std::vector<std::byte> hello42[] = {cql::text("hello"), cql::int32(42)};
    CHECK(cassandra_token(cql::composite(hello42)) == 7666157718303755816);
    const std::vector<std::byte> world99[] = {cql::text("world"), cql::int32(99)};
    CHECK(cassandra_token(cql::composite(world99)) == -4641306270390207264);
}

TEST_CASE("cassandra: the empty key and the reserved minimum", "[cassandra][errors]") {
    CHECK(cassandra_token(std::span<const std::byte>()) == std::numeric_limits<std::int64_t>::min());
    CHECK_FALSE(cql::uuid("not-a-uuid").has_value());
    CHECK_FALSE(cql::uuid("550e8400-e29b-41d4-a716-44665544000g").has_value());
    CHECK_FALSE(cql::uuid("550e8400e29b-41d4-a716-4466554400000").has_value());
}
