// The memory of a shadow_compare: the process's peak resident set (VmHWM, Linux) before and
// after it remembers N distinct sampled keys (default 2^20), and the peak bytes a key.
//   build/bench/bench/keyplace_shadow_memory [N]
#include <keyplace/fleet/shadow.hpp>

#include "proc_status.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

using bench::status_kib;

auto main(int argc, char** argv) -> int {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{1} << 20;
    keyplace::snapshot_description d;
    d.cluster = "memory";
    for (int i = 0; i < 10; ++i) {
        d.nodes.push_back({"node-" + std::to_string(i)});
    }
    const auto before = std::make_shared<const keyplace::snapshot>(keyplace::snapshot::build(d));
    auto next = before->successor();
    next.nodes.push_back({"node-10"});
    const auto after = std::make_shared<const keyplace::snapshot>(keyplace::snapshot::build(next));
    keyplace::shadow_compare cmp(before, after, {.sample_per_million = 1'000'000, .max_keys = n});
    const long peak0 = status_kib("VmHWM");
    std::string key;
    for (std::size_t i = 0; i < n; ++i) {
        key = "key-" + std::to_string(i);
        cmp.observe(key);
    }
    const auto r = cmp.report();
    const long peak1 = status_kib("VmHWM");
    if (peak0 < 0 || peak1 < 0) {
        std::puts("no /proc/self/status VmHWM here");
        return 1;
    }
    std::printf("shadow_compare: %llu keys remembered; peak RSS +%ld KiB, %.1f bytes a key at peak\n",
                static_cast<unsigned long long>(r.keys_sampled), peak1 - peak0,
                static_cast<double>(peak1 - peak0) * 1024.0 / static_cast<double>(r.keys_sampled));
    return 0;
}
