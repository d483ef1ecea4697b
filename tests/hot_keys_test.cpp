// Hot-key detection (keyplace/hot_keys.hpp): the Count-Min bounds on Zipf streams against exact
// counts, recall of the true top 10, merging across threads, serializing across processes, and
// bad shapes and bytes.
#include <keyplace/hot_keys.hpp>

#include "keyplace_catch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace hot_keys_test {

constexpr std::size_t universe = 100'000;
constexpr std::size_t requests = 1'000'000;

// Key i of the universe.
auto key_of(std::size_t i) -> std::string { return "user:" + std::to_string(i); }

// A Zipf(alpha) stream over the universe: key i (0-based) drawn with probability proportional to
// 1 / (i + 1)^alpha, by inverting the cumulative weights with 53-bit uniforms from a seeded
// mt19937_64 (so the stream is the same on every run of this platform).
auto zipf_stream(double alpha, std::uint64_t seed) -> std::vector<std::uint32_t> {
    std::vector<double> cumulative(universe);
    double sum = 0;
    for (std::size_t i = 0; i < universe; ++i) {
        sum += 1.0 / std::pow(static_cast<double>(i + 1), alpha);
        cumulative[i] = sum;
    }
    std::mt19937_64 gen(seed);
    std::vector<std::uint32_t> stream(requests);
    for (auto& r : stream) {
        const double u = static_cast<double>(gen() >> 11) * 0x1p-53 * sum;
        const auto at = static_cast<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
        r = static_cast<std::uint32_t>(std::min(at, universe - 1));
    }
    return stream;
}

auto keys() -> const std::vector<std::string>& {
    static const std::vector<std::string> all = [] {
        std::vector<std::string> k;
        k.reserve(universe);
        for (std::size_t i = 0; i < universe; ++i) {
            k.push_back(key_of(i));
        }
        return k;
    }();
    return all;
}

auto exact_counts(const std::vector<std::uint32_t>& stream) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> c(universe, 0);
    for (const auto r : stream) {
        ++c[r];
    }
    return c;
}

// Asserts every bound of hot_keys.hpp for a summary of a stream with these exact counts.
void check_bounds(const keyplace::hot_keys& h, const std::vector<std::uint64_t>& truth) {
    REQUIRE(h.total() == requests);
    // error_bound() = ceil(e * n / w): 664 at n = 10^6, w = 4096.
    REQUIRE(h.error_bound() == static_cast<std::uint64_t>(std::ceil(std::exp(1.0) * 1e6 / 4096.0)));
    std::size_t under = 0;
    std::size_t beyond = 0;
    for (std::size_t i = 0; i < universe; ++i) {
        const std::uint64_t e = h.estimate(keys()[i]);
        under += e < truth[i] ? 1U : 0U;
        beyond += e - std::min(e, truth[i]) > h.error_bound() ? 1U : 0U;
    }
    // Never below the truth; beyond the error bound for at most e^-4 = 1.83% of the keys (the
    // Count-Min bound per key, here over 10^5 keys: its own noise is about 0.04%).
    CHECK(under == 0);
    CHECK(static_cast<double>(beyond) / universe <= h.failure_probability());
    // Every candidate's true count lies in [lower, upper].
    const auto top = h.top(h.size());
    REQUIRE(top.size() == 64);
    for (const auto& c : top) {
        const auto i = static_cast<std::size_t>(std::stoul(c.key.substr(5)));
        CHECK(c.lower <= truth[i]);
        CHECK(truth[i] <= c.upper);
    }
    // The true top 10 (by exact count, ties to the lower key number) against top(10).
    std::vector<std::size_t> order(universe);
    for (std::size_t i = 0; i < universe; ++i) {
        order[i] = i;
    }
    std::partial_sort(order.begin(), order.begin() + 10, order.end(),
                      [&](std::size_t a, std::size_t b) { return truth[a] != truth[b] ? truth[a] > truth[b] : a < b; });
    std::size_t found = 0;
    for (const auto& c : h.top(10)) {
        const auto i = static_cast<std::size_t>(std::stoul(c.key.substr(5)));
        found += std::find(order.begin(), order.begin() + 10, i) != order.begin() + 10 ? 1U : 0U;
    }
    CHECK(found >= 9);  // recall >= 0.9
}

}  // namespace hot_keys_test

