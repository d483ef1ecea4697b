// A service linking keyplace::etcd: it publishes a snapshot into the in-memory store and follows
// it with a watcher, as it would with etcd, and its gateway client reports an unreachable etcd.
// Expected owners are the hand-checked 3 x 4 ring of tests/golden (case "hand").
#include <keyplace/etcd.hpp>
#include <keyplace/etcd/memory_store.hpp>

#include <chrono>
#include <cstdio>
#include <memory>

int main() {
    keyplace::snapshot_description d;
    d.cluster = "consumer";
    d.epoch = 1;
    d.strategy.params["vnodes"] = std::uint64_t{4};
    d.nodes = {{.id = "c"}, {.id = "a"}, {.id = "b"}};
    const auto s = keyplace::snapshot::build(d);

    auto store = std::make_shared<keyplace::etcd::memory_store>();
    keyplace::error_info err;
    bool ok = keyplace::etcd::publish(*store, s, err);
    keyplace::etcd::watcher w({.cluster = "consumer", .client_id = "c1"}, [store] { return store; });
    ok = ok && w.wait_for_snapshot(std::chrono::seconds(10)) && w.local()->make_reader().get().owner("a").id == "c";

    // Nothing listens on port 1 of loopback: the transport error names etcd.
    keyplace::etcd::client nowhere({.endpoint = "http://127.0.0.1:1", .timeout = std::chrono::milliseconds(500)});
    ok = ok && !nowhere.get("x", err) && err.message().rfind("etcd", 0) == 0;
    std::printf("keyplace %d.%d.%d etcd consumer: %s\n", keyplace::version.major, keyplace::version.minor,
                keyplace::version.patch, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
