// Test helpers shared by the test files: memberships, key samples, placements by id.
#ifndef KEYPLACE_TESTS_SUPPORT_HPP_INCLUDED
#define KEYPLACE_TESTS_SUPPORT_HPP_INCLUDED

#include <keyplace/keyplace.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
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

}  // namespace keyplace_test

#endif
