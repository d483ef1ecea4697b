// Test helpers shared by the test files: memberships, key samples, placements by id.
#ifndef KEYPLACE_TESTS_SUPPORT_HPP_INCLUDED
#define KEYPLACE_TESTS_SUPPORT_HPP_INCLUDED

#include "keyplace_catch.hpp"

#include <keyplace/keyplace.hpp>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace keyplace_test {

/// Nodes "<prefix>0" ... "<prefix><n-1>", weight 1.
inline auto make_nodes(std::size_t n, const std::string& prefix = "node-")
    -> std::vector<keyplace::node> {
    std::vector<keyplace::node> nodes;
    nodes.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        nodes.push_back({prefix + std::to_string(i)});
    }
    return nodes;
}

/// A span's elements, in a vector (to compare with ==).
template <class T>
auto to_vector(std::span<const T> s) -> std::vector<T> {
    return {s.begin(), s.end()};
}

/// Points of the keys "key-0" ... "key-<n-1>" under XXH3-64 (the native key hash).
inline auto key_points(std::size_t n) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> points(n);
    for (std::size_t i = 0; i < n; ++i) {
        points[i] = keyplace::xxh3{}("key-" + std::to_string(i));
    }
    return points;
}

/// Uniform random 64-bit points from a fixed seed.
inline auto random_points(std::size_t n, std::uint64_t seed) -> std::vector<std::uint64_t> {
    std::mt19937_64 gen(seed);
    std::vector<std::uint64_t> points(n);
    for (auto& p : points) {
        p = gen();
    }
    return points;
}

/// The owner id of each point, so placements under different memberships compare by id.
template <class S>
auto owner_ids(const S& s, const std::vector<std::uint64_t>& points) -> std::vector<std::string> {
    std::vector<std::string> ids(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        ids[i] = s.nodes()[s.pick(points[i]).value].id;
    }
    return ids;
}

/// Keys per node index.
template <class S>
auto load(const S& s, const std::vector<std::uint64_t>& points) -> std::vector<std::size_t> {
    std::vector<std::size_t> counts(s.size());
    for (const auto p : points) {
        ++counts[s.pick(p).value];
    }
    return counts;
}

/// Binomial standard deviation of an observed fraction p over n samples.
inline auto sigma(double p, std::size_t n) -> double {
    return std::sqrt(p * (1.0 - p) / static_cast<double>(n));
}

/// The lines of a golden file, as they are (go-mpchash's compat.out: one owner per line).
inline auto golden_lines(const std::string& name) -> std::vector<std::string> {
    std::ifstream in(std::string(KEYPLACE_GOLDEN_DIR) + "/" + name, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open golden file " + name);
    }
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

/// The records of a golden file: each non-comment line split on spaces.
inline auto golden_records(const std::string& name) -> std::vector<std::vector<std::string>> {
    std::ifstream in(std::string(KEYPLACE_GOLDEN_DIR) + "/" + name, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot open golden file " + name);
    }
    std::vector<std::vector<std::string>> records;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream fields(line);
        std::vector<std::string> record;
        for (std::string f; fields >> f;) {
            record.push_back(f);
        }
        records.push_back(record);
    }
    return records;
}

/// A whole-string unsigned decimal 64-bit value; throws on anything else.
template <class Unsigned>
auto parse_unsigned(const std::string& s, const char* what) -> Unsigned {
    Unsigned v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) {
        throw std::runtime_error(std::string("not ") + what + ": " + s);
    }
    return v;
}
inline auto parse_u64(const std::string& s) -> std::uint64_t {
    return parse_unsigned<std::uint64_t>(s, "an unsigned 64-bit decimal");
}
/// A count: refused where it does not fit the target's std::size_t (32 bits on 32-bit targets).
inline auto parse_size(const std::string& s) -> std::size_t {
    return parse_unsigned<std::size_t>(s, "a decimal count that fits std::size_t");
}

/// Bytes from lowercase hex; "-" is the empty key.
inline auto unhex(const std::string& s) -> std::string {
    std::string out;
    if (s == "-") {
        return out;
    }
    for (std::size_t i = 0; i + 1 < s.size(); i += 2) {
        out += static_cast<char>(std::stoi(s.substr(i, 2), nullptr, 16));
    }
    return out;
}

/// Comma-joined ids of a preference list.
template <class S>
auto joined_ids(const S& s, std::span<const keyplace::node_index> idx) -> std::string {
    std::string out;
    for (const auto i : idx) {
        out += (out.empty() ? "" : ",") + s.nodes()[i.value].id;
    }
    return out;
}

/// The first n of pick_n(point), as comma-joined ids.
template <class S>
auto first_n(const S& s, std::uint64_t point, std::size_t n) -> std::string {
    std::vector<keyplace::node_index> out(n);
    const auto got = s.pick_n(point, out);
    return joined_ids(s, std::span<const keyplace::node_index>(out).first(got));
}

/// Checks that f() throws keyplace::error with this code and a message containing fragment.
template <class F>
void expect_error(F&& f, keyplace::errc code, const std::string& fragment) {
    try {
        (void)f();
        FAIL("no error thrown; expected one containing: " << fragment);
    } catch (const keyplace::error& e) {
        CHECK(e.code() == code);
        CHECK_THAT(e.what(), Catch::Matchers::Contains(fragment));
    }
}

/// Checks one golden "key" or "query" record against s: key bytes hash to the point (keys
/// only), the point's owner, and the first `ranked` of pick_n.
///   key <hex> <point> <owner> <ranking>      query <point> <owner> <ranking>
template <class S>
void check_golden_query(const S& s, const std::vector<std::string>& f, std::size_t ranked) {
    const bool is_key = f[0] == "key";
    const std::size_t at = is_key ? 2 : 1;
    const std::uint64_t point = parse_u64(f[at]);
    if (is_key) {
        CHECK(keyplace::xxh3{}(unhex(f[1])) == point);
        CHECK(keyplace::locate(s, unhex(f[1])).id == f[at + 1]);
    }
    CHECK(s.nodes()[s.pick(point).value].id == f[at + 1]);
    CHECK(first_n(s, point, ranked) == f[at + 2]);
}

}  // namespace keyplace_test

#endif
