// The memory of one build: memory_bytes() of the built value (steady), and the process's peak
// resident set (VmHWM, Linux) before and after the build (the build's peak: every temporary of
// the build and the finished value alive together). One build a process, as the peak only grows:
//   for s in "100 160" "1000 160" "10000 256"; do build/bench/bench/keyplace_ring_memory ring $s; done
//   build/bench/bench/keyplace_ring_memory maglev 1000 65537        (strategy, nodes, table size)
// Strategies: ring, ketama (libmemcached weighted, 160 points a server; the count is ignored),
// envoy-ring (the count is the minimum ring size), cassandra (the count is tokens a node),
// maglev and envoy-maglev (the count is the table size), partitions (the count is Q; a fourth
// argument the replicas n, default 1: units are the Q n slots). The first form without a
// strategy is the ring, as before.
#include "proc_status.hpp"

#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/ring.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using bench::status_kib;

namespace {

template <class Build>
auto measure(const std::string& what, Build&& build) -> int {
    const long peak0 = status_kib("VmHWM");
    const auto s = build();
    const long peak1 = status_kib("VmHWM");
    if (peak0 < 0 || peak1 < 0) {
        std::puts("no /proc/self/status VmHWM here");
        return 1;
    }
    std::size_t units = 0;
    const char* unit = "point";
    if constexpr (requires { s.replica_count(); }) {
        units = std::size_t{s.partition_count()} * s.replica_count();
        unit = "slot";
    } else if constexpr (requires { s.table_size(); }) {
        units = s.table_size();
        unit = "slot";
    } else {
        units = s.points().size();
    }
    const auto n = static_cast<double>(units);
    const double peak = static_cast<double>(peak1 - peak0) * 1024.0;
    std::printf("%s: %zu %ss; memory_bytes %.1f MB (%.2f bytes a %s); build peak RSS +%.1f MB (%.2f bytes a %s)\n",
                what.c_str(), units, unit, static_cast<double>(s.memory_bytes()) / 1e6,
                static_cast<double>(s.memory_bytes()) / n, unit, peak / 1e6, peak / n, unit);
    return 0;
}

auto splitmix(std::uint64_t& state) -> std::uint64_t { return keyplace::detail::splitmix64(state); }

}  // namespace

auto main(int argc, char** argv) -> int {
    int at = 1;
    std::string strategy = "ring";
    if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) {
        strategy = argv[1];
        at = 2;
    }
    const std::size_t n = argc > at ? std::strtoull(argv[at], nullptr, 10) : 10000;
    const bool table = strategy == "maglev" || strategy == "envoy-maglev";
    const std::uint64_t count = argc > at + 1 ? std::strtoull(argv[at + 1], nullptr, 10) : table ? 65537 : 256;
    const std::string what = strategy + " " + std::to_string(n) + " x " + std::to_string(count);
    std::vector<keyplace::node> members;
    for (std::size_t i = 0; i < n; ++i) {
        members.push_back({"node-" + std::to_string(i)});
    }
    if (strategy == "ring") {
        return measure(what, [&] { return keyplace::ring::build(members, {.vnodes = static_cast<std::uint32_t>(count)}); });
    }
    if (strategy == "maglev") {
        return measure(what, [&] { return keyplace::maglev::build(members, {.table_size = count}); });
    }
    if (strategy == "envoy-maglev") {
        return measure(what, [&] { return keyplace::compat::envoy_maglev::build(members, {.table_size = count}); });
    }
    if (strategy == "partitions") {
        const auto replicas = argc > at + 2 ? std::strtoul(argv[at + 2], nullptr, 10) : 1UL;
        return measure(what + " x " + std::to_string(replicas), [&] {
            return keyplace::partitions::build(members, {.partitions = static_cast<std::uint32_t>(count),
                                                         .replicas = static_cast<std::uint32_t>(replicas)});
        });
    }
    if (strategy == "envoy-ring") {
        return measure(what, [&] {
            return keyplace::compat::envoy_ring_hash::build(members, {.min_ring_size = count, .max_ring_size = count});
        });
    }
    if (strategy == "ketama") {
        std::vector<keyplace::compat::ketama_server> servers;
        for (std::size_t i = 0; i < n; ++i) {
            servers.push_back({"10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
                                   std::to_string(i & 255) + ":11211",
                               1});
        }
        members = {};
        return measure(strategy + " " + std::to_string(n) + " servers", [&] {
            return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libmemcached_weighted,
                                                  std::span<const keyplace::compat::ketama_server>(servers));
        });
    }
    if (strategy == "cassandra") {
        std::vector<keyplace::compat::cassandra_endpoint> endpoints;
        std::uint64_t state = 1;
        for (std::size_t i = 0; i < n; ++i) {
            keyplace::compat::cassandra_endpoint e{members[i].id, {}, "dc1", "rack" + std::to_string(i % 3)};
            for (std::uint64_t t = 0; t < count; ++t) {
                e.tokens.push_back(static_cast<std::int64_t>(splitmix(state)));
            }
            endpoints.push_back(std::move(e));
        }
        members = {};
        return measure(what, [&] { return keyplace::compat::cassandra_ring::build(endpoints); });
    }
    std::fprintf(stderr, "unknown strategy %s\n", strategy.c_str());
    return 2;
}
