// keyplace_contact_bench: what planning whom to ask costs. The baseline is the key's copies
// alone (placement::copies_of, the replica placer's walk); contact_plan_rf3 adds the plan for a
// QUORUM read from a zone over it, and contact_plan_track_rf3 the tracker through a success. A
// counting operator new reports allocations a plan (allocs_per_plan, which must be 0).
//
//   build/bench/bench/keyplace_contact_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <keyplace/fleet/contact.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <benchmark/benchmark.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

// GCC sees free() of what this operator new returns as a mismatch (it is malloc's).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
auto operator new(std::size_t n) -> void* {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

// 3 zones x 10 nodes on a ring (160 vnodes), 3 copies one a zone: a small cluster's shape.
auto cluster() -> keyplace::snapshot {
    keyplace::snapshot_description d;
    d.cluster = "bench";
    d.epoch = 1;
    d.strategy.name = "ring";
    for (int z = 0; z < 3; ++z) {
        for (int i = 0; i < 10; ++i) {
            keyplace::snapshot_node n{"n" + std::to_string(z) + "-" + std::to_string(i)};
            n.where.region = "eu";
            n.where.zone = "z" + std::to_string(z);
            d.nodes.push_back(n);
        }
    }
    d.replication = {3, keyplace::failure_domain::zone};
    return keyplace::snapshot::build(d);
}

auto keys() -> const std::vector<std::string>& {
    static const std::vector<std::string> k = [] {
        std::vector<std::string> out;
        for (int i = 0; i < 4096; ++i) {
            out.push_back("user:" + std::to_string(i * 7919));
        }
        return out;
    }();
    return k;
}

void copies_rf3(benchmark::State& state) {
    const auto s = cluster();
    std::array<std::uint32_t, 3> out{};
    std::size_t i = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(s.current().copies_of(keys()[i++ & 4095], out));
        benchmark::DoNotOptimize(out);
    }
}

void plan_rf3(benchmark::State& state, bool track) {
    const auto s = cluster();
    const keyplace::contact_planner planner(s);
    keyplace::contact_plan p;
    keyplace::error_info err;
    const keyplace::contact_request r{.op = keyplace::contact_op::read, .level = keyplace::consistency::quorum, .zone = "z1"};
    std::size_t i = 0;
    (void)keys();  // made before counting
    const auto before = allocations.load();
    std::uint64_t plans = 0;
    for (auto _ : state) {
        if (!planner.try_plan(keys()[i++ & 4095], r, p, err)) {
            state.SkipWithError("contact_plan: a plan failed");
            break;
        }
        if (track) {
            keyplace::contact_tracker t(p);
            const auto first = t.start();
            benchmark::DoNotOptimize(t.succeeded(0));
            benchmark::DoNotOptimize(t.succeeded(1));
            benchmark::DoNotOptimize(first);
            if (t.state() != keyplace::contact_state::succeeded) {
                state.SkipWithError("contact_plan: two answers did not succeed");
                break;
            }
        }
        benchmark::DoNotOptimize(p);
        ++plans;
    }
    const auto allocs = allocations.load() - before;
    state.counters["allocs_per_plan"] = plans == 0 ? 0.0 : static_cast<double>(allocs) / static_cast<double>(plans);
    if (allocs != 0) {
        state.SkipWithError("contact_plan: the plan allocated");
    }
}

}  // namespace

BENCHMARK(copies_rf3);
BENCHMARK_CAPTURE(plan_rf3, contact_plan_rf3, false);
BENCHMARK_CAPTURE(plan_rf3, contact_plan_track_rf3, true);
BENCHMARK_MAIN();
