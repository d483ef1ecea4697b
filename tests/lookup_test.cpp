// Differential tests of the lookup paths (issue 17): every ring's pick, entry_of and pick_batch
// against std::lower_bound (std::upper_bound under lookup_rule::after) with wrap over the sorted
// points, and against our own sorted copy of the points we gave; pick_batch and locate_batch
// against one lookup at a time on every strategy; detail::fast_mod against %.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/compat/redis.hpp>
#include <keyplace/detail/fast_mod.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/modulo.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/ring.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

using keyplace::lookup_rule;
using keyplace::node_index;
using keyplace::compat::given_points;
using keyplace::compat::ring_point;
using namespace keyplace_test;

namespace {

constexpr std::uint64_t all_ones = std::numeric_limits<std::uint64_t>::max();

// The owner table's bucket bits for T points, as the engine documents them:
// clamp(round(log2 T) + 2, 2, 26), round(log2 T) = floor(log2 T) + (T^2 >= 2^(2 floor + 1)).
// Only the probes depend on it; a wrong b here would weaken the test, not fail it.
auto table_bits(std::size_t t) -> unsigned {
    const auto f = static_cast<unsigned>(std::bit_width(t) - 1);
    const auto sq = static_cast<std::uint64_t>(t) * t;  // t <= 2^28: fits
    const unsigned r = f + (sq >= (std::uint64_t{1} << (2 * f + 1)) ? 1U : 0U);
    return std::clamp(r + 2, 2U, 26U);
}

// A 64-bit hash as a ring of Point reads it: h modulo 2^bits, as Point.
template <class Point>
auto as_point(std::uint64_t h) -> Point {
    return static_cast<Point>(h);
}

// The hash whose Point value is p (for 32-bit points the high half is free; see prober).
template <class Point>
auto as_hash(Point p) -> std::uint64_t {
    return static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<Point>>(p));
}

// The point at unsigned position `key` in Point's order (a signed point has its sign bit flipped).
template <class Point>
auto from_key(std::make_unsigned_t<Point> key) -> Point {
    using key_type = std::make_unsigned_t<Point>;
    if constexpr (std::is_signed_v<Point>) {
        return static_cast<Point>(static_cast<key_type>(key ^ (key_type{1} << (8 * sizeof(Point) - 1))));
    } else {
        return key;
    }
}

// Checks a ring against the reference on every probe it is given, in blocks: entry_of(h) and
// pick(h) one at a time and pick_batch over the block (in chunks of 1, 16, 17, ... so that
// every remainder of a 16-wide engine is crossed). Mismatches are counted, not asserted one by
// one (a Catch assertion per probe would cost more than the lookup); report() asserts.
template <class R>
class prober {
public:
    using point = typename R::point_type;

    explicit prober(const R& r)
        : r_(r), points_(r.points()), owners_(r.owners()), after_(r.rule() == lookup_rule::after) {
        buffer_.reserve(block);
    }

    void operator()(std::uint64_t h) {
        if constexpr (sizeof(point) < sizeof(std::uint64_t)) {
            // Every other probe carries high bits the ring must ignore (h mod 2^32).
            if (count_ % 2 == 1) {
                h ^= (count_ * 0x9e3779b97f4a7c15ULL) << 32;
            }
        }
        ++count_;
        buffer_.push_back(h);
        if (buffer_.size() == block) {
            flush();
        }
    }

    void report(const std::string& what) {
        flush();
        INFO(what << ": " << count_ << " probes, " << points_.size() << " points; first mismatch: " << first_bad_);
        CHECK(bad_ == 0);
    }

    [[nodiscard]] auto probes() const noexcept -> std::uint64_t { return count_; }

private:
    static constexpr std::size_t block = 4096;
    static constexpr std::array<std::size_t, 8> chunks{1, 16, 17, 3, 64, 15, 100, 31};

    // The reference: std::lower_bound (upper_bound under after) over points(), wrapping past the
    // end to 0. Probes often come in order, so the search starts from the previous answer when
    // every point before it precedes this probe too, and looks at the next 64 points first; the
    // answer is the same std::lower_bound's over the whole ring.
    auto expected(std::uint64_t h) -> std::size_t {
        const point p = as_point<point>(h);
        const std::size_t n = points_.size();
        const auto precedes = [&](point x) { return after_ ? !(p < x) : x < p; };
        std::size_t lo = hint_;
        if (lo > 0 && !precedes(points_[lo - 1])) {
            lo = 0;
        }
        const auto search = [&](std::size_t a, std::size_t b) {
            const auto first = points_.begin() + static_cast<std::ptrdiff_t>(a);
            const auto last = points_.begin() + static_cast<std::ptrdiff_t>(b);
            const auto it = after_ ? std::upper_bound(first, last, p) : std::lower_bound(first, last, p);
            return static_cast<std::size_t>(it - points_.begin());
        };
        const std::size_t hi = std::min(lo + 64, n);
        const std::size_t at = hi < n && precedes(points_[hi - 1]) ? search(hi, n) : search(lo, hi);
        hint_ = at;
        return at == n ? 0 : at;
    }

