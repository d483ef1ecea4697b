// keyplace — which node owns a key. Token allocation: tokens for a joining node chosen to balance
// replicated ownership, Cassandra's algorithm (CASSANDRA-7032, Lambov; ReplicationAware- and
// NoReplicationTokenAllocator, TokenAllocation.createStrategy, Cassandra 3.0+), over the native
// ring's 64-bit points and over Cassandra's Murmur3 tokens.
#ifndef KEYPLACE_TOKEN_ALLOCATION_HPP_INCLUDED
#define KEYPLACE_TOKEN_ALLOCATION_HPP_INCLUDED

#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/point_ring.hpp>
#include <keyplace/detail/float_text.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/detail/wide.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/node.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

// The scores are IEEE-754 double expressions, as in Cassandra; -ffast-math could reorder them
// and change which tokens are chosen.
#if defined(__FAST_MATH__)
#error "keyplace/token_allocation.hpp needs IEEE-754 arithmetic: compile without -ffast-math"
#endif

KEYPLACE_NAMESPACE_BEGIN

// The functions below that need no template parameter still take a defaulted one (as
// detail/lazy.hpp does): they are compiled only in translation units that call them.

/// The most tokens one allocation may ask for.
inline constexpr std::size_t max_allocated_tokens = std::size_t{1} << 16;

namespace detail {

[[nodiscard]] constexpr auto shift_right(const u128& v, unsigned s) noexcept -> u128 {
    if (s >= 128) {
        return {0, 0};
    }
    if (s >= 64) {
        return {0, v.hi >> (s - 64)};
    }
    return s == 0 ? v : u128{v.hi >> s, (v.lo >> s) | (v.hi << (64 - s))};
}

/// floor(span * ratio) for 0 <= ratio < 1 with ratio's exact binary value; whole means span is
/// 2^64 (span itself is then ignored).
[[nodiscard]] constexpr auto scale_floor(std::uint64_t span, bool whole, double ratio) noexcept -> std::uint64_t {
    if (!(ratio > 0.0)) {
        return 0;
    }
    if (ratio >= 1.0) {
        return whole ? std::numeric_limits<std::uint64_t>::max() : span - 1;
    }
    const auto bits = std::bit_cast<std::uint64_t>(ratio);
    const auto biased = static_cast<unsigned>(bits >> 52);
    const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
    // ratio = mantissa * 2^-shift
    const std::uint64_t mantissa = biased == 0 ? fraction : fraction | (std::uint64_t{1} << 52);
    const unsigned shift = biased == 0 ? 1074U : 1075U - biased;
    const u128 product = whole ? u128{mantissa, 0} : mul_wide(span, mantissa);
    return shift_right(product, shift).lo;
}

/// Java's BigDecimal.valueOf(double): the shortest decimal that reads back as the double, as
/// digits * 10^-scale (for 0 < value < 1).
struct decimal_fraction {
    std::uint64_t digits = 0;
    int scale = 0;
};
template <class = void>
[[nodiscard]] auto shortest_decimal(double v) noexcept -> decimal_fraction {
    // The shortest round-trip digits, fixed ("0.00125") or scientific ("1.25e-07"): leading
    // zeros add nothing to the digits, and each digit after the point is one of scale.
    const std::string text = shortest_text(v);
    const char* const end = text.data() + text.size();
    decimal_fraction out;
    int fraction_digits = 0;
    bool after_point = false;
    const char* p = text.data();
    for (; p != end && *p != 'e'; ++p) {
        if (*p == '.') {
            after_point = true;
            continue;
        }
        out.digits = out.digits * 10 + static_cast<std::uint64_t>(*p - '0');
        fraction_digits += after_point ? 1 : 0;
    }
    int exponent = 0;
    if (p != end) {
        std::from_chars(*(p + 1) == '+' ? p + 2 : p + 1, end, exponent);
    }
    out.scale = fraction_digits - exponent;
    return out;
}

/// floor(span * d.digits / 10^d.scale) and whether it was inexact (span * ratio < 2^64).
template <class = void>
[[nodiscard]] auto scale_decimal(std::uint64_t span, const decimal_fraction& d) noexcept
    -> std::pair<std::uint64_t, bool> {
    u128 n = mul_wide(span, d.digits);  // < 2^64 * 10^17
    // In steps of at most 10^19, so that each quotient fits 64 bits (the first one of a scale
    // above 19 is below 2^121 / 10^19).
    bool inexact = false;
    for (int left = d.scale; left > 0;) {
        const int step = left < 19 ? left : 19;
        std::uint64_t div = 1;
        for (int i = 0; i < step; ++i) {
            div *= 10;
        }
        const std::uint64_t q = div_floor(n, div);
        inexact = inexact || mul_wide(q, div) != n;
        n = u128{0, q};
        left -= step;
    }
    return {n.lo, inexact};
}

}  // namespace detail

/// The native ring's token arithmetic: unsigned 64-bit points on a circle of 2^64; a token owns
/// (previous token, token]. Every result is exact integer arithmetic except size().
struct native_token_arithmetic {
    using token = std::uint64_t;

    /// |(l, r]| / 2^64 (rounded to double); l == r is the whole circle, 1.
    [[nodiscard]] static constexpr auto size(token l, token r) noexcept -> double {
        const std::uint64_t d = r - l;
        return d == 0 ? 1.0 : static_cast<double>(d) * 0x1p-64;
    }
    /// l + floor(|(l, r]| / 2), wrapping; for l == r the opposite point, l + 2^63.
    [[nodiscard]] static constexpr auto midpoint(token l, token r) noexcept -> token {
        const std::uint64_t d = r - l;
        return d == 0 ? l + (std::uint64_t{1} << 63) : l + d / 2;
    }
    /// l + floor(|(l, r]| * ratio), wrapping, with ratio's exact binary value, 0 <= ratio < 1.
    [[nodiscard]] static constexpr auto split(token l, token r, double ratio) noexcept -> token {
        const std::uint64_t d = r - l;
        return l + detail::scale_floor(d, d == 0, ratio);
    }
    /// A token from 64 random bits.
    [[nodiscard]] static constexpr auto from_random(std::uint64_t bits) noexcept -> token { return bits; }
    /// The token after t (wrapping), for moving off a token another ring holds.
    [[nodiscard]] static constexpr auto next(token t) noexcept -> token { return t + 1; }
};

namespace compat {

/// Cassandra's Murmur3Partitioner token arithmetic (Murmur3Partitioner, LongToken): signed 64-bit
/// tokens; Long.MIN_VALUE is the ring's minimum and never a key's token.
struct murmur3_token_arithmetic {
    using token = std::int64_t;
    static constexpr token min_token = std::numeric_limits<std::int64_t>::min();
    static constexpr token max_token = std::numeric_limits<std::int64_t>::max();

