// Multi-probe's owner the plain way, the reference its pick is checked and measured against:
// each probe's strict successor by std::upper_bound over the points, the nearest kept by a
// branch, the earliest probe on a tie. Shared by tests/multiprobe_test.cpp and
// bench/lookup_bench.cpp; needs no test framework.
#ifndef KEYPLACE_TESTS_MULTIPROBE_REFERENCE_HPP_INCLUDED
#define KEYPLACE_TESTS_MULTIPROBE_REFERENCE_HPP_INCLUDED

#include <keyplace/multiprobe.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace keyplace_reference {

template <class Multiprobe>
auto plain_multiprobe_pick(const Multiprobe& m, keyplace::probe_sequence q) -> keyplace::node_index {
    const auto pts = m.points();
    std::uint64_t best_gap = 0;
    std::size_t best = 0;
    std::uint64_t probe = q.start;
    for (std::uint32_t i = 0; i < m.probes(); ++i, probe += q.step) {
        const auto it = std::upper_bound(pts.begin(), pts.end(), probe);
        const std::size_t e = it == pts.end() ? 0 : static_cast<std::size_t>(it - pts.begin());
        const std::uint64_t gap = pts[e] - probe - 1U;
        if (i == 0 || gap < best_gap) {
            best_gap = gap;
            best = e;
        }
    }
    return m.owners()[best];
}

}  // namespace keyplace_reference

#endif