    void flush() {
        batch_.assign(buffer_.size(), node_index{0xdeadbeefU});
        std::size_t at = 0;
        for (std::size_t c = 0; at < buffer_.size(); ++c) {
            const std::size_t m = std::min(chunks[c % chunks.size()], buffer_.size() - at);
            const auto got = keyplace::pick_batch(r_, std::span<const std::uint64_t>(buffer_).subspan(at, m),
                                                  std::span<node_index>(batch_).subspan(at, m));
            if (got != m) {
                note("pick_batch returned " + std::to_string(got) + " for " + std::to_string(m));
            }
            at += m;
        }
        for (std::size_t i = 0; i < buffer_.size(); ++i) {
            const std::uint64_t h = buffer_[i];
            const std::size_t e = expected(h);
            const std::size_t entry = r_.entry_of(h);
            const node_index one = r_.pick(h);
            if (entry != e || one != owners_[e] || batch_[i] != owners_[e]) {
                std::ostringstream s;
                s << "h " << h << " expected entry " << e << " owner " << owners_[e].value << ", entry_of " << entry
                  << " pick " << one.value << " pick_batch " << batch_[i].value;
                note(s.str());
            }
        }
        buffer_.clear();
    }

    void note(const std::string& s) {
        if (bad_++ == 0) {
            first_bad_ = s;
        }
    }

    const R& r_;
    std::span<const point> points_;
    std::span<const node_index> owners_;
    bool after_;
    std::vector<std::uint64_t> buffer_;
    std::vector<node_index> batch_;
    std::size_t hint_ = 0;
    std::uint64_t count_ = 0;
    std::uint64_t bad_ = 0;
    std::string first_bad_ = "none";
};

// How much of a ring to probe besides its points and their neighbours.
struct probe_plan {
    std::size_t random = 2000;  // uniform 64-bit probes
    bool wide = false;          // also p +- 2^j for every bit j (the 16-bit window at every depth)
    std::uint64_t seed = 1;
};

// Every bucket edge k << (bits - b') and the key before it, for b' = b - 1, b, b + 1 (b from the
// point count, in case the engine rounds the other way), in ascending order. Rings above 10^5
// points take the first and last 10^4 edges of each b' and every 7th in between: at 2.56 M
// points that is about 8 M edge probes instead of 59 M (the 59 M cost about 1 s at -O2 but
// most of the 20 s budget under ASan); the skipped edges are the same code path at other k.
template <class Point, class Emit>
void bucket_edges(std::size_t t, Emit&& emit) {
    using key_type = std::make_unsigned_t<Point>;
    constexpr unsigned bits = 8 * sizeof(Point);
    const unsigned b = table_bits(t);
    const bool sampled = t > 100000;
    for (const unsigned bb : {b - 1, b, b + 1}) {
        const std::uint64_t count = std::uint64_t{1} << bb;
        for (std::uint64_t k = 0; k < count; ++k) {
            if (sampled && k >= 10000 && k + 10000 < count && k % 7 != 0) {
                continue;
            }
            const auto edge = static_cast<key_type>(static_cast<key_type>(k) << (bits - bb));
            emit(as_hash(from_key<Point>(static_cast<key_type>(edge - 1U))));
            emit(as_hash(from_key<Point>(edge)));
        }
    }
}

// Probes ring r: fixed extremes, every point and its neighbours (p +- 1, and p +- 2^j with
// plan.wide), every bucket edge, and plan.random uniform probes. Returns the probe count.
template <class R>
auto probe_ring(const R& r, const probe_plan& plan, const std::string& what) -> std::uint64_t {
    using point = typename R::point_type;
    using key_type = std::make_unsigned_t<point>;
    constexpr unsigned bits = 8 * sizeof(point);
    prober<R> check(r);
    for (const std::uint64_t h : {std::uint64_t{0}, std::uint64_t{1}, all_ones, all_ones - 1, std::uint64_t{0xffffffff},
                                  std::uint64_t{0x100000000}, std::uint64_t{1} << 63, (std::uint64_t{1} << 63) - 1,
                                  std::uint64_t{1} << 31, (std::uint64_t{1} << 31) - 1}) {
        check(h);
    }
    for (const point p : r.points()) {
        const auto u = static_cast<key_type>(p);
        check(as_hash(static_cast<key_type>(u - 1U)));
        check(as_hash(p));
        check(as_hash(static_cast<key_type>(u + 1U)));
        if (plan.wide) {
            for (unsigned j = 1; j < bits; ++j) {
                const auto d = static_cast<key_type>(key_type{1} << j);
                check(as_hash(static_cast<key_type>(u - d)));
                check(as_hash(static_cast<key_type>(u + d)));
            }
        }
    }
    bucket_edges<point>(r.points().size(), check);
    std::mt19937_64 gen(plan.seed);
    for (std::size_t i = 0; i < plan.random; ++i) {
        check(gen());
    }
    check.report(what);
    return check.probes();
}

// Our own order of the points we gave: (point, owner), Point compared in its own order.
template <class Point>
auto sorted_copy(std::vector<ring_point<Point>> pts) -> std::vector<ring_point<Point>> {
    std::sort(pts.begin(), pts.end(), [](const ring_point<Point>& a, const ring_point<Point>& b) {
        return a.point != b.point ? a.point < b.point : a.owner < b.owner;
    });
    return pts;
}

