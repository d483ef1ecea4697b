// The memory of a ring: memory_bytes() of the built ring (steady), and the process's peak
// resident set (VmHWM, Linux) before and after the build (the build's peak: the sorted input
// and the finished ring alive together). One ring a process, as the peak only grows:
//   for s in "100 160" "1000 160" "10000 256"; do build/bench/bench/keyplace_ring_memory $s; done
#include "proc_status.hpp"

#include <keyplace/ring.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using bench::status_kib;

auto main(int argc, char** argv) -> int {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
    const auto vnodes = static_cast<std::uint32_t>(argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256);
    std::vector<keyplace::node> members;
    for (std::size_t i = 0; i < n; ++i) {
        members.push_back({"node-" + std::to_string(i)});
    }
    const long peak0 = status_kib("VmHWM");
    const auto r = keyplace::ring::build(members, {.vnodes = vnodes});
    const long peak1 = status_kib("VmHWM");
    if (peak0 < 0 || peak1 < 0) {
        std::puts("no /proc/self/status VmHWM here");
        return 1;
    }
    const auto points = static_cast<double>(r.points().size());
    std::printf("ring %zu x %u: %zu points; memory_bytes %.1f MB (%.1f bytes a point); build peak RSS +%.1f MB "
                "(%.1f bytes a point)\n",
                n, vnodes, r.points().size(), static_cast<double>(r.memory_bytes()) / 1e6,
                static_cast<double>(r.memory_bytes()) / points, static_cast<double>(peak1 - peak0) * 1024.0 / 1e6,
                static_cast<double>(peak1 - peak0) * 1024.0 / points);
    return 0;
}
