#include <keyplace/keyplace.hpp>
#include <iostream>

int main() {
    const std::vector<keyplace::node> nodes{{"cache-a"}, {"cache-b"}, {"cache-c", 2.0}};
    const auto ring = keyplace::ring::build(nodes);  // 160 points per unit of weight
    std::cout << "user:42 -> " << keyplace::locate(ring, "user:42").id << '\n';

    keyplace::node_index copies[2];  // the owner, then the next distinct node clockwise
    const std::size_t n = keyplace::locate_n(ring, "user:42", copies);
    for (std::size_t i = 0; i < n; ++i) std::cout << "copy " << i << " -> " << ring.nodes()[copies[i].value].id << '\n';

    const auto grown = ring.with({"cache-d"});  // a new value; `ring` is unchanged
    std::cout << "after join -> " << keyplace::locate(grown, "user:42").id << '\n';
}