// The ring must hold exactly our sorted copy of the given points; then the reference over
// points() is the reference over our copy.
template <class R, class Point>
void require_given_order(const R& r, const std::vector<ring_point<Point>>& given) {
    const auto mine = sorted_copy(given);
    REQUIRE(r.points().size() == mine.size());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
        wrong += r.points()[i] != mine[i].point || r.owners()[i].value != mine[i].owner ? 1U : 0U;
    }
    CHECK(wrong == 0);
}

template <class Point>
using test_ring = keyplace::compat::point_ring<Point, keyplace::xxh3>;

// Builds a point_ring over `nodes` nodes from the given points, checks its order against our
// copy, and probes it.
template <class Point>
auto check_given(std::size_t nodes, const std::vector<ring_point<Point>>& pts, lookup_rule rule,
                 const probe_plan& plan, const std::string& what) -> std::uint64_t {
    const auto r = test_ring<Point>::build(make_nodes(nodes), given_points<Point>(pts, rule));
    INFO(what);
    require_given_order(r, pts);
    return probe_ring(r, plan, what + (rule == lookup_rule::after ? " (after)" : " (at or after)"));
}

// Random points over the whole of Point, or (narrow) from a range of 64 values, so that equal
// points from different owners are common; owners random among `nodes`.
template <class Point>
auto random_given(std::size_t t, std::size_t nodes, bool narrow, std::mt19937_64& gen)
    -> std::vector<ring_point<Point>> {
    std::vector<ring_point<Point>> pts(t);
    for (auto& e : pts) {
        e.point = narrow ? static_cast<Point>(static_cast<Point>(gen() % 64) - 20) : static_cast<Point>(gen());
        e.owner = static_cast<std::uint32_t>(gen() % nodes);
    }
    return pts;
}

template <class Point>
void every_size_and_shape(std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    const std::string type = std::is_signed_v<Point> ? "int64" : sizeof(Point) == 4 ? "uint32" : "uint64";
    for (const lookup_rule rule : {lookup_rule::at_or_after, lookup_rule::after}) {
        // Every size 1..64 and the sizes around powers of two where b changes: random points,
        // and for every other size points crowded into 64 values (duplicates, and for signed
        // points both signs around zero).
        std::vector<std::size_t> sizes;
        for (std::size_t t = 1; t <= 64; ++t) {
            sizes.push_back(t);
        }
        for (const std::size_t t : {90U, 91U, 127U, 128U, 129U, 181U, 182U, 255U, 256U, 257U, 1000U, 1023U, 1024U, 1025U, 5000U}) {
            sizes.push_back(t);
        }
        for (const std::size_t t : sizes) {
            const bool narrow = t % 2 == 0 && t <= 256;
            check_given<Point>(5, random_given<Point>(t, 5, narrow, gen), rule,
                               {.random = 500, .wide = t <= 64, .seed = gen()},
                               type + " ring of " + std::to_string(t) + (narrow ? " crowded points" : " points"));
        }

        using key_type = std::make_unsigned_t<Point>;
        constexpr unsigned bits = 8 * sizeof(Point);
        // 500 points in one bucket of b = table_bits(2000) (= 13 for 2000 points), the other
        // 1500 spread: in the first bucket, a middle one and the last (whose keys above wrap).
        const unsigned b = table_bits(2000);
        for (const std::uint64_t bucket : {std::uint64_t{0}, std::uint64_t{1234}, (std::uint64_t{1} << b) - 1}) {
            auto pts = random_given<Point>(1500, 7, false, gen);
            const auto base = static_cast<key_type>(static_cast<key_type>(bucket) << (bits - b));
            const auto span = static_cast<key_type>(key_type{1} << (bits - b));
            for (std::uint32_t i = 0; i < 500; ++i) {
                const auto at = static_cast<key_type>(base + static_cast<key_type>(gen() % span));
                pts.push_back({from_key<Point>(at), static_cast<std::uint32_t>(gen() % 7)});
            }
            check_given<Point>(7, pts, rule, {.random = 2000, .seed = gen()},
                               type + " 500 points in bucket " + std::to_string(bucket));
        }

        // Points that share their top 48 bits (for 32-bit points: their top 16), differing only
        // in the low 16: alone, and among random points; and one point whose next 16 bits equal a
        // key's (p +- 1 and the wide neighbours cover keys that agree with it below the bucket).
        constexpr unsigned low = 16;
        for (const bool alone : {true, false}) {
            auto pts = alone ? std::vector<ring_point<Point>>{} : random_given<Point>(1000, 3, false, gen);
            const auto top = static_cast<key_type>(static_cast<key_type>(gen()) & ~static_cast<key_type>(0xffffU));
            for (std::uint32_t i = 0; i < 1000; ++i) {
                pts.push_back({from_key<Point>(static_cast<key_type>(top | static_cast<key_type>(gen() % (1U << low)))),
                               static_cast<std::uint32_t>(gen() % 3)});
            }
            check_given<Point>(3, pts, rule, {.random = 2000, .wide = true, .seed = gen()},
                               type + " 1000 points sharing all but the low 16 bits" + (alone ? "" : ", among 1000"));
        }

        // Duplicates: 300 values each held by 1..5 owners, given in shuffled order (the ring
        // must sort equal points by owner), including the extremes of Point.
        {
            std::vector<ring_point<Point>> pts;
            std::vector<Point> values{std::numeric_limits<Point>::min(), std::numeric_limits<Point>::max(), Point{0},
                                      static_cast<Point>(1), static_cast<Point>(-1)};
            while (values.size() < 300) {
                values.push_back(static_cast<Point>(gen()));
            }
            for (const Point v : values) {
                std::vector<std::uint32_t> owners{0, 1, 2, 3, 4, 5};
                std::shuffle(owners.begin(), owners.end(), gen);
                owners.resize(1 + gen() % 5);
                for (const std::uint32_t o : owners) {
                    pts.push_back({v, o});
                }
            }
            std::shuffle(pts.begin(), pts.end(), gen);
            check_given<Point>(6, pts, rule, {.random = 2000, .wide = true, .seed = gen()},
                               type + " duplicates from different owners");
        }

        // Extremes only, and clusters at the bottom and at the top of the key space (every
        // other bucket empty, the top one or the bottom one full).
        check_given<Point>(4,
                           {{std::numeric_limits<Point>::min(), 0},
                            {static_cast<Point>(std::numeric_limits<Point>::min() + 1), 1},
                            {static_cast<Point>(std::numeric_limits<Point>::max() - 1), 2},
                            {std::numeric_limits<Point>::max(), 3}},
                           rule, {.wide = true}, type + " extremes");
        for (const bool at_top : {false, true}) {
            std::vector<ring_point<Point>> pts;
            for (std::uint32_t i = 0; i < 200; ++i) {
                const auto k = static_cast<key_type>(gen() % 100000);
                pts.push_back({from_key<Point>(at_top ? static_cast<key_type>(~k) : k), i % 4});
            }
            check_given<Point>(4, pts, rule, {.wide = true, .seed = gen()},
                               type + (at_top ? " clustered at the top" : " clustered at the bottom"));
        }
    }
}

}  // namespace

