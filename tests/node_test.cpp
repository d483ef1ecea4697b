// Tests of node.hpp and error.hpp: validation, id order, error codes and messages.
#include "keyplace_catch.hpp"

#include <keyplace/detail/float_text.hpp>
#include <keyplace/detail/text.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

using keyplace::errc;
using keyplace::node;

TEST_CASE("node: memberships are sorted bytewise by id", "[node]") {
    // Unsigned byte order: 'N' (0x4e) < 'n' (0x6e) < 0xc3 (UTF-8 lead byte); prefixes first.
    const std::vector<node> in{{"\xc3\xb1"}, {"n10"}, {"n1"}, {"N1"}, {"n"}, {"n1:0"}, {"10.0.0.1:11211"}};
    std::vector<node> out;
    REQUIRE_FALSE(keyplace::detail::sorted_membership(in, out));
    std::vector<std::string> ids;
    for (const auto& n : out) {
        ids.push_back(n.id);
    }
    CHECK(ids == std::vector<std::string>{"10.0.0.1:11211", "N1", "n", "n1", "n10", "n1:0", "\xc3\xb1"});
    CHECK(keyplace::detail::find_sorted(out, "n10") == 4);
    CHECK(keyplace::detail::find_sorted(out, "n2") == out.size());
}

TEST_CASE("node: validation names the offending value and leaves the output alone", "[node][errors]") {
    const std::vector<node> untouched{{"keep"}};
    auto check = [&](std::vector<node> in, errc code, const std::string& fragment) {
        auto out = untouched;
        const auto f = keyplace::detail::sorted_membership(in, out);
        CHECK(f.code() == code);
        CHECK_THAT(f.message(), Catch::Matchers::Contains(fragment));
        CHECK(out == untouched);
    };
    check({}, errc::empty_membership, "empty");
    check({{std::string(65536, 'x')}}, errc::id_too_long, "65536 bytes; the limit is 65535");
    std::vector<node> longest_ok;
    CHECK_FALSE(keyplace::detail::sorted_membership(std::vector<node>{{std::string(65535, 'x')}}, longest_ok));
    check({{"a"}, {""}}, errc::empty_id, "empty");
    check({{"a"}, {"b"}, {"a"}}, errc::duplicate_id, "'a' appears more than once");
    check({{"a", 0.0}}, errc::invalid_weight, "'a': weight 0 is not finite and > 0");
    check({{"a", -0.0}}, errc::invalid_weight, "weight -0 ");
    check({{"a", -3.5}}, errc::invalid_weight, "weight -3.5 ");
    check({{"a", 0.1}, {"b", std::numeric_limits<double>::quiet_NaN()}}, errc::invalid_weight, "'b': weight nan");
    check({{"a", std::numeric_limits<double>::infinity()}}, errc::invalid_weight, "weight inf");
    check({{"a", -std::numeric_limits<double>::infinity()}}, errc::invalid_weight, "weight -inf");
    // The smallest positive weight is valid for a membership (a ring may still reject it).
    std::vector<node> out;
    CHECK_FALSE(keyplace::detail::sorted_membership(
        std::vector<node>{{"a", std::numeric_limits<double>::denorm_min()}}, out));
}

TEST_CASE("error: codes, category and exceptions", "[error]") {
    const std::error_code ec = errc::duplicate_id;
    CHECK(ec.category().name() == std::string("keyplace"));
    CHECK(ec.message() == "duplicate node id");
    CHECK(ec.value() == 3);
    for (int v = 1; v <= 8; ++v) {
        CHECK(keyplace::error_category().message(v) != "unknown keyplace error");
    }
    CHECK(keyplace::error_category().message(99) == "unknown keyplace error");
    CHECK(std::error_code(errc::out_of_memory).message() == "out of memory");
    CHECK(static_cast<int>(errc::out_of_memory) == 49);
    const keyplace::error e(errc::unknown_id, "node id 'x' is not a member");
    CHECK(e.code() == errc::unknown_id);
    CHECK(std::string(e.what()) == "node id 'x' is not a member");
    const std::runtime_error& base = e;
    CHECK(std::string(base.what()) == e.what());
    CHECK(keyplace::detail::quote("a'b\\c\x01") == "'a\\x27b\\x5cc\\x01'");
}

