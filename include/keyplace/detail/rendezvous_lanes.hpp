// keyplace — which node owns a key. The rendezvous pick made fast without changing an owner:
// the hash split into its key and node halves, a lower bound of every node's score from its hash
// alone that skips the exact score for nearly every node, and the same over eight nodes an
// instruction where the CPU has AVX-512. Not API.
#ifndef KEYPLACE_DETAIL_RENDEZVOUS_LANES_HPP_INCLUDED
#define KEYPLACE_DETAIL_RENDEZVOUS_LANES_HPP_INCLUDED

#include <keyplace/detail/log2.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/version.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

// The AVX-512 path needs GCC's vector extensions, AVX-512 builtins named alike by g++ and clang,
// and a runtime check of the CPU. Define KEYPLACE_NO_SIMD to compile the portable path only.
#if !defined(KEYPLACE_NO_SIMD) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    defined(__has_builtin)
// g++'s __has_builtin does not see machine builtins: g++ 12 has them all, and the generic ones.
#if defined(__clang__)
#if __has_builtin(__builtin_shufflevector) && __has_builtin(__builtin_convertvector) && \
    __has_builtin(__builtin_ia32_cvtq2mask512) && __has_builtin(__builtin_ia32_pmuludq512) && \
    __has_builtin(__builtin_cpu_supports)
#define KEYPLACE_DETAIL_HRW_AVX512 1
#endif
#elif __GNUC__ >= 12
#define KEYPLACE_DETAIL_HRW_AVX512 1
#endif
#endif
#ifndef KEYPLACE_DETAIL_HRW_AVX512
#define KEYPLACE_DETAIL_HRW_AVX512 0
#endif

