// keyplace — publish → adopt latency through etcd: N in-process watchers of one cluster, 50
// successive epochs published by etcd::publish; for each watcher and epoch the time from
// publish() returning to that watcher's on_adopt. Prints the median and p99 over all of them.
//   keyplace_etcd_latency ENDPOINT [WATCHERS=8] [EPOCHS=50]
#include <keyplace/etcd.hpp>
#include <keyplace/fleet/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace etcd = keyplace::etcd;
using clock_type = std::chrono::steady_clock;

namespace {

auto make(const std::string& cluster, std::uint64_t epoch) -> keyplace::snapshot {
    keyplace::snapshot_description d;
    d.cluster = cluster;
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy = {.name = "ring", .params = {{"vnodes", std::uint64_t{64}}}};
    for (std::uint64_t i = 0; i < 8 + epoch % 4; ++i) {
        d.nodes.push_back({.id = "node-" + std::to_string(i) + "-" + std::to_string(epoch)});
    }
    return keyplace::snapshot::build(d);
}

}  // namespace

auto main(int argc, char** argv) -> int {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s ENDPOINT [WATCHERS=8] [EPOCHS=50]\n", argv[0]);
        return 2;
    }
    const std::string endpoint = argv[1];
    const std::size_t n = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 8;
    const std::uint64_t epochs = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 50;
    const std::string cluster =
        "latency-" + std::to_string(clock_type::now().time_since_epoch().count() % 1000000000);

    std::mutex mu;
    std::condition_variable cv;
    // adopted[w][e]: when watcher w adopted epoch e.
    std::vector<std::vector<clock_type::time_point>> adopted(n, std::vector<clock_type::time_point>(epochs + 1));
    std::vector<std::uint64_t> last(n, 0);

    std::vector<std::unique_ptr<etcd::watcher>> ws;
    for (std::size_t w = 0; w < n; ++w) {
        etcd::watcher_options o;
        o.connection.endpoint = endpoint;
        o.cluster = cluster;
        o.client_id = "bench-" + std::to_string(w);
        o.on_adopt = [&, w](const keyplace::snapshot& s) {
            const auto t = clock_type::now();
            const std::lock_guard lock(mu);
            if (s.epoch() <= epochs) {
                adopted[w][s.epoch()] = t;
            }
            last[w] = s.epoch();
            cv.notify_all();
        };
        ws.push_back(std::make_unique<etcd::watcher>(std::move(o)));
    }

    etcd::client c({.endpoint = endpoint});
    std::vector<double> ms;
    std::size_t missed = 0;
    for (std::uint64_t e = 1; e <= epochs; ++e) {
        const auto s = make(cluster, e);
        keyplace::error_info err;
        if (!etcd::publish(c, s, err)) {
            std::fprintf(stderr, "publish of epoch %llu failed: %s\n", static_cast<unsigned long long>(e),
                         err.message().c_str());
            return 1;
        }
        const auto published = clock_type::now();
        std::unique_lock lock(mu);
        const bool all = cv.wait_for(lock, std::chrono::seconds(10), [&] {
            return std::all_of(last.begin(), last.end(), [&](std::uint64_t x) { return x >= e; });
        });
        for (std::size_t w = 0; w < n; ++w) {
            if (adopted[w][e] == clock_type::time_point{}) {
                ++missed;  // skipped (a later epoch came first) or not adopted in time
                continue;
            }
            // Adopted before publish() returned (the watch raced the CAS's answer): 0.
            ms.push_back(std::max(0.0, std::chrono::duration<double, std::milli>(adopted[w][e] - published).count()));
        }
        if (!all) {
            std::fprintf(stderr, "epoch %llu: not every watcher adopted it within 10 s\n",
                         static_cast<unsigned long long>(e));
        }
    }
    ws.clear();
    if (ms.empty()) {
        std::fprintf(stderr, "no samples\n");
        return 1;
    }
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))]; };
    std::printf("keyplace_etcd_latency: %zu watchers, %llu epochs, %zu samples (%zu missed)\n", n,
                static_cast<unsigned long long>(epochs), ms.size(), missed);
    std::printf("publish-return -> on_adopt: median %.2f ms, p99 %.2f ms, max %.2f ms\n", at(0.5), at(0.99),
                ms.back());
    return 0;
}