    /// LongToken.size: (r - l) as a wrapping long, scaled by 2^-64, plus 1 when not positive, in
    /// double arithmetic, so l == r gives 1.
    [[nodiscard]] static constexpr auto size(token l, token r) noexcept -> double {
        const auto v = static_cast<std::int64_t>(static_cast<std::uint64_t>(r) - static_cast<std::uint64_t>(l));
        const double d = static_cast<double>(v) * 0x1p-64;
        return d > 0.0 ? d : d + 1.0;
    }
    /// Murmur3Partitioner.midpoint: floor((l + r) / 2) if l < r; else floor((MAX - MIN + l + r) / 2),
    /// less MAX - MIN (= 2^64 - 1, not 2^64) if above MAX.
    [[nodiscard]] static constexpr auto midpoint(token l, token r) noexcept -> token {
        const auto ul = static_cast<std::uint64_t>(l);
        if (l < r) {
            return static_cast<token>(ul + ((static_cast<std::uint64_t>(r) - ul) >> 1));
        }
        const std::uint64_t half = ~(ul - static_cast<std::uint64_t>(r)) >> 1;  // (2^64 - 1 - (l - r)) / 2
        const std::uint64_t room = static_cast<std::uint64_t>(max_token) - ul;  // MAX - l
        return static_cast<token>(ul + half + (half > room ? 1U : 0U));
    }
    /// Murmur3Partitioner.split: l + span * ratio truncated toward zero (BigDecimal.toBigInteger),
    /// span = r - l, or MAX - MIN + r - l when l >= r (then less MAX - MIN if above MAX). The ratio
    /// is BigDecimal.valueOf(ratio): the shortest decimal that reads back as it (Double.toString as
    /// of JDK 19; older JDKs print a longer decimal for a few doubles). 0 <= ratio < 1.
    template <class = void>
    [[nodiscard]] static auto split(token l, token r, double ratio) noexcept -> token {
        const auto ul = static_cast<std::uint64_t>(l);
        const std::uint64_t span = l < r ? static_cast<std::uint64_t>(r) - ul : ~(ul - static_cast<std::uint64_t>(r));
        if (!(ratio > 0.0)) {
            return l;
        }
        const auto [q, inexact] = detail::scale_decimal(span, detail::shortest_decimal(ratio));
        // l + q + f (0 <= f < 1) truncated: l + q, or one more when that is negative and f > 0.
        const bool negative = l < 0 && q < std::uint64_t{0} - ul;
        const std::uint64_t t = q + (negative && inexact ? 1U : 0U);
        const std::uint64_t room = static_cast<std::uint64_t>(max_token) - ul;
        return static_cast<token>(ul + t + (l >= r && t > room ? 1U : 0U));
    }
    /// Murmur3Partitioner.getRandomToken from 64 random bits: MIN becomes MAX.
    [[nodiscard]] static constexpr auto from_random(std::uint64_t bits) noexcept -> token {
        const auto v = static_cast<token>(bits);
        return v == min_token ? max_token : v;
    }
    /// LongToken.nextValidToken: t + 1 (wrapping, as Java's long).
    [[nodiscard]] static constexpr auto next(token t) noexcept -> token {
        return static_cast<token>(static_cast<std::uint64_t>(t) + 1U);
    }
};

}  // namespace compat

namespace detail {

/// One allocation problem: the allocation ring's tokens (sorted, distinct) and their units, the
/// group of every unit (the new unit is the last and holds no token yet), and the replicas.
template <class Token>
struct allocation_ring {
    std::vector<Token> tokens;
    std::vector<std::uint32_t> owners;
    std::vector<std::uint32_t> groups;
    std::uint32_t replicas = 1;
};

inline constexpr std::uint32_t no_link = 0xffffffffU;

/// Cassandra's generateSplits: split the largest range (the first in ring order, counting from
/// (last, first], among equals) at MIN + (MAX - MIN) * u, MIN = 1 - 1/sqrt(5), MAX = MIN + 0.075
/// and u the generator's next double; an empty ring first gets a random token. Appends to `sorted` (kept sorted) and out.
template <class A>
void generate_splits(std::vector<typename A::token>& sorted, std::size_t count, std::uint64_t& state,
                     std::vector<typename A::token>& out) {
    using token = typename A::token;
    constexpr double min_ratio = 0x1.1b06d1d200914p-1;  // 1.0 - 1.0 / Math.sqrt(5.0) in double
    constexpr double max_ratio = min_ratio + 0.075;
    constexpr double growth = max_ratio - min_ratio;  // as Java computes it: not quite 0.075
    struct range {
        double size;
        token start;
        token end;
    };
    // Largest first; among equal sizes the one ending at the smallest token (ring order from
    // (last, first]).
    const auto later = [](const range& a, const range& b) { return a.size != b.size ? a.size < b.size : a.end > b.end; };
    std::vector<range> heap;
    if (sorted.empty() && count > 0) {
        const token t = A::from_random(splitmix64(state));
        sorted.push_back(t);
        out.push_back(t);
        --count;
    }
    for (std::size_t i = 0; i < sorted.size() && count > 0; ++i) {
        const token start = sorted[i == 0 ? sorted.size() - 1 : i - 1];
        heap.push_back({A::size(start, sorted[i]), start, sorted[i]});
    }
    std::make_heap(heap.begin(), heap.end(), later);
    for (; count > 0; --count) {
        std::pop_heap(heap.begin(), heap.end(), later);
        const range r = heap.back();
        heap.pop_back();
        const token t = A::split(r.start, r.end, min_ratio + growth * splitmix64_unit(state));
        out.push_back(t);
        sorted.insert(std::lower_bound(sorted.begin(), sorted.end(), t), t);
        heap.push_back({A::size(r.start, t), r.start, t});
        std::push_heap(heap.begin(), heap.end(), later);
        heap.push_back({A::size(t, r.end), t, r.end});
        std::push_heap(heap.begin(), heap.end(), later);
    }
}

/// ReplicationAwareTokenAllocator.addUnit over index-linked lists (the same state and the same
/// order of updates as Cassandra's circular lists). Returns false if it had to stop early (no
/// candidate left); `out` then holds the tokens chosen so far.
template <class A>
class replication_aware_allocator {
public:
    using token = typename A::token;

