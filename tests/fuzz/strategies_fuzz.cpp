// Fuzz target: every strategy built from a fuzzed membership, then derived (with/without, or
// push_back/pop_back) a few times, with what its contract states checked on every value.
//
// Input: a byte choosing the strategy, bytes of its configuration, the members (ids from a small
// alphabet so that repeats happen, weights from a table of valid and invalid values), then up to
// six operations (a join, a leave, a weight change).
// Invariants:
//  - try_build and build agree: the same value, or the same code and message (try_ vs throw);
//  - queries: pick() is a holder; pick_n() gives min(out, holders()) distinct holders, the first
//    pick(); the walk visits exactly the holders;
//  - rings: points() sorted in the point type's order, equal points by owner index, and pick() /
//    entry_of() equal to a plain binary search over points() (every point, its neighbours, the
//    ends of the circle, fuzzed hashes); tables: pick(h) == entry(h mod M), counts sum to M;
//  - region strategies: the regions' measures sum to exactly the circle (2^64, or 2^32 for
//    ketama's 32-bit points);
//  - input order: strategies that sort by id build the same value from the members reversed;
//  - a derivation equals a fresh build of the same membership (partition tables, whose state is
//    their history: the same derivation twice), succeeds exactly when the build does, and
//    leaves the original unchanged;
//  - minimal movement where promised (doc/contract.md, "Guarantees"): ring, rendezvous,
//    Cassandra, jump, JumpBackHash, multi-probe, AnchorHash and MementoHash move keys only to a joiner and only
//    a leaver's keys (AnchorHash and MementoHash, whose state is a removal history, are checked
//    derivation against the same derivation, not against a fresh build); ring and rendezvous
//    move keys only to or from a node whose weight changed; exact movement() of a join or leave
//    has no violations and equals its minimum; a one-replica partition table moves exactly the
//    minimum (partition_moves).
#include "fuzz_support.hpp"

#include <keyplace/analysis.hpp>
#include <keyplace/anchor.hpp>
#include <keyplace/compat/cassandra.hpp>
#include <keyplace/compat/envoy.hpp>
#include <keyplace/compat/ketama.hpp>
#include <keyplace/detail/splitmix.hpp>
#include <keyplace/jump.hpp>
#include <keyplace/jumpback.hpp>
#include <keyplace/maglev.hpp>
#include <keyplace/memento.hpp>
#include <keyplace/modulo.hpp>
#include <keyplace/multiprobe.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/ring.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using keyplace_fuzz::input;
namespace compat = keyplace::compat;

// ---- memberships ----------------------------------------------------------------------------

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Weights for strategies whose size grows with the weight (rings): small valid values and
// invalid ones that are refused before anything is allocated.
constexpr double ring_weights[] = {1, 1, 1, 1, 2, 3, 0.5, 0.25, 1.5, 4, 0.1, 64, 0.015625,
                                   0, -1, nan, inf, 1e-300, 1e300};
// Weights for strategies whose size does not (rendezvous, Maglev, partitions): the quantization's
// edges (2^-16 units; 2^-17 .. 2^37, issue 18 item 5) as well.
constexpr double unit_weights[] = {1, 1, 1, 1, 2, 3, 0.5, 0.25, 1.5, 7.125, 0x1p37, 0x1p-16, 0x1p-17, 0x1p-18,
                                   1e-5, 12345.678, 0, -1, nan, inf, 0x1p36 + 0.5};

// An id no member has (generated ids are "n<k>" or at most 5 bytes).
const std::string ghost = "ghost-id";

template <std::size_t N>
auto weight_of(input& in, const double (&table)[N]) -> double {
    return table[in.below(N)];
}

auto id_of(input& in) -> std::string {
    const std::uint8_t b = in.byte();
    if (b == 250 || b == 251) {
        return std::string(b == 250 ? 65536 : 65535, 'x');  // over and at the id limit
    }
    if (b >= 240) {
        return std::string(in.take(in.below(6)));  // any bytes, the empty id included
    }
    return "n" + std::to_string(b % 24);
}

auto location_of(input& in) -> keyplace::location {
    static const char* const parts[] = {"", "a", "b", "c"};
    const std::uint8_t b = in.byte();
    return {parts[b & 3U], parts[(b >> 2) & 3U], parts[(b >> 4) & 3U]};
}

