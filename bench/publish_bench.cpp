// Publication and fingerprints: what a request pays to reach the current snapshot — a
// publisher::reader's get() against C++20 std::atomic<std::shared_ptr>::load(), each followed
// by the same field read, on 1 and 2 threads and beside a writer publishing every 100 µs — and
// what the fingerprint costs in a snapshot build (snapshot::verify() recomputes every
// fingerprint from the built state: the fingerprint part alone); and, for every row of the
// strategy table, a key's owner through a snapshot beside the same strategy asked directly.
#include "bench_support.hpp"

#include <keyplace/detail/splitmix.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/strategy_table.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using namespace bench;
using snapshot_ptr = std::shared_ptr<const keyplace::snapshot>;

// ---- Readers with nothing published meanwhile: one shared publisher (and one shared
// atomic<shared_ptr>) holding a 100-node ring snapshot, read by every benchmark thread.

auto steady_snapshot() -> const snapshot_ptr& {
    static const snapshot_ptr s =
        std::make_shared<const keyplace::snapshot>(snapshot_of(ring_snapshot_description(nodes(100), 160, 7)));
    return s;
}
auto steady_publisher() -> keyplace::publisher& {
    static keyplace::publisher p(steady_snapshot());
    return p;
}
auto steady_atomic() -> std::atomic<snapshot_ptr>& {
    static std::atomic<snapshot_ptr> a(steady_snapshot());
    return a;
}

// Every read sees epoch 7: the sum of the epochs read is 7 per iteration.
void check_sum(benchmark::State& state, const char* name, std::uint64_t sum) {
    const auto want = 7 * static_cast<std::uint64_t>(state.iterations());
    if (sum != want) {
        detail::fail(state, name, "sum of the epochs read " + std::to_string(sum) + ", want " + std::to_string(want));
    }
}

void get_reader(benchmark::State& state) {
    auto r = steady_publisher().make_reader();
    std::uint64_t sum = 0;
    for (auto _ : state) {
        sum += r.get().epoch();
        benchmark::DoNotOptimize(sum);
    }
    check_sum(state, "get/reader", sum);
}

void get_atomic_shared_ptr(benchmark::State& state) {
    auto& a = steady_atomic();
    std::uint64_t sum = 0;
    for (auto _ : state) {
        sum += a.load()->epoch();  // the load, the read, and the copy's release
        benchmark::DoNotOptimize(sum);
    }
    check_sum(state, "get/atomic_shared_ptr", sum);
}

// ---- The same reads while another thread publishes every 100 µs.

// Epochs 1 ... writer_epochs of a 3- to 6-node ring, prebuilt on first use (each build computes
// the 4096-key probe digest, about 0.15 ms: too slow to build between publishes).
constexpr std::size_t writer_epochs = 8192;
auto writer_snapshots() -> const std::vector<snapshot_ptr>& {
    static const auto table = [] {
        std::vector<snapshot_ptr> t;
        for (std::uint64_t e = 1; e <= writer_epochs; ++e) {
            t.push_back(std::make_shared<const keyplace::snapshot>(
                snapshot_of(ring_snapshot_description(nodes(3 + e % 4), 4, e))));
        }
        return t;
    }();
    return table;
}

// Calls publish(snapshot of epoch e) for e = 2, 3, ... one every 100 µs (on average: a late
// wake-up is made up by the next ones) until stopped or out of epochs.
class writer {
public:
    template <class Publish>
    explicit writer(Publish publish)
        : thread_([this, publish] {
              const auto& table = writer_snapshots();
              auto next = std::chrono::steady_clock::now();
              for (std::size_t e = 2; e <= table.size() && !stop_.load(std::memory_order_relaxed); ++e) {
                  next += std::chrono::microseconds(100);
                  std::this_thread::sleep_until(next);
                  publish(table[e - 1]);
                  last_.store(e, std::memory_order_release);
              }
          }) {}
    writer(const writer&) = delete;
    auto operator=(const writer&) -> writer& = delete;
    ~writer() { stop(); }

    /// Stops and joins; returns the last epoch published (1: none).
    auto stop() -> std::uint64_t {
        stop_.store(true, std::memory_order_relaxed);
        if (thread_.joinable()) {
            thread_.join();
        }
        return last_.load(std::memory_order_acquire);
    }

private:
    std::atomic<bool> stop_{false};
    std::atomic<std::uint64_t> last_{1};
    std::thread thread_;
};

void report_writer(benchmark::State& state, const char* name, std::uint64_t last, std::uint64_t final_epoch,
                   std::chrono::steady_clock::duration took) {
    if (final_epoch != last) {
        detail::fail(state, name, "the reader sees epoch " + std::to_string(final_epoch) + " after epoch " +
                                      std::to_string(last) + " was published");
    }
    state.counters["publishes"] = static_cast<double>(last - 1);
    state.counters["us_per_publish"] =
        last > 1 ? std::chrono::duration<double, std::micro>(took).count() / static_cast<double>(last - 1) : 0.0;
}

void get_reader_with_writer(benchmark::State& state) {
    keyplace::publisher p(writer_snapshots().front());
    auto r = p.make_reader();
    std::uint64_t sum = 0;
    const auto start = std::chrono::steady_clock::now();
    writer w([&p](const snapshot_ptr& s) { (void)p.publish(s); });
    for (auto _ : state) {
        sum += r.get().epoch();
        benchmark::DoNotOptimize(sum);
    }
    const auto last = w.stop();
    const auto took = std::chrono::steady_clock::now() - start;
    report_writer(state, "get/reader/writer_100us", last, r.get().epoch(), took);
}