    replication_aware_allocator(const allocation_ring<token>& circle, std::size_t count)
        : replicas_(circle.replicas), count_(count) {
        const std::size_t units = circle.groups.size();
        new_unit_ = static_cast<std::uint32_t>(units - 1);
        unit_group_ = circle.groups;
        std::uint32_t groups = 0;
        for (const std::uint32_t g : unit_group_) {
            groups = std::max(groups, g + 1);
        }
        repl_seen_.assign(groups, 0);
        pop_seen_.assign(groups, 0);
        unit_own_.assign(units, 0.0);
        unit_tokens_.assign(units, 0);
        unit_prev_used_.assign(units, no_link);
        unit_adjusted_.assign(units, 0.0);
        const std::size_t n = circle.tokens.size();
        opt_ = static_cast<double>(replicas_) / static_cast<double>(n + count);
        tok_.reserve(n + count);
        for (std::size_t i = 0; i < n; ++i) {
            const auto prev = static_cast<std::uint32_t>(i == 0 ? n - 1 : i - 1);
            const auto next = static_cast<std::uint32_t>(i + 1 == n ? 0 : i + 1);
            tok_.push_back({circle.tokens[i], circle.tokens[i], circle.tokens[i], 0.0, circle.owners[i],
                            unit_group_[circle.owners[i]], prev, next});
            ++unit_tokens_[circle.owners[i]];
        }
        unit_own_[new_unit_] = static_cast<double>(count) * opt_;
        unit_tokens_[new_unit_] = static_cast<std::uint32_t>(count);
        new_group_ = unit_group_[new_unit_];
        for (std::uint32_t i = 0; i < n; ++i) {
            populate_and_adjust(i);
        }
    }

    auto run(std::vector<token>& out) -> bool {
        // One candidate per range, at its midpoint, in ring order; a range of one value has none.
        for (std::uint32_t i = 0; i < tok_.size(); ++i) {
            const token mid = A::midpoint(tok_[tok_[i].prev].value, tok_[i].value);
            if (mid != tok_[tok_[i].prev].value && mid != tok_[i].value) {
                cand_.push_back({mid, mid, mid, opt_, new_unit_, i, no_link, no_link});
            }
        }
        const auto k = static_cast<std::uint32_t>(cand_.size());
        for (std::uint32_t c = 0; c < k; ++c) {
            cand_[c].prev = c == 0 ? k - 1 : c - 1;
            cand_[c].next = c + 1 == k ? 0 : c + 1;
            populate_candidate(c);
        }
        heap_.clear();
        for (std::uint32_t c = 0; c < k; ++c) {
            heap_.push_back({evaluate(c, 1.0 / static_cast<double>(count_)), cand_[c].value, c});
        }
        std::make_heap(heap_.begin(), heap_.end(), later_);
        for (std::size_t vn = 1;; ++vn) {
            if (heap_.empty()) {
                return false;
            }
            // Re-score the best (not the first pick: it takes the initial ranking as it is). It is
            // good enough if no worse than the next in the queue, a heuristic (Cassandra's) that
            // cuts the search by about the token count; else it sinks with its new score.
            // Cassandra removes and re-adds it: the same queue, with one sift instead of two.
            while (vn > 1) {
                const double impr = evaluate(heap_[0].candidate, static_cast<double>(vn) / static_cast<double>(count_));
                const std::size_t next = heap_.size() < 3 ? heap_.size() - 1 : later_(heap_[1], heap_[2]) ? 2 : 1;
                if (next == 0 || impr >= heap_[next].weight) {
                    break;
                }
                heap_[0].weight = impr;
                sift_down();
            }
            const std::uint32_t best = pop();
            remove_candidate(best);
            confirm(best);
            out.push_back(cand_[best].value);
            if (vn == count_) {
                return true;
            }
        }
    }

    /// Every token of the ring after run(), sorted.
    [[nodiscard]] auto sorted_tokens() const -> std::vector<token> {
        std::vector<token> all;
        for (const auto& t : tok_) {
            all.push_back(t.value);
        }
        std::sort(all.begin(), all.end());
        return all;
    }

private:
    // A token or a candidate: its value, replication start and threshold, replicated ownership,
    // unit, and list links (for a candidate, `split` is the token after it).
    struct token_info {
        token value;
        token start;
        token threshold;
        double own;
        std::uint32_t unit;
        std::uint32_t group;  // the unit's, kept here for the walks
        std::uint32_t prev;
        std::uint32_t next;
    };
    struct candidate_info {
        token value;
        token start;
        token threshold;
        double own;
        std::uint32_t unit;
        std::uint32_t split;
        std::uint32_t prev;
        std::uint32_t next;
    };
    struct weighted {
        double weight;
        token value;
        std::uint32_t candidate;
    };

    // A group visitor: marks groups seen in one walk, cleared in O(1) by a new stamp.
    struct visitor {
        std::vector<std::uint32_t>* marks;
        std::uint32_t stamp;
        std::uint32_t seen = 0;
        auto add(std::uint32_t g) -> bool {
            if ((*marks)[g] == stamp) {
                return false;
            }
            (*marks)[g] = stamp;
            ++seen;
            return true;
        }
        [[nodiscard]] auto has(std::uint32_t g) const -> bool { return (*marks)[g] == stamp; }
    };
    auto new_visitor(std::vector<std::uint32_t>& marks, std::uint32_t& stamp) -> visitor {
        if (++stamp == 0) {  // wrapped: forget every old mark
            std::fill(marks.begin(), marks.end(), 0U);
            stamp = 1;
        }
        return visitor{&marks, stamp};
    }

    [[nodiscard]] auto group_of(std::uint32_t unit) const -> std::uint32_t { return unit_group_[unit]; }

    // Cassandra's populateTokenInfo: walk back from the token before `value` until `replicas`
    // groups are seen or a token of the same group; the start is where the walk stopped and the
    // threshold the boundary a new token of the new unit's group would move the start to.
    auto populate(std::uint32_t first_prev, token value, std::uint32_t unit) -> std::pair<token, token> {
        const std::uint32_t own_group = group_of(unit);
        visitor v = new_visitor(pop_seen_, pop_stamp_);
        token start = value;
        token threshold = value;
        std::uint32_t curr_group = own_group;
        for (std::uint32_t curr = first_prev;; curr = tok_[curr].prev) {
            start = tok_[curr].value;
            curr_group = tok_[curr].group;
            if (!v.add(curr_group)) {
                continue;
            }
            if (v.seen >= replicas_) {
                break;
            }
            threshold = start;
            if (curr_group == own_group) {
                break;
            }
        }
        if (new_group_ == own_group) {
            threshold = value;  // a new token is always a boundary
        } else if (new_group_ != curr_group && v.has(new_group_)) {
            threshold = start;  // the new group already replicates here: cannot be affected
        }
        return {start, threshold};
    }

    void populate_and_adjust(std::uint32_t i) {
        auto& t = tok_[i];
        std::tie(t.start, t.threshold) = populate(t.prev, t.value, t.unit);
        const double own = A::size(t.start, t.value);
        unit_own_[t.unit] += own - t.own;
        t.own = own;
    }

    void populate_candidate(std::uint32_t c) {
        auto& x = cand_[c];
        std::tie(x.start, x.threshold) = populate(tok_[x.split].prev, x.value, x.unit);
    }

    // Cassandra's furtherStartToken: of t1 and t2 the one farther back from `towards`; equality
    // with `towards` means "the same token", not the whole circle.
    [[nodiscard]] static auto further_start(token t1, token t2, token towards) -> token {
        if (t1 == towards) {
            return t2;
        }
        if (t2 == towards) {
            return t1;
        }
        return A::size(t1, towards) > A::size(t2, towards) ? t1 : t2;
    }