KEYPLACE_NAMESPACE_BEGIN
namespace detail {

// A node's hash is XXH3-64 (xxHash 0.8.0 on, seed 0, its default secret) of the 16 bytes
// le64(point) ++ le64(seed): XXH3's 9-to-16-byte path, whose inputs are the two words. The key's
// word enters with one constant and the node's with another, so the key's half is computed once a
// key. The constants are the XOR of the default secret's words at bytes 24 and 32, and at 40 and 48;
// keyplace_tests compares hrw_hash with XXH3_64bits.
inline constexpr std::uint64_t hrw_key_flip = 0x6782737bea4239b9U;
inline constexpr std::uint64_t hrw_node_flip = 0xaf56bc3b0996523aU;
inline constexpr std::uint64_t hrw_avalanche_prime = 0x165667919e3779f9U;

[[nodiscard]] constexpr auto hrw_byteswap(std::uint64_t v) noexcept -> std::uint64_t {
    std::uint64_t r = 0;
    for (int b = 0; b < 8; ++b) {
        r = (r << 8) | ((v >> (8 * b)) & 0xffU);
    }
    return r;
}

/// The key's half of the hash: its word with the key constant, and the length plus that word's
/// byte-swapped value.
struct hrw_key {
    std::uint64_t lo;
    std::uint64_t base;
};
[[nodiscard]] constexpr auto hrw_split(std::uint64_t point) noexcept -> hrw_key {
    const std::uint64_t lo = point ^ hrw_key_flip;
    return {lo, 16 + hrw_byteswap(lo)};
}
/// The hash of a key (its half) and a node (its seed, which enters with the node constant).
[[nodiscard]] constexpr auto hrw_hash(const hrw_key& k, std::uint64_t seed) noexcept -> std::uint64_t {
    const std::uint64_t word = seed ^ hrw_node_flip;
    const u128 p = mul_wide(k.lo, word);
    std::uint64_t acc = k.base + word + (p.lo ^ p.hi);
    acc ^= acc >> 37;
    acc *= hrw_avalanche_prime;
    return acc ^ (acc >> 32);
}

/// The draw E of a hash: -log2(u) in 2^-48 units, u = 1 - h / 2^64 (placement contract v1).
[[nodiscard]] inline auto hrw_draw(const log2_table_type& table, std::uint64_t h) noexcept -> std::uint64_t {
    if (h == 0) {
        return 0;  // u = 1
    }
    return (std::uint64_t{64} << 48) - log2fix(table, 0 - h);
}

// The lower bound. With x = h / 2^64, -log2(1 - x) >= x / ln 2, and the draw, a fixed-point
// -log2(1 - x) * 2^48, is never more than 2^23 below its real value (keyplace_tests checks it over
// every power of two, its neighbours and 10^6 random hashes; the table and its interpolation err
// low). So draw >= (h >> 1) * 2^-15 / ln 2 - 2^30 for every hash, with 2^7 to spare, and
//     bound(h) = (h >> 1) * scale + offset,   scale = 2^-15 / (ln 2 * w),   offset = -2^30 / w
// never exceeds draw / w. A node whose bound is above the best exact draw / w so far cannot win.
// Rounding moves bound by a relative 2^-52 and the threshold (the best draw / w, times 1 + 2^-40)
// by less: both stay on their side. All values are finite, also under -ffast-math.
inline constexpr double hrw_ln2 = 0.693147180559945309417;
[[nodiscard]] inline auto hrw_scale(std::uint64_t weight) noexcept -> double {
    return 0x1p-15 / (hrw_ln2 * static_cast<double>(weight));
}
[[nodiscard]] inline auto hrw_offset(std::uint64_t weight) noexcept -> double {
    return -0x1p30 / static_cast<double>(weight);
}
[[nodiscard]] inline auto hrw_bound(std::uint64_t h, double scale, double offset) noexcept -> double {
    return static_cast<double>(static_cast<std::int64_t>(h >> 1)) * scale + offset;
}
/// Padding lanes (to a multiple of 8 nodes) get scale 0 and this offset: above any threshold,
/// hrw_no_threshold included (real bounds are below 2^70).
inline constexpr double hrw_padding = 0x1p1020;
inline constexpr double hrw_no_threshold = 0x1p1010;
/// The threshold an exact score sets: draw / weight, rounded, times 1 + 2^-40.
[[nodiscard]] inline auto hrw_threshold(std::uint64_t draw, std::uint64_t weight) noexcept -> double {
    return static_cast<double>(draw) / static_cast<double>(weight) * (1 + 0x1p-40);
}

/// Whether node i (draw e, quantized weight w) comes before node j (draw f, weight v) in
/// preference order: smaller draw / weight, compared exactly, ties to the lower index.
[[nodiscard]] constexpr auto hrw_precedes(std::uint64_t e, std::uint64_t w, std::size_t i, std::uint64_t f,
                                          std::uint64_t v, std::size_t j) noexcept -> bool {
    return product_less(e, v, f, w) || (i < j && !product_less(f, w, e, v));
}

/// The best node so far in preference order, whatever order nodes are offered in.
struct hrw_best {
    std::uint64_t draw = std::numeric_limits<std::uint64_t>::max();  // after every real draw / weight
    std::uint64_t weight = 1;
    std::size_t index = std::numeric_limits<std::size_t>::max();
    double threshold = hrw_no_threshold;  // nodes whose bound is above it cannot win

    void offer(std::size_t i, std::uint64_t e, std::uint64_t w) noexcept {
        if (hrw_precedes(e, w, i, draw, weight, index)) {
            draw = e;
            weight = w;
            index = i;
            threshold = hrw_threshold(e, w);
        }
    }
};

/// The per-node arrays a pick reads: seeds and bound coefficients padded to a multiple of 8
/// nodes, and the quantized weights.
struct hrw_nodes {
    const std::uint64_t* seeds;
    const double* scales;
    const double* offsets;
    const std::uint64_t* weights;
    std::size_t size;    // nodes
    std::size_t padded;  // size rounded up to a multiple of 8
};

/// Offers offer(i, hash) every node in index order or, Bounded, every node whose bound is at
/// most `threshold`, which offer may lower as it goes: the portable scan under pick and pick_n.
template <bool Bounded, class Offer>
inline void hrw_scan_portable(const hrw_nodes& n, std::uint64_t point, const double& threshold, Offer& offer) noexcept {
    const hrw_key key = hrw_split(point);
    double limit = threshold;  // a register; read again only after an offer
    for (std::size_t i = 0; i < n.size; ++i) {
        const std::uint64_t h = hrw_hash(key, n.seeds[i]);
        if constexpr (Bounded) {
            if (hrw_bound(h, n.scales[i], n.offsets[i]) <= limit) [[unlikely]] {
                offer(i, h);
                limit = threshold;
            }
        } else {
            offer(i, h);
        }
    }
}

#if KEYPLACE_DETAIL_HRW_AVX512

#define KEYPLACE_DETAIL_HRW_TARGET __attribute__((target("avx512f,avx512dq")))
#define KEYPLACE_DETAIL_HRW_INLINE __attribute__((target("avx512f,avx512dq"), always_inline)) inline

/// Whether this CPU (and its OS) runs AVX-512F and DQ.
[[nodiscard]] inline auto hrw_avx512_available() noexcept -> bool {
    // cpu_init first: a call before the runtime's own initializer (an ifunc resolver, an early
    // constructor) would otherwise read an empty CPU model.
    static const bool available = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    }();
    return available;
}