TEST_CASE("lookup: point rings of every size and shape equal lower_bound with wrap", "[lookup]") {
    every_size_and_shape<std::uint64_t>(11);
    every_size_and_shape<std::uint32_t>(12);
    every_size_and_shape<std::int64_t>(13);
}

TEST_CASE("lookup: point rings of 10^5 points, and rings over more than 32768 nodes", "[lookup]") {
    std::mt19937_64 gen(21);
    check_given<std::uint64_t>(50, random_given<std::uint64_t>(100000, 50, false, gen), lookup_rule::at_or_after,
                               {.random = 100000, .seed = 1}, "uint64 ring of 10^5 points");
    check_given<std::int64_t>(50, random_given<std::int64_t>(100000, 50, false, gen), lookup_rule::after,
                              {.random = 100000, .seed = 2}, "int64 ring of 10^5 points");
    check_given<std::uint32_t>(50, random_given<std::uint32_t>(100000, 50, false, gen), lookup_rule::at_or_after,
                               {.random = 100000, .seed = 3}, "uint32 ring of 10^5 points");
    // 32768 nodes is the last count with 32-bit table entries; one point each, owners shuffled,
    // so that the highest node indices own points all over the ring.
    for (const std::size_t nodes : {std::size_t{32768}, std::size_t{32769}, std::size_t{40000}}) {
        std::vector<ring_point<std::uint64_t>> pts(nodes);
        std::vector<ring_point<std::uint32_t>> pts32(nodes);
        for (std::size_t i = 0; i < nodes; ++i) {
            pts[i] = {gen(), static_cast<std::uint32_t>(i)};
            pts32[i] = {static_cast<std::uint32_t>(gen()), static_cast<std::uint32_t>(i)};
        }
        check_given<std::uint64_t>(nodes, pts, lookup_rule::at_or_after, {.random = 20000, .seed = 4},
                                   "uint64 ring over " + std::to_string(nodes) + " nodes");
        check_given<std::uint32_t>(nodes, pts32, lookup_rule::after, {.random = 20000, .seed = 5},
                                   "uint32 ring over " + std::to_string(nodes) + " nodes");
    }
}