auto node_of(input& in, bool ring_like) -> keyplace::node {
    keyplace::node n{id_of(in)};
    n.weight = ring_like ? weight_of(in, ring_weights) : weight_of(in, unit_weights);
    n.where = location_of(in);
    return n;
}

// ---- checks on one value ----------------------------------------------------------------------

/// Hashes to look up: fuzzed ones and the ends of the circle; rings add their points' neighbours.
auto sample_points(input& in) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> out{0, 1, std::numeric_limits<std::uint64_t>::max(), std::uint64_t{1} << 63,
                                   (std::uint64_t{1} << 63) - 1, 0xffffffffU, 0x100000000ULL};
    std::uint64_t state = in.bits<std::uint64_t>();
    for (int i = 0; i < 48; ++i) {
        out.push_back(keyplace::detail::splitmix64(state));
    }
    return out;
}

template <class S>
constexpr bool is_ring = requires(const S& s) { s.points(); s.owners(); s.entry_of(std::uint64_t{}); };
template <class S>
constexpr bool is_table = requires(const S& s) { s.table_size(); s.entry(std::uint64_t{}); };

/// The reference lookup: the first point >= h (> h under lookup_rule::after), wrapping to 0.
template <class Point>
auto reference_entry(std::span<const Point> points, keyplace::lookup_rule rule, std::uint64_t h) -> std::size_t {
    const auto p = static_cast<Point>(h);
    const auto it = rule == keyplace::lookup_rule::at_or_after ? std::lower_bound(points.begin(), points.end(), p)
                                                               : std::upper_bound(points.begin(), points.end(), p);
    return it == points.end() ? 0 : static_cast<std::size_t>(it - points.begin());
}

template <class S>
void check_ring(const S& s, std::vector<std::uint64_t> sample) {
    using Point = typename S::point_type;
    using U = std::make_unsigned_t<Point>;
    const auto points = s.points();
    const auto owners = s.owners();
    KEYPLACE_FUZZ_CHECK(!points.empty() && points.size() == owners.size());
    std::vector<std::size_t> counts(s.size(), 0);
    for (std::size_t i = 0; i < points.size(); ++i) {
        KEYPLACE_FUZZ_CHECK(owners[i].value < s.size());
        ++counts[owners[i].value];
        if (i > 0) {
            KEYPLACE_FUZZ_CHECK(points[i - 1] < points[i] ||
                                (points[i - 1] == points[i] && owners[i - 1].value <= owners[i].value));
        }
    }
    KEYPLACE_FUZZ_CHECK(counts == s.points_per_node());
    // Every point and its neighbours (as 64-bit hashes of the point's width), capped for speed.
    const std::size_t step = points.size() / 256 + 1;
    for (std::size_t i = 0; i < points.size(); i += step) {
        const auto u = static_cast<U>(points[i]);
        sample.push_back(static_cast<std::uint64_t>(u));
        sample.push_back(static_cast<std::uint64_t>(static_cast<U>(u - 1)));
        sample.push_back(static_cast<std::uint64_t>(static_cast<U>(u + 1)));
    }
    for (const auto h : sample) {
        const std::size_t want = reference_entry<Point>(points, s.rule(), h);
        KEYPLACE_FUZZ_CHECK(s.entry_of(h) == want);
        KEYPLACE_FUZZ_CHECK(s.pick(h) == owners[want]);
    }
}

template <class S>
void check_table(const S& s, const std::vector<std::uint64_t>& sample) {
    const std::uint64_t m = s.table_size();
    KEYPLACE_FUZZ_CHECK(m >= s.holders());
    std::vector<std::size_t> counts(s.size(), 0);
    for (std::uint64_t k = 0; k < m; ++k) {
        const auto e = s.entry(k);
        KEYPLACE_FUZZ_CHECK(e.value < s.size());
        ++counts[e.value];
    }
    KEYPLACE_FUZZ_CHECK(counts == s.entries_per_node());
    for (const auto h : sample) {
        KEYPLACE_FUZZ_CHECK(s.pick(h) == s.entry(h % m));
    }
}