namespace hrw_lanes {

using u64x8 = std::uint64_t __attribute__((vector_size(64)));
using i64x8 = long long __attribute__((vector_size(64)));
using i32x16 = int __attribute__((vector_size(64)));
using f64x8 = double __attribute__((vector_size(64)));

// Low 32 bits of each lane times low 32 bits of each lane, 64-bit products (vpmuludq).
KEYPLACE_DETAIL_HRW_INLINE auto mul32(u64x8 a, u64x8 b) noexcept -> u64x8 {
#if defined(__clang__)
    return __builtin_bit_cast(u64x8, __builtin_ia32_pmuludq512(__builtin_bit_cast(i32x16, a), __builtin_bit_cast(i32x16, b)));
#else
    return __builtin_bit_cast(u64x8, __builtin_ia32_pmuludq512_mask(__builtin_bit_cast(i32x16, a), __builtin_bit_cast(i32x16, b),
                                                                    i64x8{}, 0xff));
#endif
}
template <class V>
KEYPLACE_DETAIL_HRW_INLINE auto lane_mask(V compared) noexcept -> unsigned {
    return __builtin_ia32_cvtq2mask512(__builtin_bit_cast(i64x8, compared));
}
KEYPLACE_DETAIL_HRW_INLINE auto min(f64x8 a, f64x8 b) noexcept -> f64x8 { return a < b ? a : b; }
// Every lane holds the least lane.
KEYPLACE_DETAIL_HRW_INLINE auto least(f64x8 v) noexcept -> f64x8 {
    v = min(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3));
    v = min(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5));
    return min(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6));
}

struct key_lanes {
    u64x8 lo;    // the key's word; its low 32 bits are what mul32 reads
    u64x8 high;  // its high 32 bits
    u64x8 base;
};

// The bounds of nodes at .. at + 7: hrw_hash and hrw_bound, eight lanes at a time. The 128-bit
// product from four 32-bit products: low = ll + ((lh + hl) << 32), high = hh + carries.
KEYPLACE_DETAIL_HRW_INLINE auto bounds(const hrw_nodes& n, const key_lanes& k, std::size_t at) noexcept -> f64x8 {
    u64x8 w;
    f64x8 scale;
    f64x8 offset;
    std::memcpy(&w, n.seeds + at, sizeof w);
    w ^= u64x8{} + hrw_node_flip;
    std::memcpy(&scale, n.scales + at, sizeof scale);
    std::memcpy(&offset, n.offsets + at, sizeof offset);
    const u64x8 low32 = u64x8{} + std::uint64_t{0xffffffffU};
    const u64x8 w_high = w >> 32;
    const u64x8 ll = mul32(k.lo, w);
    const u64x8 lh = mul32(k.lo, w_high);
    const u64x8 hl = mul32(k.high, w);
    const u64x8 hh = mul32(k.high, w_high);
    const u64x8 mid = (ll >> 32) + (hl & low32) + lh;
    const u64x8 high = hh + (hl >> 32) + (mid >> 32);
    u64x8 acc = k.base + w + ((ll + ((lh + hl) << 32)) ^ high);
    acc ^= acc >> 37;
    acc *= hrw_avalanche_prime;
    acc ^= acc >> 32;
    return __builtin_convertvector(acc >> 1, f64x8) * scale + offset;
}

}  // namespace hrw_lanes

