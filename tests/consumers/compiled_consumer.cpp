// A service linking keyplace::compiled: it builds a snapshot, writes and loads its document and
// publishes it without compiling the snapshot layer itself (and without any nlohmann header).
// Expected owners are the hand-checked 3 x 4 ring of tests/golden (case "hand").
#include <keyplace/fleet/json.hpp>
#include <keyplace/keyplace.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/snapshot.hpp>

#ifndef KEYPLACE_COMPILED
#error "keyplace::compiled defines KEYPLACE_COMPILED for the programs that link it"
#endif
#ifdef NLOHMANN_JSON_VERSION_MAJOR
#error "with KEYPLACE_COMPILED, keyplace/fleet/json.hpp includes no nlohmann header"
#endif

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

int main() {
    keyplace::snapshot_description d;
    d.cluster = "consumer";
    d.strategy.params["vnodes"] = std::uint64_t{4};
    d.nodes = {{.id = "c"}, {.id = "a"}, {.id = "b"}};
    const auto built = keyplace::snapshot::build(d);
    const auto loaded = keyplace::load_snapshot_json(keyplace::write_snapshot_json(built));
    keyplace::publisher pub(std::make_shared<const keyplace::snapshot>(loaded));
    auto reader = pub.make_reader();
    // The same ring built inline, from the headers, agrees with the library's snapshot.
    const std::vector<keyplace::node> nodes{{"c"}, {"a"}, {"b"}};
    const auto ring = keyplace::ring::build(nodes, {.vnodes = 4});
    bool ok = reader.get().owner("a").id == "c" && keyplace::locate(ring, "a").id == "c" &&
              loaded.fingerprint() == built.fingerprint() && loaded.verify();
    // A refusal crosses the library boundary with its code and location.
    keyplace::error_info err;
    d.nodes[1].weight = -1;
    ok = ok && !keyplace::snapshot::try_build(d, err) && err.code() == keyplace::errc::invalid_weight &&
         err.where() == "nodes[1].weight";
    std::printf("keyplace %d.%d.%d compiled consumer: %s\n", keyplace::version.major, keyplace::version.minor,
                keyplace::version.patch, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