TEST_CASE("hot_keys: Zipf streams of 10^6 requests, bounds against exact counts and top-10 recall") {
    using namespace hot_keys_test;
    for (const double alpha : {0.8, 0.99, 1.2}) {
        INFO("alpha " << alpha);
        const auto stream = zipf_stream(alpha, 42);
        auto h = keyplace::hot_keys::make();  // k = 64, 4 x 4096 counters
        for (const auto r : stream) {
            h.observe(keys()[r]);
        }
        check_bounds(h, exact_counts(stream));
    }
}

TEST_CASE("hot_keys: one summary a thread, merged, keeps the bounds of the whole stream") {
    using namespace hot_keys_test;
    for (const double alpha : {0.8, 1.2}) {
        INFO("alpha " << alpha);
        const auto stream = zipf_stream(alpha, 7);
        constexpr std::size_t threads = 4;
        auto merged = keyplace::hot_keys::make();
        std::mutex m;
        std::vector<std::thread> pool;
        for (std::size_t t = 0; t < threads; ++t) {
            pool.emplace_back([&, t] {
                auto own = keyplace::hot_keys::make();
                for (std::size_t i = t; i < stream.size(); i += threads) {
                    own.observe(keys()[stream[i]]);
                }
                const std::lock_guard lock(m);
                merged.merge(own);
            });
        }
        for (auto& th : pool) {
            th.join();
        }
        check_bounds(merged, exact_counts(stream));
    }
}

// Summaries cross processes as bytes: four "processes" each serialize theirs, and the parsed ones
// merge to the same summary as the originals, byte for byte, keeping the bounds of the whole
// stream; the layout is checked at fixed offsets against the documented format.
TEST_CASE("hot_keys: serialized, parsed and merged across processes, the same summary") {
    using namespace hot_keys_test;
    const auto stream = zipf_stream(0.99, 11);
    auto from_bytes = keyplace::hot_keys::make();
    auto direct = keyplace::hot_keys::make();
    for (std::size_t t = 0; t < 4; ++t) {
        auto own = keyplace::hot_keys::make();
        for (std::size_t i = t; i < stream.size(); i += 4) {
            own.observe(keys()[stream[i]]);
        }
        const std::string bytes = own.serialize();
        const auto back = keyplace::hot_keys::parse(bytes);
        CHECK(back.serialize() == bytes);
        CHECK(back.total() == own.total());
        CHECK(back.top(64).size() == own.top(64).size());
        for (const auto& k : own.top(64)) {
            CHECK(back.estimate(k.key) == k.upper);
        }
        from_bytes.merge(back);
        direct.merge(own);
    }
    CHECK(from_bytes.serialize() == direct.serialize());
    check_bounds(from_bytes, exact_counts(stream));
    // After parsing, observing goes on as in the original (the least candidate is found again).
    auto a = keyplace::hot_keys::parse(direct.serialize());
    for (int i = 0; i < 5000; ++i) {
        a.observe(keys()[static_cast<std::size_t>(i)]);
        direct.observe(keys()[static_cast<std::size_t>(i)]);
    }
    CHECK(a.serialize() == direct.serialize());

    // The layout: "KPHK", format 1, k, width, depth, total, then the sketch and candidates.
    auto small = keyplace::hot_keys::make({.k = 2, .width = 16, .depth = 1});
    small.observe("ab", 3);
    const std::string b = small.serialize();
    REQUIRE(b.size() == 28 + 16 * 8 + 4 + (4 + 2 + 16));
    CHECK(b.substr(0, 4) == "KPHK");
    const auto u32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            v |= std::uint32_t{static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)])} << (8 * i);
        }
        return v;
    };
    CHECK(u32(4) == 1);
    CHECK(u32(8) == 2);
    CHECK(u32(12) == 16);
    CHECK(u32(16) == 1);
    CHECK(u32(20) == 3);  // total, low half
    CHECK(u32(28 + 128) == 1);
    CHECK(u32(28 + 128 + 4) == 2);
    CHECK(b.substr(28 + 128 + 8, 2) == "ab");

    // A candidate's upper count is the estimate when last raised, and it decides evictions: x and
    // y share a counter, so y's observation raises x's estimate but not x's upper count. Parsed,
    // the summary keeps x's 1 and evicts x for z as the original does.
    auto tiny = keyplace::hot_keys::make({.k = 2, .width = 16, .depth = 1});
    const std::string x = "x0";
    // The first key prefix<i> whose estimate after observing x alone is `estimate`: 1 shares
    // x's counter, 0 does not.
    const auto key_with = [&](const std::string& prefix, std::uint64_t estimate) {
        auto probe = keyplace::hot_keys::make({.k = 2, .width = 16, .depth = 1});
        probe.observe(x);
        for (int i = 1;; ++i) {
            if (probe.estimate(prefix + std::to_string(i)) == estimate) {
                return prefix + std::to_string(i);
            }
        }
    };
    const std::string y = key_with("x", 1);
    const std::string z = key_with("z", 0);
    tiny.observe(x);
    tiny.observe(y);
    auto parsed = keyplace::hot_keys::parse(tiny.serialize());
    tiny.observe(z, 2);
    parsed.observe(z, 2);
    CHECK(parsed.serialize() == tiny.serialize());
}