    // The unit-adjustment chain: the new unit first (its link points to itself), then each unit
    // affected, with its ownership after the insertion.
    void track(std::uint32_t unit, double diff) {
        if (unit_prev_used_[unit] == no_link) {
            unit_adjusted_[unit] = unit_own_[unit] + diff;
            unit_prev_used_[unit] = chain_ == no_link ? unit : chain_;
            chain_ = unit;
        } else {
            unit_adjusted_[unit] += diff;
        }
    }

    [[nodiscard]] static auto sq(double d) -> double { return d * d; }

    auto adjust(double old_own, double new_own, std::uint32_t unit) -> double {
        const auto tc = static_cast<double>(unit_tokens_[unit]);
        track(unit, new_own - old_own);
        return (sq(new_own - opt_) - sq(old_own - opt_)) / sq(tc);
    }

    // Cassandra's evaluateImprovement: minus the change of the squared error of token and unit
    // ownership (normalised per token) if the candidate were taken; the new unit's term is
    // weighted by new_unit_mult.
    auto evaluate(std::uint32_t c, double new_unit_mult) -> double {
        const candidate_info& x = cand_[c];
        chain_ = no_link;
        double token_change = adjust(x.own, A::size(x.start, x.value), x.unit);
        visitor v = new_visitor(repl_seen_, repl_stamp_);
        for (std::uint32_t curr = x.split; v.seen < replicas_; curr = tok_[curr].next) {
            const token_info& t = tok_[curr];
            if (!v.add(t.group)) {
                continue;  // a group already seen: this token cannot be affected
            }
            const token start = further_start(t.threshold, x.value, t.value);
            token_change += adjust(t.own, A::size(start, t.value), t.unit);
        }
        double unit_change = 0;
        for (std::uint32_t u = chain_;;) {
            const auto tc = static_cast<double>(unit_tokens_[u]);
            const double diff = sq(unit_adjusted_[u] / tc - opt_) - sq(unit_own_[u] / tc - opt_);
            const std::uint32_t prev = unit_prev_used_[u];
            unit_prev_used_[u] = no_link;
            if (prev != u) {
                unit_change += diff;
                u = prev;
            } else {
                unit_change += diff * new_unit_mult;
                break;
            }
        }
        return -(token_change + unit_change);
    }

    // Cassandra's confirmCandidate: insert the token, then refresh every token and candidate
    // whose replication span it may change.
    void confirm(std::uint32_t c) {
        const candidate_info x = cand_[c];
        const std::uint32_t prev = tok_[x.split].prev;
        const auto n = static_cast<std::uint32_t>(tok_.size());
        tok_.push_back({x.value, x.value, x.value, x.own, x.unit, new_group_, prev, x.split});
        tok_[prev].next = n;
        tok_[x.split].prev = n;
        populate_and_adjust(n);
        visitor v = new_visitor(repl_seen_, repl_stamp_);
        std::uint32_t cand = c;
        for (std::uint32_t curr = tok_[n].next; v.seen < replicas_; curr = tok_[curr].next) {
            cand = cand_[cand].next;
            populate_candidate(cand);
            if (!v.add(tok_[curr].group)) {
                continue;
            }
            populate_and_adjust(curr);
        }
    }

    // Unlinks a candidate; its own next link stays, as confirm() walks on from it.
    void remove_candidate(std::uint32_t c) {
        cand_[cand_[c].next].prev = cand_[c].prev;
        cand_[cand_[c].prev].next = cand_[c].next;
    }

    // Restores the heap after the root's score fell.
    void sift_down() {
        const std::size_t n = heap_.size();
        const weighted moving = heap_[0];
        std::size_t i = 0;
        for (std::size_t child = 1; child < n; child = 2 * i + 1) {
            if (child + 1 < n && later_(heap_[child], heap_[child + 1])) {
                ++child;
            }
            if (!later_(moving, heap_[child])) {
                break;
            }
            heap_[i] = heap_[child];
            i = child;
        }
        heap_[i] = moving;
    }

    auto pop() -> std::uint32_t {
        std::pop_heap(heap_.begin(), heap_.end(), later_);
        const std::uint32_t c = heap_.back().candidate;
        heap_.pop_back();
        return c;
    }