namespace {

// The point at offset `within` of bucket k of 2^b buckets over Point's order.
template <class Point>
auto in_bucket(unsigned b, std::uint64_t k, std::uint64_t within) -> Point {
    using key_type = std::make_unsigned_t<Point>;
    constexpr unsigned bits = 8 * sizeof(Point);
    return from_key<Point>(static_cast<key_type>((static_cast<key_type>(k) << (bits - b)) | static_cast<key_type>(within)));
}

// Distinct random buckets of 2^b.
auto some_buckets(unsigned b, std::size_t n, std::mt19937_64& gen) -> std::vector<std::uint64_t> {
    std::set<std::uint64_t> chosen;
    while (chosen.size() < n) {
        chosen.insert(gen() >> (64 - b));
    }
    return {chosen.begin(), chosen.end()};
}

// Rings whose points sit where an owner table's entries change meaning: buckets holding exactly
// 1..12 points (a small record, a full one, one too many), some of them sharing the 16 bits
// below the bucket prefix; and single points at the first and last value of their bucket, one
// past and before them, and with the 16 bits below the prefix all ones or all zeros. Owners
// among `nodes` (1024 / 1025 and 32768 / 32769 straddle the entry widths), the last included.
template <class Point>
void bucket_shapes(std::size_t nodes, lookup_rule rule, std::mt19937_64& gen, const std::string& what) {
    constexpr unsigned bits = 8 * sizeof(Point);
    const auto owner = [&](std::size_t i) {
        return static_cast<std::uint32_t>(i % 5 == 0 ? nodes - 1 : gen() % nodes);
    };
    const std::uint64_t below_mask = all_ones >> (64 - (bits - 16));  // the bits under the top 16
    {
        // 20 buckets of each count 1..12: 1560 points, b = 13.
        const unsigned b = table_bits(1560);
        const auto buckets = some_buckets(b, 240, gen);
        const unsigned s = bits - b;
        std::vector<ring_point<Point>> pts;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            const std::size_t count = 1 + i % 12;
            const bool shared = i % 24 >= 12;  // every count once with a shared top 16 bits
            const std::uint64_t top = (gen() & 0xffffU) << (s - 16);
            for (std::size_t j = 0; j < count; ++j) {
                const std::uint64_t within = shared ? top | (gen() & (below_mask >> b)) : gen() >> (64 - s);
                pts.push_back({in_bucket<Point>(b, buckets[i], within), owner(pts.size())});
            }
        }
        REQUIRE(pts.size() == 1560);
        check_given<Point>(nodes, pts, rule, {.random = 5000, .wide = true, .seed = gen()}, what + ", 1..12 points a bucket");
    }
    {
        const unsigned b = table_bits(1200);
        const unsigned s = bits - b;
        const std::uint64_t last = all_ones >> (64 - s);
        std::vector<ring_point<Point>> pts;
        for (const std::uint64_t k : some_buckets(b, 1200, gen)) {
            const std::uint64_t low = gen() & (last >> 16);
            const std::array<std::uint64_t, 6> at{0, last, 1, last - 1, (std::uint64_t{0xffff} << (s - 16)) | low, low};
            pts.push_back({in_bucket<Point>(b, k, at[pts.size() % at.size()]), owner(pts.size())});
        }
        check_given<Point>(nodes, pts, rule, {.random = 5000, .wide = true, .seed = gen()}, what + ", points at bucket edges");
    }
}

}  // namespace

TEST_CASE("lookup: points where owner table entries change meaning", "[lookup]") {
    std::mt19937_64 gen(61);
    for (const std::size_t nodes : {std::size_t{8}, std::size_t{1024}, std::size_t{1025}, std::size_t{32769}}) {
        const std::string n = " over " + std::to_string(nodes) + " nodes";
        bucket_shapes<std::uint64_t>(nodes, lookup_rule::at_or_after, gen, "uint64" + n);
        bucket_shapes<std::int64_t>(nodes, lookup_rule::after, gen, "int64" + n);
        bucket_shapes<std::uint32_t>(nodes, nodes % 2 == 0 ? lookup_rule::at_or_after : lookup_rule::after, gen,
                                     "uint32" + n);
    }
    // 32768 and 32769 values each held by two of 16 nodes, about 2^49 apart, so that every value
    // is in a bucket of its own (65536 or 65538 points: b = 18, bucket width 2^46) and every
    // occupied bucket holds two points: they straddle 2^15 multi-point buckets, the most that
    // 16-bit entries index (above it the engine uses wider entries).
    for (const std::uint64_t pairs : {std::uint64_t{32768}, std::uint64_t{32769}}) {
        std::vector<ring_point<std::uint64_t>> pts;
        const std::uint64_t step = all_ones / pairs;
        for (std::uint64_t i = 0; i < pairs; ++i) {
            const auto o = static_cast<std::uint32_t>(i % 16);
            pts.push_back({i * step + (gen() >> 20), o});
            pts.push_back({pts.back().point, (o + 1 + static_cast<std::uint32_t>(gen() % 15)) % 16});
        }
        check_given<std::uint64_t>(16, pts, lookup_rule::at_or_after, {.random = 20000, .seed = gen()},
                                   std::to_string(pairs) + " buckets of two equal points");
    }
}

TEST_CASE("lookup: native rings from 1 to 2.56 M points equal lower_bound with wrap", "[lookup]") {
    // 1..5 nodes with few vnodes, 100 x 160, 1000 x 160 and 10^4 x 256 (2.56 M points: its 10^6
    // random probes bring the ring tests' random probes above 10^6).
    std::uint64_t probes = 0;
    for (std::size_t n = 1; n <= 5; ++n) {
        for (const std::uint32_t v : {1U, 2U, 3U, 7U}) {
            const auto r = keyplace::ring::build(make_nodes(n), {.vnodes = v});
            probes += probe_ring(r, {.random = 500, .wide = true, .seed = n * 10 + v},
                                 "ring " + std::to_string(n) + " x " + std::to_string(v));
        }
    }
    probes += probe_ring(keyplace::ring::build(make_nodes(100), {.vnodes = 160}), {.random = 20000, .seed = 6},
                         "ring 100 x 160");
    probes += probe_ring(keyplace::ring::build(make_nodes(1000), {.vnodes = 160}), {.random = 50000, .seed = 7},
                         "ring 1000 x 160");
    const auto big = keyplace::ring::build(make_nodes(10000), {.vnodes = 256});
    REQUIRE(big.points().size() == 2560000);
    probes += probe_ring(big, {.random = 1000000, .seed = 8}, "ring 10^4 x 256");
    CHECK(probes > 10000000);
}

