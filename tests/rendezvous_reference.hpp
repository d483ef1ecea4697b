// Rendezvous's owner the plain way, the reference its pick is checked and measured against: for
// every node XXH3-64 of the 16 bytes le64(point) ++ le64(seed), its fixed-point draw, and the exact
// comparison of draw / weight, the lower index on a tie. Shared by tests/rendezvous_test.cpp and
// bench/lookup_bench.cpp; needs no test framework.
#ifndef KEYPLACE_TESTS_RENDEZVOUS_REFERENCE_HPP_INCLUDED
#define KEYPLACE_TESTS_RENDEZVOUS_REFERENCE_HPP_INCLUDED

#include <keyplace/detail/log2.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/detail/xxhash.hpp>
#include <keyplace/rendezvous.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace keyplace_reference {

template <class Rendezvous>
auto plain_rendezvous_pick(const Rendezvous& r, std::uint64_t point) -> keyplace::node_index {
    const auto& table = keyplace::detail::log2_table();
    const auto draw = [&](std::size_t i) -> std::uint64_t {
        const std::array<std::uint64_t, 2> words{keyplace::detail::to_le64(point), keyplace::detail::to_le64(r.seeds()[i])};
        const std::uint64_t h = XXH3_64bits(words.data(), sizeof words);
        return h == 0 ? 0 : (std::uint64_t{64} << 48) - keyplace::detail::log2fix(table, 0 - h);
    };
    const auto weights = r.quantized_weights();
    std::uint64_t best = draw(0);
    std::size_t winner = 0;
    for (std::size_t i = 1; i < r.size(); ++i) {
        const std::uint64_t e = draw(i);
        if (keyplace::detail::product_less(e, weights[winner], best, weights[i])) {
            best = e;
            winner = i;
        }
    }
    return keyplace::node_index{static_cast<std::uint32_t>(winner)};
}

}  // namespace keyplace_reference

#endif