    std::uint32_t replicas_;
    std::size_t count_;
    std::uint32_t new_unit_ = 0;
    std::uint32_t new_group_ = 0;
    double opt_ = 0;
    std::vector<std::uint32_t> unit_group_;
    std::vector<double> unit_own_;
    std::vector<std::uint32_t> unit_tokens_;
    std::vector<std::uint32_t> unit_prev_used_;
    std::vector<double> unit_adjusted_;
    std::uint32_t chain_ = no_link;
    std::vector<std::uint32_t> repl_seen_;
    std::vector<std::uint32_t> pop_seen_;
    std::uint32_t repl_stamp_ = 0;
    std::uint32_t pop_stamp_ = 0;
    std::vector<token_info> tok_;
    std::vector<candidate_info> cand_;
    std::vector<weighted> heap_;
    // Max-heap by improvement; equal improvements go by token value (smallest first), so the
    // choice never depends on the heap's layout.
    static constexpr auto later_ = [](const weighted& a, const weighted& b) {
        if (a.weight != b.weight) {
            return (a.weight < b.weight);
        }
        return a.value > b.value;
    };
};

/// NoReplicationTokenAllocator.addUnit: take over from the most-owning units until the average
/// including the new unit stops falling, splitting each one's largest vnodes by the share to take
/// (clamped to [0.1, 0.9]). Returns how many tokens it could not place (Cassandra would fail
/// there: a unit asked for more vnodes than it has, or a split landing on an existing token).
template <class A>
auto no_replication_allocate(const allocation_ring<typename A::token>& circle, std::size_t count,
                             std::vector<typename A::token>& out) -> std::size_t {
    using token = typename A::token;
    const std::size_t n = circle.tokens.size();
    const std::size_t units = circle.groups.size();
    const auto new_unit = static_cast<std::uint32_t>(units - 1);
    struct info {
        token value;
        double own;
        std::uint32_t unit;
        std::uint32_t prev;
    };
    std::vector<info> tok;
    tok.reserve(n + count);
    std::vector<double> unit_own(units, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t p = i == 0 ? n - 1 : i - 1;
        tok.push_back({circle.tokens[i], A::size(circle.tokens[p], circle.tokens[i]), circle.owners[i],
                       static_cast<std::uint32_t>(p)});
        unit_own[circle.owners[i]] += tok.back().own;
    }
    // Per unit its vnodes, largest first (equal ones by token value).
    const auto token_later = [&](std::uint32_t a, std::uint32_t b) {
        return tok[a].own != tok[b].own ? tok[a].own < tok[b].own : tok[a].value > tok[b].value;
    };
    std::vector<std::vector<std::uint32_t>> vnodes(units);
    for (std::uint32_t i = 0; i < n; ++i) {
        vnodes[tok[i].unit].push_back(i);
    }
    struct weighted_unit {
        double weight;
        std::uint32_t unit;
    };
    std::vector<weighted_unit> sorted_units;
    for (std::uint32_t u = 0; u < units; ++u) {
        std::make_heap(vnodes[u].begin(), vnodes[u].end(), token_later);
        if (!vnodes[u].empty()) {
            sorted_units.push_back({unit_own[u], u});
        }
    }
    // Most-owning first; equal ones by unit (units are numbered in id order).
    const auto unit_later = [](const weighted_unit& a, const weighted_unit& b) {
        return a.weight != b.weight ? a.weight < b.weight : a.unit > b.unit;
    };
    std::make_heap(sorted_units.begin(), sorted_units.end(), unit_later);
    double target = 0;
    double sum = 0;
    std::vector<weighted_unit> chosen;
    for (std::size_t i = 0; i < count && !sorted_units.empty(); ++i) {
        const weighted_unit top = sorted_units.front();
        sum += top.weight;
        const double average = sum / static_cast<double>(chosen.size() + 2);  // it and the new unit
        if (top.weight <= average) {
            break;  // the target can only fall from here
        }
        std::pop_heap(sorted_units.begin(), sorted_units.end(), unit_later);
        sorted_units.pop_back();
        chosen.push_back(top);
        target = average;
    }
    constexpr double max_takeover = 0.90;
    constexpr double min_takeover = 1.0 - max_takeover;
    std::size_t missed = 0;
    for (std::size_t nr = 0; nr < chosen.size(); ++nr) {
        const std::uint32_t u = chosen[nr].unit;
        const std::size_t want = count / chosen.size() + (nr < count % chosen.size() ? 1 : 0);
        const std::size_t take = std::min(want, vnodes[u].size());
        missed += want - take;
        std::vector<std::uint32_t> taken;
        double work = 0;
        for (std::size_t i = 0; i < take; ++i) {
            std::pop_heap(vnodes[u].begin(), vnodes[u].end(), token_later);
            taken.push_back(vnodes[u].back());
            vnodes[u].pop_back();
            work += tok[taken.back()].own;
            unit_own[u] -= tok[taken.back()].own;
        }
        const double to_take_over = chosen[nr].weight - target;
        for (const std::uint32_t t : taken) {
            double slice = max_takeover;
            if (to_take_over < work) {
                slice = std::clamp(to_take_over / work, min_takeover, max_takeover);
            }
            const token before = tok[tok[t].prev].value;
            const token fresh = A::split(before, tok[t].value, slice);
            if (fresh == before || fresh == tok[t].value) {
                ++missed;  // a range too small to split
            } else {
                const auto f = static_cast<std::uint32_t>(tok.size());
                tok.push_back({fresh, A::size(before, fresh), new_unit, tok[t].prev});
                tok[t].prev = f;
                tok[t].own = A::size(fresh, tok[t].value);
                out.push_back(fresh);
            }
            unit_own[u] += tok[t].own;
            vnodes[u].push_back(t);
            std::push_heap(vnodes[u].begin(), vnodes[u].end(), token_later);
        }
    }
    return missed;
}

/// Random tokens not in the ring (NoReplicationTokenAllocator's rule for an empty ring, or for
/// more tokens than the ring holds): from the generator, skipping any taken.
template <class A>
void random_tokens(std::vector<typename A::token>& sorted, std::size_t count, std::uint64_t& state,
                   std::vector<typename A::token>& out) {
    while (count > 0) {
        const auto t = A::from_random(splitmix64(state));
        const auto at = std::lower_bound(sorted.begin(), sorted.end(), t);
        if (at == sorted.end() || *at != t) {
            sorted.insert(at, t);
            out.push_back(t);
            --count;
        }
    }
}

/// Cassandra's choice of allocator for one allocation ring. The generator's state is the seed
/// XOR fmix64(tokens in the ring + 1), so successive joins with one seed draw differently, as
/// Cassandra's Random(sortedTokens.size()) does.
template <class A>
[[nodiscard]] auto allocate_in_ring(const allocation_ring<typename A::token>& circle, std::size_t count,
                                    std::uint64_t seed) -> std::vector<typename A::token> {
    using token = typename A::token;
    std::uint64_t state = seed ^ fmix64(static_cast<std::uint64_t>(circle.tokens.size()) + 1);
    std::vector<token> out;
    std::vector<token> sorted;  // the ring's tokens, copied only where splits or random tokens need them
    std::vector<bool> holds(circle.groups.size(), false);
    std::size_t units = 0;
    for (const std::uint32_t o : circle.owners) {
        units += holds[o] ? 0 : 1;
        holds[o] = true;
    }
    if (circle.replicas <= 1) {
        if (units == 0 || count > circle.tokens.size()) {
            sorted = circle.tokens;
            random_tokens<A>(sorted, count, state, out);
        } else if (const std::size_t missed = no_replication_allocate<A>(circle, count, out); missed > 0) {
            sorted = circle.tokens;
            for (const token t : out) {
                sorted.insert(std::lower_bound(sorted.begin(), sorted.end(), t), t);
            }
            generate_splits<A>(sorted, missed, state, out);
        }
    } else {
        std::vector<bool> group_held(circle.groups.size(), false);
        std::size_t groups = 0;
        for (std::size_t u = 0; u + 1 < circle.groups.size(); ++u) {
            if (holds[u] && !group_held[circle.groups[u]]) {
                group_held[circle.groups[u]] = true;
                ++groups;
            }
        }
        if (units < circle.replicas || count > circle.tokens.size() || groups < circle.replicas) {
            sorted = circle.tokens;
            generate_splits<A>(sorted, count, state, out);
        } else {
            replication_aware_allocator<A> allocator(circle, count);
            if (!allocator.run(out)) {
                sorted = allocator.sorted_tokens();
                generate_splits<A>(sorted, count - out.size(), state, out);
            }
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// How Cassandra's TokenAllocation.createStrategy allocates for a replication factor and a count
/// of racks (or other domains): RF 1 alone, or per domain when there are as many domains as
/// replicas; groups are the domains when there are more, nodes when there is one.
struct allocation_plan {
    std::uint32_t replicas = 1;
    bool domain_groups = false;    ///< groups are the domains, not the nodes
    bool own_domain_only = false;  ///< the allocation ring is the new node's domain
};

template <class = void>
[[nodiscard]] auto plan_allocation(std::uint32_t factor, bool by_domain, std::size_t domains,
                                   std::string_view level, std::string_view where, allocation_plan& plan)
    -> failure {
    if (factor <= 1) {
        plan = {1, false, false};
    } else if (!by_domain) {
        plan = {factor, false, false};
    } else if (domains == factor) {
        plan = {1, false, true};
    } else if (domains > factor) {
        plan = {factor, true, false};
    } else if (domains == 1) {
        plan = {factor, false, false};
    } else {
        return fail(errc::unsupported_replication,
                    "token allocation failed: the number of " + std::string(level) + "s " + std::to_string(domains) +
                        std::string(where) + " is lower than the replication factor " + std::to_string(factor) +
                        "; allocation needs 1 " + std::string(level) + " or at least " + std::to_string(factor) +
                        " (start the first " + std::to_string(factor) + " nodes on different " + std::string(level) +
                        "s)");
    }
    return {};
}

/// A member as the allocation sees it: id, domain path (at the groups' level), whether it is in
/// the scope (Cassandra: the new node's datacenter) and how many tokens it holds.
struct allocation_member {
    std::string_view id;
    std::string domain;
    bool in_scope = true;
    std::size_t tokens = 0;
};

/// The one allocation path of both entry points: refuses a token listed twice, picks the plan
/// (counting the domains of the members in scope that hold tokens; a new node whose domain none
/// of them is on counts 1, as Cassandra counts only racks its topology knows), builds the
/// allocation ring, allocates, and moves a token that a member outside the allocation ring holds
/// to the next value (nextValidToken); a collision inside the allocation ring is an error.
/// `all` is every token with its member, sorted.
template <class A>
[[nodiscard]] auto allocate_members(std::span<const allocation_member> members,
                                    std::span<const std::pair<typename A::token, std::uint32_t>> all,
                                    const allocation_member& fresh, std::size_t count, std::uint32_t factor,
                                    bool by_domain, std::string_view level, std::string_view where,
                                    std::uint64_t seed, std::vector<typename A::token>& out) -> failure {
    using token = typename A::token;
    std::map<std::string_view, std::size_t> domains;  // domain -> members in scope on it
    for (const auto& m : members) {
        if (m.in_scope && m.tokens != 0) {
            ++domains[m.domain];
        }
    }
    for (std::size_t i = 1; i < all.size(); ++i) {
        if (all[i].first == all[i - 1].first) {
            const auto& a = members[all[i - 1].second].id;
            const auto& b = members[all[i].second].id;
            return fail(errc::duplicate_token,
                        a == b ? "node " + quote(a) + " lists token " + std::to_string(all[i].first) + " twice"
                               : "token " + std::to_string(all[i].first) + " is owned by both " + quote(a) + " and " +
                                     quote(b));
        }
    }
    const std::size_t counted = domains.count(fresh.domain) != 0 ? domains.size() : 1;
    allocation_plan plan;
    if (auto f = plan_allocation(factor, by_domain, counted, level, where, plan)) {
        return f;
    }
    // Units in id order (ties in the allocator go by unit); the new unit last.
    std::vector<std::uint32_t> order;
    for (std::uint32_t i = 0; i < members.size(); ++i) {
        const auto& m = members[i];
        if (m.in_scope && m.tokens != 0 && (!plan.own_domain_only || m.domain == fresh.domain)) {
            order.push_back(i);
        }
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return members[a].id < members[b].id; });
    allocation_ring<token> circle;
    circle.replicas = plan.replicas;
    std::map<std::string_view, std::uint32_t> group_ids;
    const auto group_of = [&](const allocation_member& m, std::uint32_t unit) {
        return plan.domain_groups ? group_ids.emplace(m.domain, static_cast<std::uint32_t>(group_ids.size())).first->second
                                  : unit;
    };
    std::vector<std::uint32_t> unit_of(members.size(), no_link);
    for (std::uint32_t u = 0; u < order.size(); ++u) {
        unit_of[order[u]] = u;
        circle.groups.push_back(group_of(members[order[u]], u));
    }
    circle.groups.push_back(group_of(fresh, static_cast<std::uint32_t>(order.size())));
    for (const auto& [t, m] : all) {
        if (unit_of[m] != no_link) {
            circle.tokens.push_back(t);
            circle.owners.push_back(unit_of[m]);
        }
    }
    std::vector<token> chosen = allocate_in_ring<A>(circle, count, seed);
    const auto holder = [&](token t) {
        const auto at = std::lower_bound(all.begin(), all.end(), std::pair<token, std::uint32_t>{t, 0});
        return at != all.end() && at->first == t ? at->second : no_link;
    };
    for (token& t : chosen) {
        for (std::uint32_t m = holder(t); m != no_link; m = holder(t)) {
            if (unit_of[m] != no_link) {
                return fail(errc::duplicate_token,
                            "allocated token " + std::to_string(t) + " is already owned by " + quote(members[m].id));
            }
            t = A::next(t);
        }
    }
    std::sort(chosen.begin(), chosen.end());
    out = std::move(chosen);
    return {};
}

template <class = void>
[[nodiscard]] auto check_allocation_count(std::size_t count) -> failure {
    if (count == 0 || count > max_allocated_tokens) {
        return fail(errc::invalid_vnodes, "token count " + std::to_string(count) + " is outside 1.." +
                                              std::to_string(max_allocated_tokens));
    }
    return {};
}

}  // namespace detail

/// The native ring of chosen 64-bit points, keys hashed with XXH3 (the native key hash): where
/// allocated tokens are used.
using token_ring = compat::point_ring<std::uint64_t, xxh3>;

/// The replication the allocation balances: `factor` copies per key on distinct `groups`
/// (failure_domain::node: each node its own group, SimpleStrategy; rack, zone or region: copies on
/// distinct such domains, replica_placer's walk with that spread).
struct token_replication {
    std::uint32_t factor = 1;
    failure_domain groups = failure_domain::node;
};

/// A node and the tokens it holds (an empty list: not in the ring).
struct token_holder {
    node member;
    std::vector<std::uint64_t> tokens;
};

namespace detail {

// The native entry points' one path: nodes, how many tokens each holds, and every token with
// its node's index, sorted.
template <class = void>
[[nodiscard]] auto native_allocation(std::span<const node> nodes, std::span<const std::size_t> held,
                                     std::span<const std::pair<std::uint64_t, std::uint32_t>> tokens,
                                     const node& new_node, std::size_t count, const token_replication& r,
                                     std::uint64_t seed, std::vector<std::uint64_t>& out) -> failure {
    if (auto f = check_allocation_count(count)) {
        return f;
    }
    if (r.factor == 0) {
        return fail(errc::invalid_replica_count, "replication factor 0; at least 1 copy is needed");
    }
    if (static_cast<unsigned>(r.groups) > static_cast<unsigned>(failure_domain::region)) {
        return fail(errc::invalid_argument, "unknown failure-domain level " + std::to_string(static_cast<int>(r.groups)));
    }
    std::vector<node> all(nodes.begin(), nodes.end());
    all.push_back(new_node);
    std::vector<node> sorted;
    if (auto f = sorted_membership(all, sorted)) {
        return f;
    }
    if (tokens.size() + count > ring_max_points) {
        return too_many_points(tokens.size() + count);
    }
    const bool by_domain = r.groups != failure_domain::node;
    const std::string level(to_string(r.groups));
    for (const node& n : all) {
        if (by_domain && domain_part(n, r.groups).empty()) {
            return fail(errc::missing_location, "node " + quote(n.id) + " has no " + level + "; allocating over " +
                                                    level + "s needs every node's");
        }
    }
    std::vector<allocation_member> members;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        members.push_back({nodes[i].id, by_domain ? domain_path(nodes[i], r.groups) : std::string{}, true, held[i]});
    }
    const allocation_member fresh{new_node.id, by_domain ? domain_path(new_node, r.groups) : std::string{}, true, 0};
    return allocate_members<native_token_arithmetic>(members, tokens, fresh, count, r.factor, by_domain, level, "", seed,
                                                      out);
}

template <class = void>
[[nodiscard]] auto native_allocation(std::span<const token_holder> holders, const node& new_node,
                                     std::size_t count, const token_replication& r, std::uint64_t seed,
                                     std::vector<std::uint64_t>& out) -> failure {
    std::vector<node> nodes;
    std::vector<std::size_t> held;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> tokens;
    for (std::size_t i = 0; i < holders.size(); ++i) {
        nodes.push_back(holders[i].member);
        held.push_back(holders[i].tokens.size());
        for (const std::uint64_t t : holders[i].tokens) {
            tokens.emplace_back(t, static_cast<std::uint32_t>(i));
        }
    }
    std::sort(tokens.begin(), tokens.end());
    return native_allocation(nodes, held, tokens, new_node, count, r, seed, out);
}

// The ring's points are already sorted by (point, owner).
template <class = void>
[[nodiscard]] auto native_allocation(const token_ring& circle, const node& new_node, std::size_t count,
                                     const token_replication& r, std::uint64_t seed,
                                     std::vector<std::uint64_t>& out) -> failure {
    std::vector<std::size_t> held(circle.size(), 0);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> tokens;
    const auto points = circle.points();
    const auto owners = circle.owners();
    for (std::size_t i = 0; i < points.size(); ++i) {
        tokens.emplace_back(points[i], owners[i].value);
        ++held[owners[i].value];
    }
    return native_allocation(circle.nodes(), held, tokens, new_node, count, r, seed, out);
}

}  // namespace detail

/// Tokens for new_node joining the nodes in `holders`, chosen as Cassandra does to balance the
/// replicated ownership of `replication` (TokenAllocation.createStrategy's rules, with racks read
/// as replication.groups): factor 1 → NoReplicationTokenAllocator; node groups, or one domain →
/// ReplicationAwareTokenAllocator over nodes; more domains than the factor → over domains; as
/// many domains as the factor → NoReplicationTokenAllocator among the nodes of new_node's domain.
/// The first nodes (fewer than the factor, or fewer tokens than asked) get Cassandra's
/// generateSplits, and an empty ring a first token, from SplitMix64 seeded with `seed`: the same
/// inputs give the same tokens (on one build: a compiler that contracts a * b + c into a fused
/// multiply-add, as GCC does in GNU mode on targets with FMA, may score differently; Cassandra's
/// JVM never fuses). Domains are counted over the holders of tokens; if new_node's domain holds
/// none it counts as 1 (Cassandra counts the racks its topology knows).
///
/// Returns `count` distinct tokens, sorted. Each call rebuilds Cassandra's state from the ring:
/// O(T log T) for T tokens (one score per range, then about one re-score per range on the lazy
/// heap), memory O(T). Throws keyplace::error: count 0 or above max_allocated_tokens (invalid_vnodes); factor 0
/// (invalid_replica_count); an unknown level (invalid_argument); an empty, over-long or duplicate
/// id, new_node's included (empty_id, id_too_long, duplicate_id), or an invalid weight; a token
/// listed twice (duplicate_token); a node without the groups' location part (missing_location);
/// more than ring_max_points tokens (too_many_points); between 1 and factor domains, exclusive
/// (unsupported_replication).
template <class = void>
[[nodiscard]] auto allocate_tokens(std::span<const token_holder> holders, const node& new_node, std::size_t count,
                                   const token_replication& replication, std::uint64_t seed = 0)
    -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> out;
    auto f = detail::native_allocation(holders, new_node, count, replication, seed, out);
    return detail::value_or_raise(f, std::move(out));
}
template <class = void>
[[nodiscard]] auto try_allocate_tokens(std::span<const token_holder> holders, const node& new_node,
                                       std::size_t count, const token_replication& replication,
                                       std::uint64_t seed, error_info& err)
    -> std::optional<std::vector<std::uint64_t>> {
    std::vector<std::uint64_t> out;
    auto f = detail::native_allocation(holders, new_node, count, replication, seed, out);
    return detail::report(std::move(f), std::move(out), err);
}
/// As above, for a built ring (its nodes and their points).
template <class = void>
[[nodiscard]] auto allocate_tokens(const token_ring& circle, const node& new_node, std::size_t count,
                                   const token_replication& replication, std::uint64_t seed = 0)
    -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> out;
    auto f = detail::native_allocation(circle, new_node, count, replication, seed, out);
    return detail::value_or_raise(f, std::move(out));
}
template <class = void>
[[nodiscard]] auto try_allocate_tokens(const token_ring& circle, const node& new_node, std::size_t count,
                                       const token_replication& replication, std::uint64_t seed,
                                       error_info& err) -> std::optional<std::vector<std::uint64_t>> {
    std::vector<std::uint64_t> out;
    auto f = detail::native_allocation(circle, new_node, count, replication, seed, out);
    return detail::report(std::move(f), std::move(out), err);
}