TEST_CASE("lookup: compat rings equal lower_bound with wrap", "[lookup]") {
    using namespace keyplace::compat;
    std::vector<ketama_server> servers;
    std::vector<ketama_server> many;
    for (int i = 0; i < 10; ++i) {
        servers.push_back({"10.0.1." + std::to_string(i + 1) + ":11211", static_cast<std::uint64_t>(1 + i % 3)});
    }
    for (int i = 0; i < 1000; ++i) {
        many.push_back({"cache-" + std::to_string(i) + ":11211", 1});
    }
    const auto weighted = build_ketama<md5_ketama>(ketama_dialect::libmemcached_weighted, servers);
    probe_ring(weighted, {.random = 20000, .wide = true, .seed = 1}, "ketama libmemcached weighted");
    // 1000 servers: 160000 32-bit points, a few of them equal points of different servers.
    probe_ring(build_ketama<md5_ketama>(ketama_dialect::libmemcached_weighted, many), {.random = 20000, .seed = 2},
               "ketama libmemcached weighted, 1000 servers");
    probe_ring(build_ketama<md5_ketama>(ketama_dialect::libketama, servers), {.random = 20000, .seed = 3},
               "ketama libketama");
    const auto python = build_ketama<md5_ketama>(ketama_dialect::python_hash_ring, servers);
    REQUIRE(python.rule() == lookup_rule::after);
    probe_ring(python, {.random = 20000, .wide = true, .seed = 4}, "ketama python hash_ring");

    probe_ring(envoy_ring_hash::build(make_nodes(10)), {.random = 20000, .wide = true, .seed = 5},
               "envoy ring hash, 10 hosts");
    envoy_ring_hash_config big_ring;
    big_ring.min_ring_size = 100000;
    probe_ring(envoy_ring_hash::build(make_nodes(100), big_ring), {.random = 20000, .seed = 6},
               "envoy ring hash, 100 hosts, 10^5 entries");

    // Cassandra: random distinct tokens of both signs plus the extremes; against our own copy.
    std::mt19937_64 gen(31);
    std::vector<cassandra_endpoint> endpoints;
    std::vector<ring_point<std::int64_t>> given;
    std::set<std::int64_t> taken;
    const std::vector<std::int64_t> extremes{std::numeric_limits<std::int64_t>::min(), -1, 0, 1,
                                             std::numeric_limits<std::int64_t>::max()};
    for (std::uint32_t i = 0; i < 50; ++i) {
        cassandra_endpoint e{"cass-" + std::to_string(i), {}};
        if (i < extremes.size()) {
            e.tokens.push_back(extremes[i]);
            taken.insert(extremes[i]);
        }
        while (e.tokens.size() < 16) {
            const auto t = static_cast<std::int64_t>(gen());
            if (taken.insert(t).second) {
                e.tokens.push_back(t);
            }
        }
        for (const auto t : e.tokens) {
            given.push_back({t, i});
        }
        endpoints.push_back(e);
    }
    const auto cassandra = cassandra_ring::build(endpoints);
    require_given_order(cassandra, given);
    probe_ring(cassandra, {.random = 20000, .wide = true, .seed = 7}, "cassandra ring");
}

namespace {

// pick_batch and locate_batch against one lookup at a time: sizes 0, 1, around 16 and 32, not
// a multiple of 16, and outputs as long as the input, longer (the rest untouched) and shorter
// (only out.size() written).
template <class S>
void check_batches(const S& s, const std::string& what) {
    INFO(what);
    std::mt19937_64 gen(99);
    std::vector<std::uint64_t> points{0, 1, all_ones, all_ones - 1, std::uint64_t{1} << 63, 0xffffffff, 0x100000000};
    std::vector<std::string> keys;
    std::vector<std::uint64_t> int_keys;
    while (points.size() < 2003) {
        points.push_back(gen());
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
        keys.push_back("key-" + std::to_string(i));
        int_keys.push_back(points[i]);
    }
    std::vector<node_index> picked(points.size());
    std::vector<const keyplace::node*> by_key(points.size());
    std::vector<const keyplace::node*> by_int(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        picked[i] = s.pick(points[i]);
        by_key[i] = &keyplace::locate(s, keys[i]);
        by_int[i] = &keyplace::locate(s, int_keys[i]);
    }
    const node_index untouched{0xfeedfaceU};
    for (const std::size_t n : {0U, 1U, 2U, 15U, 16U, 17U, 31U, 32U, 33U, 100U, 1000U, 2003U}) {
        for (const std::size_t m : {n, n + 5, n / 2, n == 0 ? 0 : n - 1}) {
            INFO(n << " inputs, room for " << m);
            const std::size_t want = std::min(n, m);
            std::vector<node_index> out(m, untouched);
            CHECK(keyplace::pick_batch(s, std::span<const std::uint64_t>(points).first(n), std::span<node_index>(out)) ==
                  want);
            CHECK(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(want), picked.begin()));
            CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(want), out.end(),
                              [&](node_index i) { return i == untouched; }));