template <class S>
void check_regions(const S& s) {
    if constexpr (keyplace::region_strategy<S>) {
        keyplace::detail::u128 sum{0, 0};
        for (const auto& m : keyplace::region_measure(s)) {
            sum = keyplace::detail::add(sum, m);
        }
        const auto circle = keyplace::detail::circle_of(s.regions());
        const keyplace::detail::u128 want =
            circle == 18446744073709551616.0 ? keyplace::detail::u128{1, 0}
                                             : keyplace::detail::u128{0, static_cast<std::uint64_t>(circle)};
        KEYPLACE_FUZZ_CHECK(sum == want);
    }
}

/// Every check on one value.
template <class S>
void check_value(const S& s, const std::vector<std::uint64_t>& sample) {
    KEYPLACE_FUZZ_CHECK(s.size() == s.nodes().size() && s.size() >= 1);
    KEYPLACE_FUZZ_CHECK(s.holders() >= 1 && s.holders() <= s.size());
    std::size_t holding = 0;
    for (std::uint32_t i = 0; i < s.size(); ++i) {
        holding += s.holds(keyplace::node_index{i}) ? 1U : 0U;
    }
    KEYPLACE_FUZZ_CHECK(holding == s.holders());
    if constexpr (is_ring<S>) {
        check_ring(s, sample);
    }
    if constexpr (is_table<S>) {
        check_table(s, sample);
    }
    check_regions(s);
    std::vector<keyplace::node_index> out(s.size() + 1);
    std::size_t walks = 0;
    for (const auto h : sample) {
        const auto owner = s.pick(h);
        KEYPLACE_FUZZ_CHECK(owner.value < s.size() && s.holds(owner));
        if constexpr (keyplace::ordered_placement_strategy<S>) {
            const std::size_t got = s.pick_n(h, out);
            KEYPLACE_FUZZ_CHECK(got == s.holders());
            KEYPLACE_FUZZ_CHECK(out[0] == owner);
            std::set<std::uint32_t> distinct;
            for (std::size_t k = 0; k < got; ++k) {
                KEYPLACE_FUZZ_CHECK(s.holds(out[k]));
                distinct.insert(out[k].value);
            }
            KEYPLACE_FUZZ_CHECK(distinct.size() == got);
            if (++walks > 8) {
                continue;  // a whole walk visits every point: a few suffice
            }
            std::set<std::uint32_t> walked;
            s.walk(h, [&](keyplace::node_index v) noexcept {
                walked.insert(v.value);
                return true;
            });
            KEYPLACE_FUZZ_CHECK(walked == distinct);
        }
    }
}

/// The owner ids of sample under s.
template <class S>
auto owner_ids(const S& s, const std::vector<std::uint64_t>& sample) -> std::vector<std::string> {
    std::vector<std::string> ids;
    for (const auto h : sample) {
        ids.push_back(s.node(s.pick(h)).id);
    }
    return ids;
}

/// Whether a and b are the same placement: the same nodes and, entry for entry, the same
/// points, slots or (for the rest) owners of sample.
template <class S>
auto same_value(const S& a, const S& b, const std::vector<std::uint64_t>& sample) -> bool {
    if (!std::equal(a.nodes().begin(), a.nodes().end(), b.nodes().begin(), b.nodes().end())) {
        return false;
    }
    if constexpr (is_ring<S>) {
        if (!std::equal(a.points().begin(), a.points().end(), b.points().begin(), b.points().end()) ||
            !std::equal(a.owners().begin(), a.owners().end(), b.owners().begin(), b.owners().end())) {
            return false;
        }
    }
    if constexpr (is_table<S>) {
        if (a.table_size() != b.table_size()) {
            return false;
        }
        for (std::uint64_t k = 0; k < a.table_size(); ++k) {
            if (a.entry(k) != b.entry(k)) {
                return false;
            }
        }
    }
    return owner_ids(a, sample) == owner_ids(b, sample);
}

// ---- subjects: how to build each strategy and what it promises -----------------------------------

enum class derives { any, append_only, history };