TEST_CASE("version: one source, carried in the namespace", "[version]") {
    CHECK(keyplace::version.major == KEYPLACE_VERSION_MAJOR);
    CHECK(keyplace::version.contract == 1);
    CHECK(&keyplace::version == &keyplace::KEYPLACE_NAMESPACE::version);
}

// The one JSON writer of the reports (shadow, transfer plans, keyplace-cli's objects): commas
// between members and items, none after a key, escaped keys and strings, numbers as
// json_number writes them, raw text as given. Expected texts written by hand.
TEST_CASE("text: the JSON writer places commas, keys and values", "[text]") {
    using keyplace::detail::json_writer;
    CHECK(json_writer().begin_object().end_object().str() == "{}");
    CHECK(json_writer().begin_array().end_array().str() == "[]");
    json_writer w;
    w.begin_object()
        .member("a", 1)
        .member("b\"", "x\ny")
        .member("c", true)
        .member("d", 0.5)
        .member("e", std::numeric_limits<double>::infinity())
        .key("f")
        .begin_array()
        .write(std::int64_t{-3})
        .begin_array()
        .end_array()
        .begin_object()
        .end_object()
        .raw("null")
        .end_array()
        .key("g")
        .array(std::vector<std::string>{"p", "q"})
        .end_object();
    CHECK(w.str() == R"({"a":1,"b\"":"x\u000ay","c":true,"d":0.5,"e":null,"f":[-3,[],{},null],"g":["p","q"]})");
}

// detail/float_text.hpp builds the shortest round-trip decimal from snprintf and strtod where the
// standard library has no floating-point std::to_chars (libc++ before 17: the WebAssembly build).
// Here both exist: the C library's form must be std::to_chars's, character for character.
TEST_CASE("float text: the C library's shortest form is std::to_chars's", "[node]") {
    const auto to_chars_text = [](double x) {
        char buf[64];
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
        REQUIRE(ec == std::errc{});
        return std::string(buf, end);
    };
    std::vector<double> xs{0.0,  -0.0,  1.0,   2.0,   100.0, 0.1,   0.3333333333333333, 1e21, 1e22, 1e-7,
                           0.001, 1e-5, 123456789012345680000.0, 9007199254740993.0, 5e-324, 2.2250738585072014e-308,
                           1.7976931348623157e308, 0.5, 2.5, 1234.5678, 65537.0, 1e15, 1e16, 1e17, 0.0001};
    for (int e = -1074; e <= 1023; ++e) {  // every power of two: the lopsided rounding intervals
        xs.push_back(std::ldexp(1.0, e));
        xs.push_back(std::nextafter(std::ldexp(1.0, e), 0.0));
    }
    std::uint64_t state = 0x9e3779b97f4a7c15ULL;  // splitmix64: 10^5 random bit patterns
    while (xs.size() < 100000 + 4200) {
        state += 0x9e3779b97f4a7c15ULL;
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        z ^= z >> 31;
        double x = 0;
        std::memcpy(&x, &z, sizeof x);
        if (std::isfinite(x)) {
            xs.push_back(x);
            xs.push_back(static_cast<double>(z >> 40) / 1000.0);  // short decimals, as weights are
        }
    }
    std::size_t differ = 0;
    for (const double x : xs) {
        const auto want = to_chars_text(x);
        const auto got = keyplace::detail::shortest_from_printf(x);
        if (got != want && ++differ <= 5) {
            UNSCOPED_INFO(want << " came out as " << got);
        }
    }
    CHECK(differ == 0);
    for (const double x : {0.83331, 1.0 / 3, 2.5, 1e20, -0.000123, 0.0}) {
        for (int d = 0; d <= 6; ++d) {
            char buf[400];
            const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, d);
            CHECK(keyplace::detail::fixed_from_printf(x, d) == std::string(buf, end));
        }
    }
}