TEST_CASE("hot_keys: bytes that are not a summary are refused, naming what is wrong, never read past the end") {
    auto small = keyplace::hot_keys::make({.k = 2, .width = 16, .depth = 1});
    small.observe("ab", 3);
    small.observe("cd", 1);
    const std::string b = small.serialize();
    const auto refused = [](const std::string& bytes, const std::string& message) {
        keyplace::error_info err;
        CHECK_FALSE(keyplace::hot_keys::try_parse(bytes, err).has_value());
        CHECK(err.code() == keyplace::errc::invalid_argument);
        CHECK(err.message() == message);
    };
    // Every prefix is refused (under ASan this also shows no read past the end).
    for (std::size_t n = 0; n < b.size(); ++n) {
        keyplace::error_info err;
        INFO("prefix of " << n << " bytes");
        CHECK_FALSE(keyplace::hot_keys::try_parse(std::string_view(b).substr(0, n), err).has_value());
        CHECK(err);
    }
    refused("KPHX", "hot-key summary bytes: they do not begin with \"KPHK\" ('KPHX')");
    refused(b.substr(0, 30), "hot-key summary bytes: cut short: 30 bytes end inside the summary");
    refused(b + "x", "hot-key summary bytes: 1 byte left over after the summary");
    std::string v = b;
    v[4] = 2;
    refused(v, "hot-key summary bytes: format 2 is not 1");
    v = b;
    v[12] = 17;  // width 17
    refused(v, "hot-key sketch width 17 is outside the powers of two 16..16777216");
    v = b;
    v[8] = 1;  // k 1, two candidates
    refused(v, "hot-key summary bytes: 2 candidates where k is 1");
    v = b;
    v[28 + 128 + 8 + 2] = 9;  // the lower count of "ab" 9 > its upper 3
    refused(v, "hot-key summary bytes: candidate 'ab' counts 9 to 3 requests, outside 0..3 (its estimate) or in the wrong order");
    v = b;
    v[28 + 128 + 8 + 2 + 8] = 5;  // the upper count of "ab" 5 > its estimate 3
    refused(v, "hot-key summary bytes: candidate 'ab' counts 3 to 5 requests, outside 0..3 (its estimate) or in the wrong order");
    v = b;
    v[20] = 1;  // total 1, where the sketch's row counts 4
    refused(v, "hot-key summary bytes: sketch row 0 counts more than the total 1");
    // 28 bytes claiming a 2^24 x 8 sketch are cut short before anything is allocated.
    std::string huge = b.substr(0, 28);
    huge[8] = 1;
    huge[12] = 0;
    huge[15] = 1;  // width 2^24
    huge[16] = 8;  // depth 8
    refused(huge, "hot-key summary bytes: cut short: 28 bytes end inside the summary");
    v = b;
    v.replace(28 + 128 + 4 + (4 + 2 + 16) + 4, 2, "ab");  // "cd" renamed "ab": listed twice
    // "ab" has estimate 3 >= 1, so the duplicate is what is refused.
    refused(v, "hot-key summary bytes: candidate 'ab' is listed twice");
}