template <class S, class Member>
struct subject {
    std::function<std::optional<S>(std::span<const Member>, keyplace::error_info&)> try_build;
    std::function<S(std::span<const Member>)> build;
    std::function<Member(input&)> member;
    derives derivation = derives::any;
    bool sorted = true;           // nodes sorted by id: input order never matters
    bool minimal = false;         // joins and leaves move only the changed node's keys
    bool weight_minimal = false;  // so does a weight change
};

/// build() throws exactly what try_build() reports.
template <class S, class Member>
auto built(const subject<S, Member>& sub, std::span<const Member> members, keyplace::error_info& err)
    -> std::optional<S> {
    auto value = sub.try_build(members, err);
    try {
        const S thrown = sub.build(members);
        KEYPLACE_FUZZ_CHECK(value.has_value());
    } catch (const keyplace::error& e) {
        KEYPLACE_FUZZ_CHECK(!value.has_value());
        KEYPLACE_FUZZ_CHECK(e.code() == err.code());
        KEYPLACE_FUZZ_CHECK_MSG(std::string(e.what()) == err.message(), std::string(e.what()) + " | " + err.message());
    }
    if (!value) {
        KEYPLACE_FUZZ_CHECK(static_cast<bool>(err));
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
    }
    return value;
}

/// Keys moved from before to after only where allowed: to `joined`, or from `left`, or (a weight
/// change) to or from `changed`.
void check_moves(const std::vector<std::string>& before, const std::vector<std::string>& after,
                 const std::string& changed, bool join, bool leave) {
    for (std::size_t i = 0; i < before.size(); ++i) {
        if (before[i] == after[i]) {
            KEYPLACE_FUZZ_CHECK(!leave || before[i] != changed);
            continue;
        }
        if (join) {
            KEYPLACE_FUZZ_CHECK_MSG(after[i] == changed, before[i] + " -> " + after[i] + ", joiner " + changed);
        } else if (leave) {
            KEYPLACE_FUZZ_CHECK_MSG(before[i] == changed, before[i] + " -> " + after[i] + ", leaver " + changed);
        } else {
            KEYPLACE_FUZZ_CHECK_MSG(before[i] == changed || after[i] == changed,
                                    before[i] + " -> " + after[i] + ", reweighted " + changed);
        }
    }
}

template <class S>
void check_exact_movement(const S& before, const S& after) {
    if constexpr (keyplace::region_strategy<S>) {
        const auto m = keyplace::movement(before, after);
        if (m.exact) {
            KEYPLACE_FUZZ_CHECK(m.violations == 0);
            KEYPLACE_FUZZ_CHECK_MSG(std::fabs(m.moved - m.minimum) < 1e-9,
                                    std::to_string(m.moved) + " moved, minimum " + std::to_string(m.minimum));
        }
    }
}

