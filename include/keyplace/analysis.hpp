// keyplace — which node owns a key. Analysis: each node's exact share of the hash space.
#ifndef KEYPLACE_ANALYSIS_HPP_INCLUDED
#define KEYPLACE_ANALYSIS_HPP_INCLUDED

#include <keyplace/node.hpp>
#include <keyplace/ring.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// Each node's exact share of a ring's hash space, indexed like r.nodes(); the shares sum
/// to 1 (up to the rounding of each to double). Point i owns the arc (point[i-1], point[i]];
/// point 0 also owns the wrap (point[T-1], max]. Arcs are summed exactly in integers. O(T).
template <class Traits>
[[nodiscard]] auto ownership(const basic_ring<Traits>& r) -> std::vector<double> {
    using point_type = typename basic_ring<Traits>::point_type;
    const auto points = r.points();
    const auto owners = r.owners();
    // Two-word sums: circle is 2^bits, so a node may own up to the whole circle.
    std::vector<point_type> lo(r.size(), 0);
    std::vector<point_type> hi(r.size(), 0);
    const std::size_t total = points.size();
    for (std::size_t i = 0; i < total; ++i) {
        const std::size_t o = owners[i].value;
        const point_type prev = points[i == 0 ? total - 1 : i - 1];
        // Arc length mod 2^bits; zero for entry 0 means the whole circle (all points equal).
        const auto arc = static_cast<point_type>(points[i] - prev);
        if (i == 0 && arc == 0) {
            hi[o] = static_cast<point_type>(hi[o] + 1);
            continue;
        }
        lo[o] = static_cast<point_type>(lo[o] + arc);
        if (lo[o] < arc) {
            hi[o] = static_cast<point_type>(hi[o] + 1);
        }
    }
    constexpr double circle = static_cast<double>(std::numeric_limits<point_type>::max()) + 1.0;
    std::vector<double> share(r.size());
    for (std::size_t n = 0; n < share.size(); ++n) {
        share[n] = static_cast<double>(hi[n]) + static_cast<double>(lo[n]) / circle;
    }
    return share;
}

KEYPLACE_NAMESPACE_END

#endif