            std::vector<const keyplace::node*> located(m, nullptr);
            CHECK(keyplace::locate_batch(s, std::span<const std::string>(keys).first(n),
                                         std::span<const keyplace::node*>(located)) == want);
            CHECK(std::equal(located.begin(), located.begin() + static_cast<std::ptrdiff_t>(want), by_key.begin()));
            CHECK(std::all_of(located.begin() + static_cast<std::ptrdiff_t>(want), located.end(),
                              [](const keyplace::node* p) { return p == nullptr; }));

            std::fill(located.begin(), located.end(), nullptr);
            CHECK(keyplace::locate_batch(s, std::span<const std::uint64_t>(int_keys).first(n),
                                         std::span<const keyplace::node*>(located)) == want);
            CHECK(std::equal(located.begin(), located.begin() + static_cast<std::ptrdiff_t>(want), by_int.begin()));
        }
    }
}

// For a ring, the batches also equal the reference (the key's hash through lower_bound with
// wrap over points()), not only pick.
template <class R>
void check_ring_batches(const R& r, const std::string& what) {
    check_batches(r, what);
    using point = typename R::point_type;
    std::vector<std::string> keys;
    for (int i = 0; i < 1000; ++i) {
        keys.push_back("user:" + std::to_string(i));
    }
    std::vector<const keyplace::node*> out(keys.size());
    REQUIRE(keyplace::locate_batch(r, std::span<const std::string>(keys), std::span<const keyplace::node*>(out)) ==
            keys.size());
    const auto pts = r.points();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const auto p = as_point<point>(keyplace::hash_key(typename R::key_hash{}, keys[i]));
        const auto it = r.rule() == lookup_rule::after ? std::upper_bound(pts.begin(), pts.end(), p)
                                                        : std::lower_bound(pts.begin(), pts.end(), p);
        const auto e = it == pts.end() ? 0 : static_cast<std::size_t>(it - pts.begin());
        wrong += out[i] != &r.node(r.owners()[e]) ? 1U : 0U;
    }
    INFO(what);
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("lookup: pick_batch and locate_batch equal one lookup at a time on every strategy", "[lookup]") {
    using namespace keyplace::compat;
    const auto nodes = make_nodes(10);
    std::mt19937_64 gen(41);
    check_ring_batches(keyplace::ring::build(nodes), "ring 10 x 160");
    check_ring_batches(keyplace::ring::build(make_nodes(1000), {.vnodes = 160}), "ring 1000 x 160");
    check_ring_batches(test_ring<std::uint64_t>::build(nodes, random_given<std::uint64_t>(3000, 10, false, gen)),
                       "point_ring uint64");
    check_ring_batches(test_ring<std::uint32_t>::build(
                           nodes, given_points<std::uint32_t>(random_given<std::uint32_t>(3000, 10, false, gen),
                                                              lookup_rule::after)),
                       "point_ring uint32, after");
    check_ring_batches(test_ring<std::int64_t>::build(nodes, random_given<std::int64_t>(3000, 10, false, gen)),
                       "point_ring int64");
    std::vector<ring_point<std::uint64_t>> wide(40000);
    for (std::uint32_t i = 0; i < wide.size(); ++i) {
        wide[i] = {gen(), i};
    }
    check_ring_batches(test_ring<std::uint64_t>::build(make_nodes(40000), wide), "point_ring over 40000 nodes");
    std::vector<ketama_server> servers;
    for (int i = 0; i < 10; ++i) {
        servers.push_back({"10.0.1." + std::to_string(i + 1) + ":11211", 1});
    }
    check_ring_batches(build_ketama<md5_ketama>(ketama_dialect::libmemcached_weighted, servers), "ketama");
    check_ring_batches(build_ketama<md5_ketama>(ketama_dialect::python_hash_ring, servers), "ketama python hash_ring");
    check_ring_batches(envoy_ring_hash::build(nodes), "envoy ring hash");
    check_ring_batches(cassandra_ring::build({{"a", {-5, 100}}, {"b", {0}}, {"c", {std::numeric_limits<std::int64_t>::min()}}}),
                       "cassandra ring");
    check_batches(keyplace::maglev::build(nodes), "maglev 65537");
    check_batches(keyplace::maglev::build(nodes, {.table_size = 13}), "maglev 13");
    check_batches(keyplace::maglev::build(make_nodes(1)), "maglev, one node");
    check_batches(envoy_maglev::build(nodes), "envoy maglev");
    check_batches(redis_cluster::build_even(nodes), "redis cluster");
    check_batches(keyplace::rendezvous::build(nodes), "rendezvous");
    check_batches(keyplace::jump::build(nodes), "jump");
    check_batches(keyplace::modulo::build(nodes), "modulo");
}