template <class S, class Member>
void run(const subject<S, Member>& sub, input& in) {
    std::vector<Member> members;
    const std::size_t count = 1 + in.below(12);
    for (std::size_t i = 0; i < count; ++i) {
        members.push_back(sub.member(in));
    }
    auto sample = sample_points(in);
    keyplace::error_info err;
    auto current = built(sub, std::span<const Member>(members), err);
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "build of %zu: %s\n", members.size(), current ? "ok" : err.message().c_str());
    }
    if (!current) {
        return;
    }
    check_value(*current, sample);
    if (sub.sorted) {
        std::vector<Member> reversed(members.rbegin(), members.rend());
        keyplace::error_info rerr;
        const auto r = sub.try_build(reversed, rerr);
        KEYPLACE_FUZZ_CHECK(r && same_value(*r, *current, sample));
    }
    for (int op = 0; op < 6 && !in.empty(); ++op) {
        const S& s = *current;
        const auto before = owner_ids(s, sample);
        const std::uint8_t kind = in.byte() % 3;
        std::optional<S> next;
        std::vector<Member> next_members = members;
        std::string changed;
        keyplace::error_info derr;
        bool join = false;
        bool leave = false;
        if (kind == 0) {  // a join
            const Member m = sub.member(in);
            if constexpr (requires { m.id; }) {
                changed = m.id;
            }
            join = true;
            next_members.push_back(m);
            if constexpr (requires { s.try_with(m, derr); }) {
                next = s.try_with(m, derr);
            } else if constexpr (requires { s.try_push_back(m, derr); }) {
                next = s.try_push_back(m, derr);
            }
        } else if (kind == 1) {  // a leave: a member, or now and then an id that is none
            const std::size_t at = in.below(members.size() + 1);
            leave = true;
            changed = at < members.size() ? s.nodes()[at].id : ghost;  // the strategy's spelling of the id
            if constexpr (requires { s.try_without(changed, derr); }) {
                next = s.try_without(changed, derr);
                if (at < members.size()) {
                    // Nodes kept in the order given are the members' order; sorted ones are nodes.
                    if (!sub.sorted) {
                        next_members.erase(next_members.begin() + static_cast<std::ptrdiff_t>(at));
                    } else if constexpr (std::is_same_v<Member, keyplace::node>) {
                        next_members.erase(std::find_if(next_members.begin(), next_members.end(),
                                                        [&](const Member& m) { return m.id == changed; }));
                    }
                } else {
                    KEYPLACE_FUZZ_CHECK(!next && derr.code() == keyplace::errc::unknown_id);
                }
            } else if constexpr (requires { s.try_pop_back(derr); }) {
                changed = s.nodes().back().id;
                next = s.try_pop_back(derr);
                next_members.pop_back();
            }
        } else {  // a weight change: a fresh build (no strategy derives one)
            if constexpr (std::is_same_v<Member, keyplace::node>) {
                const std::size_t at = in.below(members.size());
                next_members[at].weight = weight_of(in, ring_weights);
                changed = next_members[at].id;
                next = sub.try_build(next_members, derr);
            } else {
                continue;
            }
        }
        // The original is unchanged, and the derivation is what a build gives.
        KEYPLACE_FUZZ_CHECK(owner_ids(s, sample) == before);
        if (kind != 2 && sub.derivation != derives::history) {
            keyplace::error_info berr;
            const auto fresh = next_members.empty() ? std::nullopt : sub.try_build(next_members, berr);
            if (changed != ghost && !next_members.empty()) {
                KEYPLACE_FUZZ_CHECK_MSG(next.has_value() == fresh.has_value(), derr.message() + " | " + berr.message());
                KEYPLACE_FUZZ_CHECK(!next || same_value(*next, *fresh, sample));
            }
        }
        if (keyplace_fuzz::tracing()) {
            std::fprintf(stderr, "  op %d %s: %s\n", int{kind}, changed.c_str(), next ? "ok" : derr.message().c_str());
        }
        if (!next) {
            KEYPLACE_FUZZ_CHECK(static_cast<bool>(derr));
            KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(derr.message());
            continue;
        }
        if constexpr (!std::is_same_v<Member, keyplace::node>) {
            if (join && !sub.sorted) {
                changed = next->nodes().back().id;  // appended, as the strategy names it (host:port)
            }
        }  // a node keeps its id; AnchorHash's joiner takes a removed bucket, not the last
        if (sub.derivation == derives::history) {
            // The table is its history: the same derivation again gives the same table.
            std::optional<S> again;
            keyplace::error_info aerr;
            if (join) {
                if constexpr (requires { s.try_with(next_members.back(), aerr); }) {
                    again = s.try_with(next_members.back(), aerr);
                }
            } else if (leave) {
                if constexpr (requires { s.try_without(changed, aerr); }) {
                    again = s.try_without(changed, aerr);
                }
            } else {
                again = sub.try_build(next_members, aerr);
            }
            KEYPLACE_FUZZ_CHECK(again && same_value(*again, *next, sample));
        }
        check_value(*next, sample);
        const auto after = owner_ids(*next, sample);
        if ((sub.minimal && kind != 2) || (sub.weight_minimal && kind == 2)) {
            check_moves(before, after, changed, join, leave);
            if (kind != 2) {
                check_exact_movement(s, *next);
            }
        }
        if constexpr (requires { keyplace::partition_moves(s, *next); }) {
            if (s.replica_count() == 1 && kind != 2) {
                const auto plan = keyplace::partition_moves(s, *next);
                KEYPLACE_FUZZ_CHECK_MSG(plan.moved == plan.minimum,
                                        std::to_string(plan.moved) + " moved, minimum " + std::to_string(plan.minimum));
            }
        }
        current = std::move(next);
        members = std::move(next_members);
    }
}

