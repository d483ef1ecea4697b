// Snapshot documents (json.hpp): writing, reading and loading (read + build + digest checks) a
// ring snapshot of 10^3 and 10^4 nodes, beside the build alone and nlohmann::json's own parse of
// the same text, so the cost of the JSON layer reads off one run.
#include "bench_support.hpp"

#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace {

using namespace bench;

/// A ring snapshot of n nodes: node-i at its memcached address, weights 1 to 4, located,
/// 160 points a node, every node active; metadata as an operator writes it.
auto ring_description(std::size_t n) -> keyplace::snapshot_description {
    keyplace::snapshot_description d;
    d.cluster = "cache-eu-1";
    d.epoch = 42;
    d.parent_epoch = 41;
    d.strategy = {.name = "ring", .params = {{"vnodes", std::uint64_t{160}}}};
    const auto members = nodes(n, {.weighted = true, .located = true});
    for (std::size_t i = 0; i < members.size(); ++i) {
        d.nodes.push_back({.id = members[i].id,
                           .address = memcached_host(i) + ":11211",
                           .weight = members[i].weight,
                           .where = members[i].where});
    }
    d.metadata = {.created_ms = 1767225600000, .author = "ops", .reason = "bench"};
    return d;
}

auto document(std::size_t n) -> std::string {
    return keyplace::write_snapshot_json(keyplace::snapshot::build(ring_description(n)));
}

void counters(benchmark::State& state, const std::string& doc) {
    state.counters["nodes"] = static_cast<double>(arg(state));
    state.counters["bytes"] = static_cast<double>(doc.size());
    state.counters["bytes_per_node"] = static_cast<double>(doc.size()) / static_cast<double>(arg(state));
}

void json_write(benchmark::State& state) {
    const auto s = keyplace::snapshot::build(ring_description(arg(state)));
    std::string doc;
    for (auto _ : state) {
        doc = keyplace::write_snapshot_json(s);
        benchmark::DoNotOptimize(doc.data());
    }
    counters(state, doc);
}

void json_read(benchmark::State& state) {
    const std::string doc = document(arg(state));
    keyplace::error_info err;
    std::size_t nodes_read = 0;
    for (auto _ : state) {
        const auto d = keyplace::read_description_json(doc, err);
        nodes_read = d ? d->nodes.size() : 0;
        benchmark::DoNotOptimize(nodes_read);
    }
    if (nodes_read != arg(state)) {
        detail::fail(state, "json_read", "read " + std::to_string(nodes_read) + " nodes: " + err.message());
    }
    counters(state, doc);
}

void json_load(benchmark::State& state) {
    const auto s = keyplace::snapshot::build(ring_description(arg(state)));
    const std::string doc = keyplace::write_snapshot_json(s);
    keyplace::error_info err;
    bool same = true;
    for (auto _ : state) {
        const auto loaded = keyplace::try_load_snapshot_json(doc, err);
        same = same && loaded && loaded->fingerprint() == s.fingerprint();
        benchmark::DoNotOptimize(same);
    }
    if (!same) {
        detail::fail(state, "json_load", "the loaded snapshot differs: " + err.message());
    }
    counters(state, doc);
}

// The baselines: the build without JSON, and nlohmann::json's DOM parse of the same text.
void snapshot_build(benchmark::State& state) {
    const auto d = ring_description(arg(state));
    keyplace::error_info err;
    std::size_t points = 0;
    for (auto _ : state) {
        const auto s = keyplace::snapshot::try_build(d, err);
        benchmark::DoNotOptimize(s ? s->fingerprint().low : 0);
        points = !s ? 0 : s->current().visit([](const auto& strategy) -> std::size_t {
            if constexpr (requires { strategy.points(); }) {
                return strategy.points().size();
            } else {
                return 0;
            }
        });
    }
    state.counters["points"] = static_cast<double>(points);
}

void nlohmann_parse(benchmark::State& state) {
    const std::string doc = document(arg(state));
    std::size_t size = 0;
    for (auto _ : state) {
        const auto j = nlohmann::json::parse(doc);
        size = j["nodes"].size();
        benchmark::DoNotOptimize(size);
    }
    if (size != arg(state)) {
        detail::fail(state, "nlohmann_parse", "parsed " + std::to_string(size) + " nodes");
    }
    counters(state, doc);
}

}  // namespace

auto main(int argc, char** argv) -> int {
    using benchmark::RegisterBenchmark;
    using benchmark::kMillisecond;
    RegisterBenchmark("json_write", json_write)->Arg(1000)->Arg(10000)->Unit(kMillisecond);
    RegisterBenchmark("json_read", json_read)->Arg(1000)->Arg(10000)->Unit(kMillisecond);
    RegisterBenchmark("nlohmann_parse", nlohmann_parse)->Arg(1000)->Arg(10000)->Unit(kMillisecond);
    RegisterBenchmark("snapshot_build", snapshot_build)->Arg(1000)->Arg(10000)->Unit(kMillisecond);
    RegisterBenchmark("json_load", json_load)->Arg(1000)->Arg(10000)->Unit(kMillisecond);
    return run(argc, argv);
}
