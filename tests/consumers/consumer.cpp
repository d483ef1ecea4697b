// A program that uses keyplace the way a service would; every consumer mode builds it.
// Expected owners are the hand-checked 3 x 4 ring of tests/golden (case "hand").
#include <keyplace/keyplace.hpp>

#include <cstdio>
#include <vector>

int main() {
    const std::vector<keyplace::node> nodes{{"c"}, {"a"}, {"b"}};
    const auto ring = keyplace::ring::build(nodes, {.vnodes = 4});
    const bool ok = keyplace::locate(ring, "a").id == "c" && ring.nodes()[ring.pick(0).value].id == "a";
    std::printf("keyplace %d.%d.%d consumer: %s\n", keyplace::version.major, keyplace::version.minor,
                keyplace::version.patch, ok ? "ok" : "WRONG PLACEMENT");
    return ok ? 0 : 1;
}