// ---- the strategies ------------------------------------------------------------------------------

template <class S, class Config>
auto node_subject(Config config, bool ring_like) -> subject<S, keyplace::node> {
    subject<S, keyplace::node> sub;
    sub.try_build = [config](std::span<const keyplace::node> m, keyplace::error_info& e) {
        return S::try_build(m, config, e);
    };
    sub.build = [config](std::span<const keyplace::node> m) { return S::build(m, config); };
    sub.member = [ring_like](input& in) { return node_of(in, ring_like); };
    return sub;
}

/// Jump (either form): buckets in the order given, weight 1 only, push_back and pop_back.
template <class Jump>
void run_jump(input& in) {
    auto sub = node_subject<Jump>(keyplace::no_config{}, false);
    sub.member = [](input& i) {
        keyplace::node n{id_of(i)};
        n.weight = i.byte() < 16 ? 2.0 : 1.0;  // jump refuses any weight but 1
        return n;
    };
    sub.derivation = derives::append_only;
    sub.sorted = false;
    sub.minimal = true;
    run(sub, in);
}

constexpr std::uint64_t primes[] = {2, 3, 7, 13, 17, 31, 61, 101, 251, 257, 509, 1021, 4093, 8, 1, 0};

/// The arbitrary-removal families (AnchorHash, MementoHash): nodes in bucket order, weight 1
/// only; their state is their history (a removal order), so a derivation is checked against the
/// same derivation again, not a fresh build; joins and leaves move only the changed node's keys.
template <class S>
void run_history(input& in, typename S::config_type config) {
    auto sub = node_subject<S>(std::move(config), false);
    sub.member = [](input& i) {
        keyplace::node n{id_of(i)};
        n.weight = i.byte() < 16 ? 2.0 : 1.0;  // refused: weights other than 1
        return n;
    };
    sub.derivation = derives::history;
    sub.sorted = false;
    sub.minimal = true;
    run(sub, in);
}

/// Multi-probe, AnchorHash (both forms) and MementoHash: strategy bytes 240 and up, so that the
/// committed corpus (strategy bytes below 15) keeps its meaning.
void fuzz_later_family(input& in, std::uint8_t which) {
    switch (which % 4) {
        case 0: {
            keyplace::multiprobe_config c;
            c.probes = in.flag() ? 21U : in.byte() % 40U;  // 0: refused
            auto sub = node_subject<keyplace::multiprobe>(c, false);
            sub.minimal = true;
            run(sub, in);
            break;
        }
        case 1:
        case 2: {
            keyplace::anchor_config c;
            c.capacity = in.flag() ? 0U : in.byte() % 40U;  // below the node count: refused
            if (which % 4 == 1) {
                run_history<keyplace::anchor>(in, c);
            } else {
                run_history<keyplace::anchor_compact>(in, c);
            }
            break;
        }
        default:
            run_history<keyplace::memento>(in, keyplace::memento_config{});
            break;
    }
}

