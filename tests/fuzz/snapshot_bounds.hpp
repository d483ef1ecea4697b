// What the snapshot fuzz targets share: the bound on a description whose build one fuzz
// execution can afford (a document is read whatever its size, but built only under this bound).
#ifndef KEYPLACE_TESTS_FUZZ_SNAPSHOT_BOUNDS_HPP_INCLUDED
#define KEYPLACE_TESTS_FUZZ_SNAPSHOT_BOUNDS_HPP_INCLUDED

#include <keyplace/fleet/snapshot_description.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

namespace keyplace_fuzz {

inline auto number_param(const keyplace::snapshot_description& d, std::string_view name, std::uint64_t fallback)
    -> std::uint64_t {
    const auto it = d.strategy.params.find(name);
    if (it == d.strategy.params.end() || !std::holds_alternative<std::uint64_t>(it->second)) {
        return fallback;
    }
    return std::get<std::uint64_t>(it->second);
}

/// Whether building d is cheap enough for one fuzz execution.
inline auto affordable(const keyplace::snapshot_description& d) -> bool {
    if (d.nodes.size() > 64) {
        return false;
    }
    double sum = 0;
    double least = std::numeric_limits<double>::infinity();
    for (const auto& n : d.nodes) {
        if (std::isfinite(n.weight) && n.weight > 0) {
            sum += n.weight;
            least = std::min(least, n.weight);
        }
    }
    const std::string& s = d.strategy.name;
    if (s == "ring") {
        return static_cast<double>(number_param(d, "vnodes", 160)) * sum <= 262144.0;
    }
    if (s == "maglev" || s == "envoy-maglev") {
        return number_param(d, "table-size", 65537) <= 131072;
    }
    if (s == "envoy-ring") {
        const auto min = static_cast<double>(number_param(d, "min-ring-size", 1024));
        const auto max = static_cast<double>(number_param(d, "max-ring-size", 8 * 1024 * 1024));
        const double estimate = d.nodes.empty() ? min : min * sum / least;
        return min <= 65536 && std::min(estimate, max) <= 262144.0;
    }
    if (s == "multiprobe") {
        // Every probe key (4096 of them, for the probe digest) hashes once per probe.
        return number_param(d, "probes", 21) <= 256;
    }
    if (s == "partitions") {
        return number_param(d, "partitions", 1024) <= 16384 && number_param(d, "replicas", 1) <= 16;
    }
    return true;
}

}  // namespace keyplace_fuzz

#endif