namespace compat {

/// SimpleStrategy with replication factor rf.
struct simple_strategy_replication {
    std::uint32_t rf = 1;
};
/// NetworkTopologyStrategy: per-datacenter replication factors.
struct network_topology_replication {
    std::vector<dc_replication> dcs;
};

}  // namespace compat

namespace detail {

template <class = void>
[[nodiscard]] auto cassandra_check_endpoint(const compat::cassandra_ring& circle, const compat::cassandra_endpoint& e,
                                            std::size_t count) -> failure {
    if (auto f = check_allocation_count(count)) {
        return f;
    }
    if (auto f = check_node(keyplace::node{e.id})) {
        return f;
    }
    for (const auto& n : circle.nodes()) {
        if (n.id == e.id) {
            return fail(errc::duplicate_id, "node " + quote(e.id) + " is already in the ring");
        }
    }
    if (e.dc.empty() || e.rack.empty()) {
        return fail(errc::missing_location,
                    "node " + quote(e.id) + " has an empty " + (e.dc.empty() ? "datacenter" : "rack") + " name");
    }
    return {};
}

template <class = void>
[[nodiscard]] auto cassandra_members(const compat::cassandra_ring& circle, std::string_view dc, bool whole_ring,
                                     std::vector<std::pair<std::int64_t, std::uint32_t>>& tokens)
    -> std::vector<allocation_member> {
    std::vector<allocation_member> out;
    for (const auto& n : circle.nodes()) {
        out.push_back({n.id, domain_path(n, failure_domain::rack), whole_ring || n.where.region == dc, 0});
    }
    const auto points = circle.points();
    const auto owners = circle.owners();
    for (std::size_t i = 0; i < points.size(); ++i) {  // sorted by token, and tokens are distinct
        tokens.emplace_back(points[i], owners[i].value);
        ++out[owners[i].value].tokens;
    }
    return out;
}

template <class = void>
[[nodiscard]] auto cassandra_fresh(const compat::cassandra_endpoint& e) -> allocation_member {
    return {e.id, domain_path(keyplace::node{e.id, 1.0, location{e.dc, {}, e.rack}}, failure_domain::rack),
            true, {}};
}

template <class = void>
[[nodiscard]] auto cassandra_simple_allocation(const compat::cassandra_ring& circle, const compat::cassandra_endpoint& e,
                                               std::size_t count, const compat::simple_strategy_replication& r,
                                               std::uint64_t seed, std::vector<std::int64_t>& out) -> failure {
    if (auto f = cassandra_check_endpoint(circle, e, count)) {
        return f;
    }
    if (r.rf == 0) {
        return fail(errc::invalid_replica_count, "replication factor 0; at least 1 copy is needed");
    }
    std::vector<std::pair<std::int64_t, std::uint32_t>> tokens;
    const auto members = cassandra_members(circle, e.dc, true, tokens);
    return allocate_members<compat::murmur3_token_arithmetic>(members, tokens, cassandra_fresh(e), count, r.rf, false,
                                                              "rack", "", seed, out);
}

template <class = void>
[[nodiscard]] auto cassandra_nts_allocation(const compat::cassandra_ring& circle, const compat::cassandra_endpoint& e,
                                            std::size_t count, const compat::network_topology_replication& r,
                                            std::uint64_t seed, std::vector<std::int64_t>& out) -> failure {
    if (auto f = cassandra_check_endpoint(circle, e, count)) {
        return f;
    }
    std::uint32_t rf = 0;  // a datacenter not named holds no replica: Cassandra allocates as for RF 1
    for (std::size_t i = 0; i < r.dcs.size(); ++i) {
        const auto& o = r.dcs[i];
        const bool known = o.dc == e.dc || std::any_of(circle.nodes().begin(), circle.nodes().end(),
                                                       [&](const keyplace::node& n) { return n.where.region == o.dc; });
        if (o.dc.empty() || !known) {
            return fail(errc::unknown_domain, "datacenter " + quote(o.dc) + " has no node in the ring");
        }
        for (std::size_t j = 0; j < i; ++j) {
            if (r.dcs[j].dc == o.dc) {
                return fail(errc::duplicate_domain, "datacenter " + quote(o.dc) + " is named twice");
            }
        }
        rf = o.dc == e.dc ? o.rf : rf;
    }
    std::vector<std::pair<std::int64_t, std::uint32_t>> tokens;
    const auto members = cassandra_members(circle, e.dc, false, tokens);
    return allocate_members<compat::murmur3_token_arithmetic>(members, tokens, cassandra_fresh(e), count, rf, true, "rack",
                                                                         " in datacenter " + quote(e.dc), seed, out);
}

}  // namespace detail

