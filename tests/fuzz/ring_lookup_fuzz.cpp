// Fuzz target: the sorted-ring engine (detail/engine/sorted_ring.hpp) behind every ring — its prefix
// index, its direct owner table of 16-, 32- or 64-bit entries with records for crowded buckets —
// against a plain binary search, through compat::point_ring over points the fuzzer chooses, of
// every width and signedness, under both lookup rules.
//
// Input: a byte choosing the point type, a byte for the lookup rule and the node count (up to
// 8, or past the 1024 and 32768 owners the narrow tables hold), a byte choosing how points are
// spelled (raw; small steps, so runs of equal and adjacent points; a fixed top, so one crowded
// bucket), then points with owners; what is left are hashes to look up.
// Invariants: points() sorted in the point type's order, equal points by owner; for every point,
// its neighbours, the ends of the circle, the input's hashes (also with bits above the point's
// width set): entry_of() is the first point >= the hash (> under lookup_rule::after), wrapping to
// 0, pick() and pick_batch() its owner, and walk() the owners from there on; the holders are the
// nodes with points; the regions' measures sum to exactly the circle, 2^bits.
#include "fuzz_support.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/hash.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using keyplace_fuzz::input;

template <class Point>
using ring = keyplace::compat::point_ring<Point, keyplace::xxh3>;

template <class Point>
auto reference_entry(const std::vector<Point>& points, keyplace::lookup_rule rule, std::uint64_t h) -> std::size_t {
    const auto p = static_cast<Point>(h);
    const auto it = rule == keyplace::lookup_rule::at_or_after ? std::lower_bound(points.begin(), points.end(), p)
                                                               : std::upper_bound(points.begin(), points.end(), p);
    return it == points.end() ? 0 : static_cast<std::size_t>(it - points.begin());
}

auto node_count(input& in) -> std::size_t {
    const std::uint8_t b = in.byte();
    switch (b % 64) {
        case 62:
            return 1025 + in.below(64);  // past the 16-bit table's 1024 owners
        case 63:
            return 32769;  // past the 32-bit table's 32768
        default:
            return 1 + b % 8;
    }
}

