// keyplace bench — a field of the process's /proc/self/status (Linux), for the memory
// measurements that need no Google Benchmark.
#ifndef KEYPLACE_BENCH_PROC_STATUS_HPP_INCLUDED
#define KEYPLACE_BENCH_PROC_STATUS_HPP_INCLUDED

#include <fstream>
#include <string>

namespace bench {

/// A field of /proc/self/status in KiB (VmHWM: the peak resident set), or -1 where there is none.
inline auto status_kib(const std::string& field) -> long {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind(field + ":", 0) == 0) {
            return std::stol(line.substr(field.size() + 1));
        }
    }
    return -1;
}

}  // namespace bench

#endif
