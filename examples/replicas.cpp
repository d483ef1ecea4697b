// Use case: a store keeps 3 copies of every key in 3 different zones. Build the layout of
// the README's worked example (12 nodes, 3 zones x 2 racks), place a few keys, then see what
// a node failure changes.
#include <keyplace/keyplace.hpp>

#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

void show(const keyplace::replica_placer<keyplace::ring>& placer, const char* key) {
    std::array<keyplace::node_index, 3> copies{};
    const auto r = placer.locate(key, copies);
    std::printf("  %-8s", key);
    for (std::size_t k = 0; k < r.placed; ++k) {
        const auto& n = placer.strategy().nodes()[copies[k].value];
        std::printf(" %s (%s/%s)", n.id.c_str(), n.where.zone.c_str(), n.where.rack.c_str());
    }
    std::printf("%s\n", r.degraded ? " degraded" : "");
}

}  // namespace

int main() {
    std::vector<keyplace::node> nodes;
    for (int z = 0; z < 3; ++z) {
        for (int k = 0; k < 2; ++k) {
            for (int n = 0; n < 2; ++n) {
                nodes.push_back({"z" + std::to_string(z) + "r" + std::to_string(k) + "n" + std::to_string(n), 1.0,
                                 {"eu", "zone-" + std::to_string(z), "rack-" + std::to_string(k)}});
            }
        }
    }
    const auto ring = std::make_shared<const keyplace::ring>(keyplace::ring::build(nodes));
    const keyplace::replica_policy policy{.count = 3, .spread = keyplace::failure_domain::zone};
    const auto placer = keyplace::replica_placer<keyplace::ring>::build(ring, policy);
    std::printf("3 copies over zones, 12 nodes:\n");
    for (const char* key : {"user:1", "user:2", "user:3", "user:42"}) {
        show(placer, key);
    }
    const auto after = keyplace::replica_placer<keyplace::ring>::build(ring->without("z1r0n1"), policy);
    std::printf("after z1r0n1 fails (only sets that held it change):\n");
    for (const char* key : {"user:1", "user:2", "user:3", "user:42"}) {
        show(after, key);
    }
    return 0;
}