void get_atomic_shared_ptr_with_writer(benchmark::State& state) {
    std::atomic<snapshot_ptr> a(writer_snapshots().front());
    std::uint64_t sum = 0;
    const auto start = std::chrono::steady_clock::now();
    writer w([&a](const snapshot_ptr& s) { a.store(s); });
    for (auto _ : state) {
        sum += a.load()->epoch();
        benchmark::DoNotOptimize(sum);
    }
    const auto last = w.stop();
    const auto took = std::chrono::steady_clock::now() - start;
    report_writer(state, "get/atomic_shared_ptr/writer_100us", last, a.load()->epoch(), took);
}

// ---- What the fingerprint costs: a whole snapshot build, the fingerprint recomputed from the
// built state (verify()), and the ring alone, for N nodes x V points.

void snapshot_build(benchmark::State& state) {
    const auto d = ring_snapshot_description(nodes(arg(state, 0)), static_cast<std::uint32_t>(state.range(1)));
    for (auto _ : state) {
        const auto s = snapshot_of(d);
        benchmark::DoNotOptimize(s.fingerprint());
    }
}

void snapshot_verify(benchmark::State& state) {
    const auto s = snapshot_of(ring_snapshot_description(nodes(arg(state, 0)), static_cast<std::uint32_t>(state.range(1))));
    bool whole = true;
    for (auto _ : state) {
        whole = s.verify() && whole;
        benchmark::DoNotOptimize(whole);
    }
    if (!whole) {
        detail::fail(state, "snapshot_verify", "verify() returned false");
    }
}

void ring_build(benchmark::State& state) {
    const auto members = nodes(arg(state, 0));
    const auto v = static_cast<std::uint32_t>(state.range(1));
    for (auto _ : state) {
        const auto r = ring_of(members, {.vnodes = v});
        benchmark::DoNotOptimize(r.points().data());
    }
}

// ---- Every strategy-table row through a snapshot (the table's rows, no list here): a key's owner
// by snapshot::owner(key) — the key hashed and picked through the placement's variant, the
// override table checked — against the same built strategy taken out of the variant once and
// asked keyplace::locate(strategy, key) in the loop. 100 nodes of weight 1, with eight tokens or
// points each where the row takes them; the row's defaults.

auto table_snapshot(const keyplace::strategy_row& row) -> const keyplace::snapshot& {
    static std::map<std::string_view, keyplace::snapshot> built;
    if (const auto it = built.find(row.name); it != built.end()) {
        return it->second;
    }
    keyplace::snapshot_description d;
    d.cluster = "bench";
    d.epoch = 1;
    d.strategy.name = std::string(row.name);
    std::uint64_t rng = 0x5eed;
    for (const auto& n : nodes(100)) {
        keyplace::snapshot_node sn{n.id};
        for (int t = 0; t < 8; ++t) {
            const std::uint64_t v = keyplace::detail::splitmix64(rng);
            if (row.per_node == keyplace::node_data::tokens) {
                sn.tokens.push_back(static_cast<std::int64_t>(v));
            } else if (row.per_node == keyplace::node_data::points) {
                sn.points.push_back(v);
            }
        }
        d.nodes.push_back(std::move(sn));
    }
    return built.emplace(row.name, keyplace::snapshot::build(d)).first->second;
}

auto table_keys() -> const std::vector<std::string>& {
    static const std::vector<std::string> k = [] {
        std::vector<std::string> out;
        for (int i = 0; i < 4096; ++i) {
            out.push_back("user:" + std::to_string(i));
        }
        return out;
    }();
    return k;
}

void snapshot_owner(benchmark::State& state, const keyplace::strategy_row* row) {
    const auto& s = table_snapshot(*row);
    const auto& k = table_keys();
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(&s.owner(k[i++ & 4095]));
    }
}

void engine_locate(benchmark::State& state, const keyplace::strategy_row* row) {
    const auto& s = table_snapshot(*row);
    const auto& k = table_keys();
    s.current().visit([&](const auto& strategy) {
        std::size_t i = 0;
        for (auto _ : state) {
            benchmark::DoNotOptimize(&keyplace::locate(strategy, k[i++ & 4095]));
        }
    });
}

}  // namespace

auto main(int argc, char** argv) -> int {
    using benchmark::RegisterBenchmark;
    using benchmark::kMillisecond;
    RegisterBenchmark("get/reader", get_reader)->Threads(1)->Threads(2);
    RegisterBenchmark("get/atomic_shared_ptr", get_atomic_shared_ptr)->Threads(1)->Threads(2);
    // 0.3 s of wall time a run: the 8192 prebuilt epochs last 0.82 s at one publish every 100 µs.
    RegisterBenchmark("get/reader/writer_100us", get_reader_with_writer)->MinTime(0.3)->UseRealTime();
    RegisterBenchmark("get/atomic_shared_ptr/writer_100us", get_atomic_shared_ptr_with_writer)
        ->MinTime(0.3)
        ->UseRealTime();
    RegisterBenchmark("snapshot_build", snapshot_build)->Args({100, 160})->Args({10000, 256})->Unit(kMillisecond);
    RegisterBenchmark("snapshot_verify", snapshot_verify)->Args({100, 160})->Args({10000, 256})->Unit(kMillisecond);
    RegisterBenchmark("ring_build", ring_build)->Args({100, 160})->Args({10000, 256})->Unit(kMillisecond);
    for (const auto& row : keyplace::strategy_table) {
        RegisterBenchmark(("snapshot_owner/" + std::string(row.name)).c_str(), snapshot_owner, &row);
        RegisterBenchmark(("engine_locate/" + std::string(row.name)).c_str(), engine_locate, &row);
    }
    return run(argc, argv);
}