TEST_CASE("lookup: slot tables take point mod M", "[lookup]") {
    // Against the hardware remainder: pick(x) == pick(x % M) for 10^5 random x per table and for
    // the values around multiples of M up to 2^64 - 1 (where a wrong reduction shows first).
    const auto same_slot = [](const auto& s, std::uint64_t m, const std::string& what) {
        std::mt19937_64 gen(m);
        std::vector<std::uint64_t> xs{0, 1, m - 1, m, m + 1, all_ones, all_ones - 1, std::uint64_t{1} << 63};
        const std::uint64_t q_max = all_ones / m;
        for (std::uint64_t q : {q_max, q_max - 1, q_max / 2, std::uint64_t{1} << 20}) {
            xs.push_back(q * m);
            xs.push_back(q * m - 1);
            xs.push_back(q * m + 1);
        }
        for (int i = 0; i < 100000; ++i) {
            xs.push_back(gen());
        }
        std::size_t wrong = 0;
        for (const std::uint64_t x : xs) {
            wrong += s.pick(x) != s.pick(x % m) ? 1U : 0U;
        }
        INFO(what);
        CHECK(wrong == 0);
    };
    const auto nodes = make_nodes(10);
    for (const std::uint64_t m : {13ULL, 251ULL, 10007ULL, 65537ULL, 655373ULL}) {
        same_slot(keyplace::maglev::build(nodes, {.table_size = m}), m, "maglev M = " + std::to_string(m));
    }
    same_slot(keyplace::compat::envoy_maglev::build(nodes), 65537, "envoy maglev");
    same_slot(keyplace::compat::redis_cluster::build_even(nodes), 16384, "redis cluster");
}

namespace {

// Trial division, so that the primes below are checked, not trusted.
auto test_is_prime(std::uint64_t n) -> bool {
    if (n < 2) {
        return false;
    }
    for (std::uint64_t d = 2; d <= n / d; ++d) {
        if (n % d == 0) {
            return false;
        }
    }
    return true;
}

// fast_mod(d) against % on the structured values of one divisor and `random` random values of
// every magnitude (a uniform 64-bit draw shifted right by 0..63); returns the mismatches.
auto fast_mod_mismatches(std::uint64_t d, std::size_t random, std::mt19937_64& gen, std::string& first) -> std::size_t {
    const keyplace::detail::fast_mod mod(d);
    std::size_t wrong = 0;
    const auto check = [&](std::uint64_t x) {
        const std::uint64_t got = mod(x);
        if (got != x % d) {
            if (wrong++ == 0 && first == "none") {
                first = "d " + std::to_string(d) + " x " + std::to_string(x) + ": " + std::to_string(got);
            }
        }
    };
    for (const std::uint64_t x : {std::uint64_t{0}, std::uint64_t{1}, d - 1, d, d + 1, all_ones, all_ones - 1,
                                  std::uint64_t{1} << 63, (std::uint64_t{1} << 63) - 1, (std::uint64_t{1} << 63) + 1,
                                  std::uint64_t{0xffffffff}, std::uint64_t{0x100000000}}) {
        check(x);
    }
    // Multiples q * d - 1, q * d, q * d + 1 for q = 1..1000, every power of two, the last 1000
    // below 2^64 and 10^4 random q.
    const std::uint64_t q_max = all_ones / d;
    std::vector<std::uint64_t> qs;
    for (std::uint64_t q = 1; q <= std::min<std::uint64_t>(1000, q_max); ++q) {
        qs.push_back(q);
        qs.push_back(q_max - q + 1);
    }
    for (std::uint64_t q = 1; q != 0 && q <= q_max; q <<= 1) {
        qs.push_back(q);
    }
    for (int i = 0; i < 10000; ++i) {
        qs.push_back(gen() % q_max + 1);
    }
    for (const std::uint64_t q : qs) {
        check(q * d - 1);
        check(q * d);
        if (q * d != all_ones) {
            check(q * d + 1);
        }
    }
    for (std::size_t i = 0; i < random; ++i) {
        const std::uint64_t x = gen();
        check(i % 2 == 0 ? x : x >> (gen() % 64));
    }
    return wrong;
}

}  // namespace

TEST_CASE("lookup: fast_mod equals % for every table size class", "[lookup]") {
    // Classes: tiny divisors, Redis's 16384, the default Maglev's 65537, 655373, primes either
    // side of 2^20, 2^24 and 2^31, Envoy's largest table 5000011, the largest 32-bit prime and
    // 2^32 - 1. Each class gets 10^6 random values in total, split among its divisors.
    const std::vector<std::vector<std::uint64_t>> classes{
        {1, 2, 3, 4, 5, 7, 11, 13, 251, 257, 10007},
        {16384},
        {65537},
        {655373},
        {1048573, 1048576, 1048583},
        {5000011},
        {16777213, 16777259},
        {2147483647, 2147483648, 2147483659},
        {4294967291},
        {4294967295},
    };
    for (const std::uint64_t p : {3ULL, 5ULL, 7ULL, 11ULL, 13ULL, 251ULL, 257ULL, 10007ULL, 65537ULL, 655373ULL,
                                  1048573ULL, 1048583ULL, 5000011ULL, 16777213ULL, 16777259ULL, 2147483647ULL,
                                  2147483659ULL, 4294967291ULL}) {
        CHECK(test_is_prime(p));
    }
    std::mt19937_64 gen(51);
    for (const auto& divisors : classes) {
        std::size_t wrong = 0;
        std::string first = "none";
        for (const std::uint64_t d : divisors) {
            wrong += fast_mod_mismatches(d, 1000000 / divisors.size() + 1, gen, first);
        }
        INFO("class of " << divisors.front() << ": first mismatch " << first);
        CHECK(wrong == 0);
    }
}