template <class Point>
void fuzz(input& in) {
    using U = std::make_unsigned_t<Point>;
    constexpr unsigned bits = 8 * sizeof(Point);
    const auto rule = in.flag() ? keyplace::lookup_rule::after : keyplace::lookup_rule::at_or_after;
    const std::size_t nodes = node_count(in);
    const std::uint8_t spelling = in.byte() % 4;
    const std::size_t count = 1 + in.below(spelling == 3 ? 4096 : 1024);
    const U top = in.bits<U>();

    std::vector<keyplace::node> members;
    members.reserve(nodes);
    for (std::size_t i = 0; i < nodes; ++i) {
        members.push_back({"n" + std::to_string(i)});
    }
    std::vector<keyplace::ring_point<Point>> given;
    U at = in.bits<U>();
    for (std::size_t i = 0; i < count && !in.empty(); ++i) {
        switch (spelling) {
            case 0:  // raw
                at = in.bits<U>();
                break;
            case 1:  // small steps, equal points included
                at = static_cast<U>(at + in.byte() % 4);
                break;
            case 2:  // one crowded bucket: the top bits fixed
                at = bits <= 8 ? in.bits<U>() : static_cast<U>((top & ~U{0xff}) | in.byte());
                break;
            default:  // runs of the same point, then a jump
                at = in.byte() < 32 ? in.bits<U>() : at;
                break;
        }
        const auto owner = static_cast<std::uint32_t>(nodes <= 256 ? in.byte() % nodes : in.bits<std::uint16_t>() % nodes);
        given.push_back({static_cast<Point>(at), owner});
    }
    if (given.empty()) {
        return;
    }
    keyplace::error_info err;
    const auto r = ring<Point>::try_build(members, keyplace::compat::given_points<Point>(given, rule), err);
    KEYPLACE_FUZZ_CHECK_MSG(r.has_value(), err.message());

    // The reference: the entries sorted by (point, owner), as the contract orders them.
    std::sort(given.begin(), given.end(), [](const auto& a, const auto& b) {
        return a.point != b.point ? a.point < b.point : a.owner < b.owner;
    });
    std::vector<Point> points;
    std::vector<std::uint32_t> owners;
    std::vector<bool> holds(nodes, false);
    for (const auto& e : given) {
        points.push_back(e.point);
        owners.push_back(e.owner);
        holds[e.owner] = true;
    }
    KEYPLACE_FUZZ_CHECK(std::equal(points.begin(), points.end(), r->points().begin(), r->points().end()));
    for (std::size_t i = 0; i < owners.size(); ++i) {
        KEYPLACE_FUZZ_CHECK(r->owners()[i].value == owners[i]);
    }
    KEYPLACE_FUZZ_CHECK(r->holders() == static_cast<std::size_t>(std::count(holds.begin(), holds.end(), true)));

    std::vector<std::uint64_t> hashes{0, std::numeric_limits<std::uint64_t>::max(),
                                      static_cast<std::uint64_t>(static_cast<U>(std::numeric_limits<Point>::min())),
                                      static_cast<std::uint64_t>(static_cast<U>(std::numeric_limits<Point>::max()))};
    for (const Point p : points) {
        const auto u = static_cast<U>(p);
        for (const U v : {u, static_cast<U>(u - 1), static_cast<U>(u + 1)}) {
            hashes.push_back(static_cast<std::uint64_t>(v));
        }
    }
    while (in.left() >= 8) {
        hashes.push_back(in.bits<std::uint64_t>());
    }
    if constexpr (bits < 64) {
        // Bits above the point's width are not part of its point.
        const std::size_t n = hashes.size();
        for (std::size_t i = 0; i < n; ++i) {
            hashes.push_back(hashes[i] ^ (0x5a5a5a5a5a5a5a5aULL << bits));
        }
    }
    std::vector<keyplace::node_index> batch(hashes.size());
    KEYPLACE_FUZZ_CHECK(r->pick_batch(hashes, batch) == hashes.size());
    for (std::size_t i = 0; i < hashes.size(); ++i) {
        const std::uint64_t h = hashes[i];
        const std::size_t want = reference_entry(points, rule, h);
        KEYPLACE_FUZZ_CHECK_MSG(r->entry_of(h) == want, "hash " + std::to_string(h) + ": entry " +
                                                            std::to_string(r->entry_of(h)) + ", want " +
                                                            std::to_string(want));
        KEYPLACE_FUZZ_CHECK_MSG(r->pick(h).value == owners[want],
                                "hash " + std::to_string(h) + ": owner " + std::to_string(r->pick(h).value) +
                                    ", want " + std::to_string(owners[want]) + " (entry " + std::to_string(want) +
                                    ")");
        KEYPLACE_FUZZ_CHECK(batch[i].value == owners[want]);
        if (i % 16 == 0) {
            std::size_t k = 0;
            r->walk(h, [&](keyplace::node_index v) noexcept {
                KEYPLACE_FUZZ_CHECK(v.value == owners[(want + k) % owners.size()]);
                return ++k < 8;
            });
        }
    }

    keyplace::detail::u128 sum{0, 0};
    for (const auto& m : keyplace::region_measure(*r)) {
        sum = keyplace::detail::add(sum, m);
    }
    const keyplace::detail::u128 circle =
        bits == 64 ? keyplace::detail::u128{1, 0} : keyplace::detail::u128{0, std::uint64_t{1} << (bits % 64)};
    KEYPLACE_FUZZ_CHECK(sum == circle);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    switch (in.byte() % 7) {
        case 0: fuzz<std::uint8_t>(in); break;
        case 1: fuzz<std::uint16_t>(in); break;
        case 2: fuzz<std::uint32_t>(in); break;
        case 3: fuzz<std::uint64_t>(in); break;
        case 4: fuzz<std::int64_t>(in); break;
        case 5: fuzz<std::int32_t>(in); break;
        default: fuzz<std::int16_t>(in); break;
    }
    return 0;
}