void fuzz_strategy(input& in) {
    const std::uint8_t which = in.byte();
    if (which >= 240) {
        fuzz_later_family(in, which);
        return;
    }
    if (which >= 224) {  // JumpBackHash: bytes no committed input starts with
        run_jump<keyplace::jumpback>(in);
        return;
    }
    switch (which % 15) {
        case 0: {
            auto sub = node_subject<keyplace::ring>(keyplace::ring_config{1U + in.byte() % 64U}, true);
            sub.minimal = sub.weight_minimal = true;
            run(sub, in);
            break;
        }
        case 1: {
            auto sub = node_subject<keyplace::rendezvous>(keyplace::no_config{}, false);
            sub.minimal = sub.weight_minimal = true;
            run(sub, in);
            break;
        }
        case 2: {
            run(node_subject<keyplace::maglev>(keyplace::maglev_config{primes[in.below(std::size(primes))]}, false), in);
            break;
        }
        case 3: {
            run(node_subject<keyplace::modulo>(keyplace::no_config{}, false), in);
            break;
        }
        case 4:
            run_jump<keyplace::jump>(in);
            break;
        case 5:
            run_jump<keyplace::jump_guava>(in);
            break;
        case 6: {
            keyplace::partitions_config c;
            c.partitions = std::uint32_t{1} << (in.byte() % 10);
            c.replicas = 1U + in.byte() % 3U;
            c.spread = static_cast<keyplace::failure_domain>(in.byte() % 4);
            auto sub = node_subject<keyplace::partitions>(c, false);
            sub.derivation = derives::history;
            run(sub, in);
            break;
        }
        case 7:
        case 8:
        case 9:
        case 10:
        case 11: {
            static constexpr compat::ketama_dialect dialects[] = {
                compat::ketama_dialect::libmemcached_weighted, compat::ketama_dialect::libmemcached_spy,
                compat::ketama_dialect::libmemcached_unweighted, compat::ketama_dialect::libketama,
                compat::ketama_dialect::python_hash_ring};
            const auto dialect = dialects[which % 15 - 7];
            subject<compat::ketama, compat::ketama_server> sub;
            sub.try_build = [dialect](std::span<const compat::ketama_server> m, keyplace::error_info& e) {
                return compat::try_build_ketama(dialect, m, e);
            };
            sub.build = [dialect](std::span<const compat::ketama_server> m) { return compat::build_ketama(dialect, m); };
            sub.member = [](input& i) {
                static const char* const hosts[] = {"10.0.0.1", "10.0.0.2", "cache-a", "cache-b", "[::1]",
                                                    "::1",      "[fe80::1", "",        "h",       "a.b.c"};
                static const char* const ports[] = {"", "", ":11211", ":11212", ":0", ":65535", ":65536", ":x", ":"};
                static constexpr std::uint64_t weights[] = {1, 1, 1, 2, 3, 100, 600, 0, 0xffffffffULL,
                                                            0x100000000ULL, std::uint64_t{1} << 63};
                const std::uint8_t b = i.byte();
                return compat::ketama_server{std::string(hosts[b % 10]) + ports[(b / 10) % 9] +
                                                 (i.flag() ? std::to_string(i.byte() % 8) : ""),
                                             weights[i.below(std::size(weights))]};
            };
            sub.sorted = false;
            run(sub, in);
            break;
        }
        case 12: {
            compat::envoy_ring_hash_config c;
            c.min_ring_size = std::uint64_t{1} << (in.byte() % 12);
            c.max_ring_size = in.byte() < 16 ? c.min_ring_size / 2 : c.min_ring_size << (in.byte() % 4);
            c.hash_function = in.flag() ? compat::envoy_hash_function::murmur_hash_2 : compat::envoy_hash_function::xx_hash;
            auto sub = node_subject<compat::envoy_ring_hash>(c, true);
            sub.sorted = false;
            run(sub, in);
            break;
        }
        case 13: {
            compat::envoy_maglev_config c;
            c.table_size = primes[in.below(std::size(primes))];
            run(node_subject<compat::envoy_maglev>(c, false), in);
            break;
        }
        default: {
            subject<compat::cassandra_ring, compat::cassandra_endpoint> sub;
            sub.try_build = [](std::span<const compat::cassandra_endpoint> m, keyplace::error_info& e) {
                return compat::cassandra_ring::try_build(m, e);
            };
            sub.build = [](std::span<const compat::cassandra_endpoint> m) { return compat::cassandra_ring::build(m); };
            sub.member = [](input& i) {
                static const char* const names[] = {"dc1", "dc2", "r1", "r2", ""};
                compat::cassandra_endpoint e{id_of(i), {}};
                const std::size_t tokens = i.below(5);  // 0: refused (no_points)
                for (std::size_t t = 0; t < tokens; ++t) {
                    // Small tokens collide now and then (duplicate_token); full ones do not.
                    e.tokens.push_back(i.flag() ? static_cast<std::int64_t>(i.byte()) - 128
                                                : static_cast<std::int64_t>(i.bits<std::uint64_t>()));
                }
                const std::uint8_t b = i.byte();
                if (b < 200) {
                    e.dc = names[b % 2];
                    e.rack = names[2 + (b / 2) % 2];
                } else {
                    e.dc = names[b % 5];
                    e.rack = names[(b / 5) % 5];
                }
                return e;
            };
            sub.sorted = false;
            sub.minimal = true;
            run(sub, in);
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    fuzz_strategy(in);
    return 0;
}