/// The AVX-512 pick, the same owner as scoring every node exactly. Nodes in chunks of 128: a pass keeps each
/// lane's least and second-least bound and where the least was; the least node overall is scored
/// exactly, which sets the threshold; only if another bound of the chunk is within it does a second
/// pass offer every node whose bound passes, in index order. Precondition: hrw_avx512_available().
KEYPLACE_DETAIL_HRW_TARGET inline auto hrw_pick_avx512(const hrw_nodes& n, const log2_table_type& table,
                                                        std::uint64_t point) noexcept -> std::size_t {
    using namespace hrw_lanes;
    constexpr std::size_t chunk = 128;
    constexpr double start = 0x1p1022;  // above any bound, padding's included
    const hrw_key key = hrw_split(point);
    const key_lanes lanes{u64x8{} + key.lo, u64x8{} + (key.lo >> 32), u64x8{} + key.base};
    const i64x8 lane_ids{0, 1, 2, 3, 4, 5, 6, 7};
    hrw_best best;
    for (std::size_t at = 0; at < n.padded; at += chunk) {
        const std::size_t end = at + chunk < n.padded ? at + chunk : n.padded;
        f64x8 least_bound = f64x8{} + start;
        f64x8 second_bound = least_bound;
        i64x8 least_at{};
        i64x8 block = i64x8{} + static_cast<long long>(at);
        for (std::size_t q = at; q < end; q += 8) {
            const f64x8 b = bounds(n, lanes, q);
            least_at = b < least_bound ? block : least_at;
            const f64x8 larger = least_bound > b ? least_bound : b;
            second_bound = min(larger, second_bound);
            least_bound = min(b, least_bound);
            block += 8;
        }
        const f64x8 least_all = least(least_bound);
        if (!(least_all[0] <= best.threshold)) {
            continue;  // nothing in this chunk can win
        }
        const unsigned lane = static_cast<unsigned>(__builtin_ctz(lane_mask(least_bound == least_all)));
        const auto i = static_cast<std::size_t>(least_at[lane]) + lane;
        best.offer(i, hrw_draw(table, hrw_hash(key, n.seeds[i])), n.weights[i]);
        const f64x8 others = lane_ids == static_cast<long long>(lane) ? second_bound : least_bound;
        if (!(least(others)[0] <= best.threshold)) [[likely]] {
            continue;
        }
        for (std::size_t q = at; q < end; q += 8) {
            for (unsigned pass = lane_mask(bounds(n, lanes, q) <= best.threshold); pass != 0; pass &= pass - 1) {
                const std::size_t j = q + static_cast<unsigned>(__builtin_ctz(pass));
                best.offer(j, hrw_draw(table, hrw_hash(key, n.seeds[j])), n.weights[j]);
            }
        }
    }
    return best.index;
}

/// Offers offer(i, hash) every node whose bound is at most `threshold`, in index order, eight
/// bounds at a time; offer may lower the threshold (a node of a block already bounded against
/// the higher one is offered all the same, and scored exactly). Precondition: as hrw_pick_avx512.
template <class Offer>
KEYPLACE_DETAIL_HRW_TARGET inline void hrw_scan_avx512(const hrw_nodes& n, std::uint64_t point, const double& threshold,
                                                       Offer& offer) noexcept {
    using namespace hrw_lanes;
    const hrw_key key = hrw_split(point);
    const key_lanes lanes{u64x8{} + key.lo, u64x8{} + (key.lo >> 32), u64x8{} + key.base};
    for (std::size_t q = 0; q < n.padded; q += 8) {
        for (unsigned pass = lane_mask(bounds(n, lanes, q) <= threshold); pass != 0; pass &= pass - 1) {
            const std::size_t j = q + static_cast<unsigned>(__builtin_ctz(pass));
            offer(j, hrw_hash(key, n.seeds[j]));
        }
    }
}

#undef KEYPLACE_DETAIL_HRW_INLINE
#undef KEYPLACE_DETAIL_HRW_TARGET

#else

[[nodiscard]] inline auto hrw_avx512_available() noexcept -> bool { return false; }

#endif

}  // namespace detail
KEYPLACE_NAMESPACE_END

#endif