TEST_CASE("hot_keys: with room for every key, the lower counts are exact") {
    auto h = keyplace::hot_keys::make({.k = 100, .width = 1 << 16, .depth = 4});
    std::vector<std::uint64_t> truth(100, 0);
    std::mt19937_64 gen(3);
    for (int r = 0; r < 100'000; ++r) {
        const auto i = static_cast<std::size_t>(gen() % 100);
        const std::uint64_t n = 1 + gen() % 3;
        truth[i] += n;
        h.observe(hot_keys_test::key_of(i), n);
    }
    h.observe("user:0", 0);  // counts nothing
    REQUIRE(h.size() == 100);
    for (const auto& c : h.top(100)) {
        const auto i = static_cast<std::size_t>(std::stoul(c.key.substr(5)));
        CHECK(c.lower == truth[i]);
        CHECK(c.upper >= truth[i]);
    }
}

TEST_CASE("hot_keys: at_least suggests only keys certainly that hot") {
    using namespace hot_keys_test;
    const auto stream = zipf_stream(1.2, 11);
    const auto truth = exact_counts(stream);
    auto h = keyplace::hot_keys::make();
    for (const auto r : stream) {
        h.observe(keys()[r]);
    }
    const auto hot = h.at_least(0.01);
    // Zipf 1.2 over 10^5 keys: key 0 has about 20% of the requests, key 10 about 1.1%.
    REQUIRE(!hot.empty());
    CHECK(hot.front().key == "user:0");
    for (const auto& c : hot) {
        const auto i = static_cast<std::size_t>(std::stoul(c.key.substr(5)));
        CHECK(static_cast<double>(truth[i]) >= 0.01 * static_cast<double>(requests));
    }
}

TEST_CASE("hot_keys: copies and moves are independent and keep working") {
    auto a = keyplace::hot_keys::make({.k = 4, .width = 64, .depth = 2});
    for (int i = 0; i < 1000; ++i) {
        a.observe("k" + std::to_string(i % 10), static_cast<std::uint64_t>(1 + i % 10));
    }
    auto b = a;
    b.observe("k0", 1000);
    CHECK(a.total() + 1000 == b.total());
    CHECK(a.top(1).front().key == "k9");
    CHECK(b.top(1).front().key == "k0");
    auto c = std::move(b);
    for (int i = 0; i < 1000; ++i) {  // entries and evictions after the move
        c.observe("m" + std::to_string(i), 5000);
    }
    CHECK(c.size() == 4);
    CHECK(c.top(1).front().upper >= 5000);
    a = c;
    CHECK(a.total() == c.total());
    a.merge(a);  // the stream twice over
    CHECK(a.total() == 2 * c.total());
}

TEST_CASE("hot_keys: bad shapes and shares are refused, naming the value, and change nothing") {
    keyplace::error_info err;
    const auto refused = [&](keyplace::hot_keys_config config, const std::string& text) {
        CHECK(!keyplace::hot_keys::try_make(config, err));
        CHECK(err == keyplace::errc::invalid_argument);
        CHECK(err.message().find(text) != std::string::npos);
    };
    refused({.k = 0}, "count k 0 is outside 1..65536");
    refused({.k = 65537}, "count k 65537");
    refused({.k = 8, .width = 1000}, "sketch width 1000");
    refused({.k = 8, .width = 8}, "sketch width 8");
    refused({.k = 8, .width = std::size_t{1} << 25}, "sketch width 33554432");
    refused({.k = 8, .width = 64, .depth = 0}, "sketch depth 0");
    refused({.k = 8, .width = 64, .depth = 9}, "sketch depth 9");
    CHECK_THROWS_AS(keyplace::hot_keys::make({.k = 0}), keyplace::error);

    const auto message_of = [](auto&& f) -> std::string {
        try {
            f();
        } catch (const keyplace::error& e) {
            return e.what();
        }
        return "(no error)";
    };
    auto h = keyplace::hot_keys::make();
    h.observe("a", 3);
    const auto other = keyplace::hot_keys::make({.k = 64, .width = 2048});
    CHECK(message_of([&] { h.merge(other); }).find("sketch width 2048 and depth 4 cannot merge into width 4096") !=
          std::string::npos);
    CHECK(h.total() == 3);
    CHECK(h.estimate("a") == 3);
    CHECK(message_of([&] { static_cast<void>(h.at_least(0.0)); }).find("hot-key share 0.0") != std::string::npos);
    CHECK(message_of([&] { static_cast<void>(h.at_least(1.5)); }).find("hot-key share 1.5") != std::string::npos);
    CHECK_THROWS_AS(h.at_least(std::nan("")), keyplace::error);
}