namespace compat {

/// Tokens for new_node (its id, dc and rack; its tokens are ignored) joining a Cassandra ring, as
/// Cassandra 4.0+ allocates them (TokenAllocation.createStrategy, Murmur3 token arithmetic).
/// SimpleStrategy: the whole ring, each node its own group. NetworkTopologyStrategy: the nodes of
/// new_node's datacenter, with its rf there and racks the racks of that datacenter (new_node's
/// rack counts only if a node is on it, else racks = 1, as Cassandra counts its topology's
/// racks): rf <= 1 → NoReplication; racks == rf → NoReplication among new_node's rack; racks > rf
/// → ReplicationAware over racks; racks == 1 → over nodes; otherwise unsupported_replication. A
/// chosen token another datacenter (or rack, when allocating per rack) already holds moves to the
/// next value (nextValidToken); one the allocation ring holds is an error. The first tokens of a
/// datacenter come from SplitMix64 seeded with `seed`.
///
/// Throws keyplace::error: count 0 or above max_allocated_tokens (invalid_vnodes); an empty or
/// over-long id (empty_id, id_too_long), one already in the ring (duplicate_id); an empty dc or
/// rack (missing_location); SimpleStrategy rf 0 (invalid_replica_count); a datacenter named that
/// neither holds a node nor is new_node's (unknown_domain) or named twice (duplicate_domain);
/// 1 < racks < rf (unsupported_replication).
template <class = void>
[[nodiscard]] auto allocate_tokens(const cassandra_ring& circle, const cassandra_endpoint& new_node, std::size_t count,
                                   const simple_strategy_replication& replication, std::uint64_t seed = 0)
    -> std::vector<std::int64_t> {
    std::vector<std::int64_t> out;
    auto f = keyplace::detail::cassandra_simple_allocation(circle, new_node, count, replication, seed, out);
    return keyplace::detail::value_or_raise(f, std::move(out));
}
template <class = void>
[[nodiscard]] auto allocate_tokens(const cassandra_ring& circle, const cassandra_endpoint& new_node, std::size_t count,
                                   const network_topology_replication& replication, std::uint64_t seed = 0)
    -> std::vector<std::int64_t> {
    std::vector<std::int64_t> out;
    auto f = keyplace::detail::cassandra_nts_allocation(circle, new_node, count, replication, seed, out);
    return keyplace::detail::value_or_raise(f, std::move(out));
}
template <class = void>
[[nodiscard]] auto try_allocate_tokens(const cassandra_ring& circle, const cassandra_endpoint& new_node,
                                       std::size_t count, const simple_strategy_replication& replication,
                                       std::uint64_t seed, error_info& err)
    -> std::optional<std::vector<std::int64_t>> {
    std::vector<std::int64_t> out;
    auto f = keyplace::detail::cassandra_simple_allocation(circle, new_node, count, replication, seed, out);
    return keyplace::detail::report(std::move(f), std::move(out), err);
}
template <class = void>
[[nodiscard]] auto try_allocate_tokens(const cassandra_ring& circle, const cassandra_endpoint& new_node,
                                       std::size_t count, const network_topology_replication& replication,
                                       std::uint64_t seed, error_info& err)
    -> std::optional<std::vector<std::int64_t>> {
    std::vector<std::int64_t> out;
    auto f = keyplace::detail::cassandra_nts_allocation(circle, new_node, count, replication, seed, out);
    return keyplace::detail::report(std::move(f), std::move(out), err);
}

}  // namespace compat
KEYPLACE_NAMESPACE_END

#endif
