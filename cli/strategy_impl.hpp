// keyplace-cli's commands over every strategy: the bodies of hash's neighbours locate, diff and
// stats, each a template instantiated for every strategy of the registry. Only the translation
// units that define those commands include this (locate.cpp, diff.cpp, stats.cpp).
#ifndef KEYPLACE_CLI_STRATEGY_IMPL_HPP_INCLUDED
#define KEYPLACE_CLI_STRATEGY_IMPL_HPP_INCLUDED

#include "args.hpp"
#include "bounded_commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "registry.hpp"
#include "spec.hpp"
#include "stream.hpp"

#include <keyplace/keyplace.hpp>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyplace_cli {

// ---- generic command bodies -------------------------------------------------------------------

/// The largest pre-hashed point a strategy of E reads whole: E's own limit, else its point type's.
template <class E, class S>
constexpr auto max_point() -> std::uint64_t {
    if constexpr (requires { E::max_point; }) {
        return E::max_point;
    } else if constexpr (requires { typename S::point_type; }) {
        return std::numeric_limits<std::make_unsigned_t<typename S::point_type>>::max();
    } else {
        return std::numeric_limits<std::uint64_t>::max();
    }
}

/// The points of the input lines: hashed with S's key hash, or parsed with --prehashed;
/// messages name a bad line as "SOURCE line N" (keys[0] being line first_line).
template <class E, class S, class Keys>
auto input_points(const Keys& keys, bool prehashed, std::string_view source = "stdin", std::size_t first_line = 1)
    -> std::vector<std::uint64_t> {
    constexpr bool signed_points = requires {
        E::signed_points;
    };
    std::vector<std::uint64_t> points(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (!prehashed) {
            points[i] = keyplace::hash_key(typename S::key_hash{}, std::string_view(keys[i]));
            continue;
        }
        const std::string line = std::string(source) + " line " + std::to_string(first_line + i) + ": ";
        std::optional<std::uint64_t> p;
        if constexpr (signed_points) {
            const auto token = parse_signed(keys[i]);
            p = token ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*token)) : std::nullopt;
        } else {
            p = parse_unsigned<std::uint64_t>(keys[i]);
            // A point the strategy would silently truncate is an input error, not a point.
            if (p && *p > max_point<E, S>()) {
                input_error(line + "point " + quote(keys[i]) + " is above " + std::to_string(max_point<E, S>()) +
                            ", the largest point of --strategy " + std::string(E::name));
            }
        }
        if (!p) {
            input_error(line + quote(keys[i]) + " is not " +
                        (signed_points ? "a signed decimal 64-bit token" : "an unsigned decimal 64-bit point"));
        }
        points[i] = *p;
    }
    return points;
}

/// The replica policy of --copies, --spread and --on-shortfall, if --copies was given. own_rule:
/// the strategy reads --copies as a replica rule of its own (cassandra), and --spread and
/// --on-shortfall do not apply.
inline auto replica_policy_of(const parsed_args& a, bool own_rule = false) -> std::optional<keyplace::replica_policy> {
    if (own_rule) {
        if (a.has(spread_option.spec) || a.has(shortfall_option.spec)) {
            usage_error("--spread and --on-shortfall do not apply to a strategy whose --copies is its own "
                        "replication (Cassandra's)");
        }
        return std::nullopt;
    }
    const auto count = copies_n_option.find(a);
    if (!count) {
        if (a.has(spread_option.spec) || a.has(shortfall_option.spec)) {
            usage_error("--spread and --on-shortfall need --copies");
        }
        return std::nullopt;
    }
    keyplace::replica_policy policy;
    policy.count = *count;
    if (const auto level = a.get(spread_option.spec)) {
        const auto parsed = keyplace::parse_failure_domain(*level);
        if (!parsed) {
            usage_error("--spread " + quote(*level) + " is not a level (node, rack, zone, region)");
        }
        policy.spread = *parsed;
    }
    if (const auto rule = a.get(shortfall_option.spec)) {
        const auto parsed = keyplace::parse_shortfall(*rule);
        if (!parsed) {
            usage_error("--on-shortfall " + quote(*rule) + " is not fail or relax");
        }
        policy.on_shortfall = *parsed;
    }
    return policy;
}

/// The replica rule of a policy: the library's placer over the strategy's preference order,
/// sharing s (not a copy: a ring of 10^5 nodes × 160 points is 0.8 GB).
template <class S>
auto placer_rule(std::shared_ptr<const S> s, const keyplace::replica_policy& policy) -> replica_rule {
    const auto placer = std::make_shared<const keyplace::replica_placer<S>>(
        keyplace::replica_placer<S>::build(std::move(s), policy));
    replica_rule rule{placer->count(),
                      [placer](std::uint64_t p, std::span<keyplace::node_index> out) { return placer->place(p, out); },
                      replica_summary{placer->degraded(), placer->achieved()}};
    if constexpr (keyplace::detail::needs_key_bytes<S>) {
        rule.place_key = [placer](std::span<const std::byte> k, std::span<keyplace::node_index> out) {
            return placer->place_key(k, out);
        };
    }
    return rule;
}

/// Each key's copies under rule: by the key's bytes where the rule places keys by them (unless
/// the lines are points), else by its point.
template <class S, class Keys>
auto place_replicas(const S& s, const Keys& keys, std::span<const std::uint64_t> points, bool prehashed,
                    const replica_rule& rule) -> std::vector<replica_line> {
    std::vector<keyplace::node_index> copies(rule.width);
    std::vector<replica_line> lines;
    const bool by_bytes = rule.place_key && !prehashed;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto r = by_bytes ? rule.place_key(keyplace::key_bytes(std::string_view(keys[i])), copies)
                                : rule.place(points[i], copies);
        replica_line& line = lines.emplace_back();
        for (std::size_t k = 0; k < r.placed; ++k) {
            line.ids.push_back(s.nodes()[copies[k].value].id);
        }
        line.degraded = r.degraded;
    }
    return lines;
}

/// Each point's owner.
template <class S>
auto owners(const S& s, std::span<const std::uint64_t> points) -> std::vector<std::string_view> {
    std::vector<std::string_view> ids;
    for (const auto p : points) {
        ids.push_back(s.nodes()[s.pick(p).value].id);
    }
    return ids;
}

/// Each key's owner; a strategy that looks keys up by their bytes (go-mpchash hashes a key
/// twice, so its 64-bit point is not enough) is asked with the key, unless the lines are points.
template <class S, class Keys>
auto key_owners(const S& s, const Keys& keys, std::span<const std::uint64_t> points, bool prehashed)
    -> std::vector<std::string_view> {
    if constexpr (keyplace::detail::key_bytes_strategy<S>) {
        if (!prehashed) {
            std::vector<std::string_view> ids;
            for (const auto& k : keys) {
                ids.push_back(keyplace::locate(s, std::string_view(k)).id);
            }
            return ids;
        }
    }
    return owners(s, points);
}

/// --spread-reads K and --salt S: hot-key spreading (spread.hpp), if asked for.
struct spread_request {
    keyplace::spread_width width;
    std::optional<std::uint64_t> salt;  ///< none: each read's line index
};

template <class E>
auto spread_reads_of(const parsed_args& a, bool replicas, bool bounded) -> std::optional<spread_request> {
    const auto k = spread_reads_option.find(a);
    const auto salt = salt_option.find(a);
    if (!k) {
        if (salt) {
            usage_error("--salt needs --spread-reads");
        }
        return std::nullopt;
    }
    if (!has_order<E>) {
        usage_error("--spread-reads needs a strategy with a preference order (" +
                    join(ordered_strategy_names(), ", ", ", ") + ")");
    }
    if constexpr (keyplace::detail::needs_key_bytes<built_t<E>>) {
        // Its owner comes from the key's bytes; the order a point gives is not the one it serves.
        usage_error("--spread-reads needs a strategy whose key point decides its order, not --strategy " +
                    std::string(E::name));
    }
    if (replicas) {
        usage_error("--spread-reads and --copies exclude each other (writes go to --copies K)");
    }
    if (bounded) {
        usage_error("--spread-reads and --load-factor exclude each other");
    }
    return spread_request{keyplace::spread_width::make(*k), salt};
}

/// locate streams: a block of keys at a time, each block's results held (see held_output) and
/// written to out once every line was valid.
template <class E>
auto locate(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
    const auto policy = replica_policy_of(a, requires { E::replica_options(); });
    if (policy && !has_order<E>) {
        usage_error("--copies needs a strategy with a preference order (" + join(ordered_strategy_names(), ", ", ", ") +
                    ")");
    }
    std::optional<bounded_request> bounded;
    if (const auto c = a.get(load_factor_option.spec)) {
        if (!has_order<E>) {
            usage_error("--load-factor needs a strategy with a preference order (" +
                        join(ordered_strategy_names(), ", ", ", ") + ")");
        }
        if constexpr (keyplace::detail::needs_key_bytes<built_t<E>>) {
            // Bounded loads walk a point's order; this strategy's owner comes from the key's bytes.
            usage_error("--load-factor needs a strategy whose key point decides its order, not --strategy " +
                        std::string(E::name));
        }
        if (policy) {
            usage_error("--load-factor and --copies exclude each other");
        }
        bounded = parse_bounded(*c);
    }
    const auto spread = spread_reads_of<E>(a, policy.has_value(), bounded.has_value());
    const bool json = a.has(json_flag.spec);
    const bool prehashed = a.has(prehashed_flag.spec);
    const std::string nodes = a.value(nodes_option.spec);
    // Shared, so that a replica placer holds the strategy built here rather than a copy of it.
    const auto built = std::make_shared<const built_t<E>>(from_specs({nodes}, [&] { return E::build(a, nodes); }));
    return use_built(*built, [&](const auto& s) -> std::string {
        using S = std::remove_cvref_t<decltype(s)>;
        if constexpr (keyplace::ordered_placement_strategy<S>) {
            if (bounded) {
                // Every request is held to the end: read them all, then assign the batch.
                std::vector<std::uint64_t> all;
                key_reader reader(in, io.stream.block_lines, std::string(io.input));
                while (reader.next()) {
                    const auto points = input_points<E, S>(reader.keys(), prehashed, io.input, reader.first_line());
                    all.insert(all.end(), points.begin(), points.end());
                }
                held_output held(io.stream.held_bytes);
                key_results results(held, json, "{\"owners\":[");
                std::vector<keyplace::node_index> got;
                from_specs({nodes}, [&] { got = bounded_owners(s, all, *bounded, E::name); });
                for (const auto i : got) {
                    const std::string_view id = s.nodes()[i.value].id;
                    results.add(json ? json_string(id) : std::string(id));
                }
                results.finish("}");
                held.commit(*io.out);
                return "";
            }
        }
        std::optional<replica_rule> rule;
        from_specs({nodes}, [&] {
            if constexpr (keyplace::ordered_placement_strategy<S>) {
                if (policy) {
                    rule = placer_rule(std::shared_ptr<const S>(built, &s), *policy);
                }
            }
            if constexpr (requires { E::replicas(s, a); }) {
                if (!rule) {
                    rule = E::replicas(s, a);
                }
            }
        });
        held_output held(io.stream.held_bytes);
        key_results results(held, json, rule ? "{\"replicas\":[" : spread ? "{\"servers\":[" : "{\"owners\":[");
        progress shown(*io.err, progress_mode_of(a, io), "locate");
        key_reader reader(in, io.stream.block_lines, std::string(io.input));
        std::uint64_t line_index = 0;  // --spread-reads' default salt
        while (reader.next()) {
            const auto points = input_points<E, S>(reader.keys(), prehashed, io.input, reader.first_line());
            if (rule) {
                for (const auto& line : place_replicas(s, reader.keys(), points, prehashed, *rule)) {
                    results.add(render_replica_line(line, json));
                }
            } else if (spread) {
                if constexpr (keyplace::ordered_placement_strategy<S>) {
                    for (const auto p : points) {
                        const auto salt = spread->salt ? *spread->salt : line_index;
                        const auto id = std::string_view(s.nodes()[keyplace::pick_spread(s, p, spread->width, salt).value].id);
                        results.add(json ? json_string(id) : std::string(id));
                        ++line_index;
                    }
                }
            } else {
                for (const auto id : key_owners(s, reader.keys(), points, prehashed)) {
                    results.add(json ? json_string(id) : std::string(id));
                }
            }
            shown.advance(points.size());
        }
        results.finish(rule ? replica_summary_tail(rule->summary) : "}");
        shown.finish();
        held.commit(*io.out);
        return "";
    });
}

/// --keys FILE, opened before anything is built (a wrong path fails at once), or nothing; and
/// --prehashed, which needs it.
struct key_file {
    std::optional<std::string> path;
    std::ifstream file;
    bool prehashed = false;

    explicit key_file(const parsed_args& a) : path(a.get(key_file_option.spec)), prehashed(a.has(prehashed_flag.spec)) {
        if (prehashed && !path) {
            usage_error("--prehashed needs --keys FILE (its lines are then points)");
        }
        if (path) {
            errno = 0;
            file.open(*path, std::ios::binary);
            if (!file) {
                // --keys was a count before it was a file everywhere.
                const bool count = parse_unsigned<std::uint64_t>(*path).has_value();
                input_error("cannot read key file " + quote(*path) + ": " + os_error() +
                            (count ? " (a count is --key-count N)" : ""));
            }
        }
    }
    /// The points of the file's keys (hashed with S's key hash, or read with --prehashed), a
    /// block of lines at a time, so only the points are held.
    template <class E, class S>
    auto points(std::size_t block_lines, progress& shown) -> std::vector<std::uint64_t> {
        const std::string source = "key file " + quote(*path);
        key_reader reader(file, block_lines, source);
        std::vector<std::uint64_t> out;
        while (reader.next()) {
            const auto block = input_points<E, S>(reader.keys(), prehashed, source, reader.first_line());
            out.insert(out.end(), block.begin(), block.end());
            shown.advance(block.size());
        }
        if (out.empty()) {
            input_error(source + " has no keys");
        }
        return out;
    }
    /// f(key) for each of the file's keys themselves, a block of lines at a time, for a
    /// strategy that places a key by its bytes (its point would give another owner); returns
    /// how many.
    template <class F>
    auto each_key(std::size_t block_lines, progress& shown, F&& f) -> std::size_t {
        const std::string source = "key file " + quote(*path);
        key_reader reader(file, block_lines, source);
        std::size_t n = 0;
        while (reader.next()) {
            for (const auto& k : reader.keys()) {
                f(std::string_view(k));
            }
            n += reader.keys().size();
            shown.advance(reader.keys().size());
        }
        if (n == 0) {
            input_error(source + " has no keys");
        }
        return n;
    }
    /// Whether S must be asked with the keys' bytes rather than their points.
    template <class S>
    [[nodiscard]] auto by_bytes() const noexcept -> bool {
        return keyplace::detail::needs_key_bytes<S> && !prehashed;
    }
    /// How reports name these keys: "4 keys from 'k.txt'" ("4 points" with --prehashed).
    [[nodiscard]] auto basis(std::size_t count) const -> std::string {
        return std::to_string(count) + (prehashed ? " points from " : " keys from ") + quote(*path);
    }
};

template <class E>
auto diff(const parsed_args& a, const live_streams& io) -> std::string {
    key_file keys(a);
    const std::string before_spec = a.value(nodes_before_option.spec);
    const std::string after_spec = a.value(nodes_after_option.spec);
    progress shown(*io.err, progress_mode_of(a, io), "diff");
    shown.step("building --nodes-before");
    const auto before_built = from_specs({before_spec}, [&] { return E::build(a, before_spec); });
    shown.step("building --nodes-after");
    // A strategy whose state is its history (a partition table) derives the after state.
    const auto after_built = from_specs({before_spec, after_spec}, [&] {
        if constexpr (requires { E::derive(before_built, a, std::string()); }) {
            return E::derive(before_built, a, after_spec);
        } else {
            return E::build(a, after_spec);
        }
    });
    return use_built(before_built, after_built, [&](const auto& before, const auto& after) -> std::string {
        using S = std::remove_cvref_t<decltype(before)>;
        keyplace::movement_report r;
        std::string basis;
        if (keys.path && keys.by_bytes<S>()) {
            shown.step("reading --keys");
            // Held whole (movement needs both owners of every key), as the points are below.
            std::vector<std::string> held;
            keys.each_key(io.stream.block_lines, shown, [&](std::string_view k) { held.emplace_back(k); });
            shown.step("measuring the movement");
            r = keyplace::movement_of_keys(before, after, std::span<const std::string>(held));
            basis = keys.basis(held.size());
        } else if (keys.path) {
            shown.step("reading --keys");
            const auto points = keys.points<E, S>(io.stream.block_lines, shown);
            shown.step("measuring the movement");
            r = keyplace::movement(before, after, points);
            basis = keys.basis(points.size());
        } else {
            shown.step("measuring the movement");
            r = keyplace::movement(before, after);
            basis = r.exact ? "exact, over the whole hash space"
                            : "sampled, " + std::to_string(keyplace::analysis_sample_size) + " fixed points";
        }
        shown.finish();
        return render_movement(E::name, before.size(), after.size(), basis, r, a.has(json_flag.spec));
    });
}

template <class E>
auto stats(const parsed_args& a, const live_streams& io) -> std::string {
    key_file keys(a);
    if (keys.path && a.has(key_count_option.spec)) {
        usage_error("--keys FILE and --key-count N exclude each other");
    }
    const std::size_t count = key_count_option.get(a);
    const std::string nodes = a.value(nodes_option.spec);
    progress shown(*io.err, progress_mode_of(a, io), "stats");
    shown.step("building");
    return use_built(from_specs({nodes}, [&] { return E::build(a, nodes); }), [&](const auto& s) -> std::string {
        using S = std::remove_cvref_t<decltype(s)>;
        if (keys.by_bytes<S>()) {
            // Placed by their bytes: each key itself, counted as it comes (nothing held).
            keyplace::load_report load;
            load.keys.assign(s.size(), 0);
            const auto place = [&](std::string_view k) { ++load.keys[keyplace::detail::pick_of_key(s, k).value]; };
            std::size_t total = count;
            std::string basis;
            if (keys.path) {
                shown.step("reading --keys");
                total = keys.each_key(io.stream.block_lines, shown, place);
                basis = keys.basis(total);
            } else {
                shown.step("placing the keys", count);
                for (std::size_t i = 0; i < count; ++i) {
                    place("key-" + std::to_string(i));
                    if ((i + 1) % io.stream.block_lines == 0) {
                        shown.advance(io.stream.block_lines);
                    }
                }
                basis = "\"key-0\" ... \"key-" + std::to_string(count - 1) + "\"";
            }
            shown.step("measuring shares");
            keyplace::detail::finish_load(load, total);
            const auto own = keyplace::ownership(s);
            shown.finish();
            return render_stats(E::name, s.nodes(), own, load, total, basis, a.has(json_flag.spec));
        }
        std::vector<std::uint64_t> points;
        std::string basis;
        if (keys.path) {
            shown.step("reading --keys");
            points = keys.points<E, S>(io.stream.block_lines, shown);
            basis = keys.basis(points.size());
        } else {
            shown.step("hashing the keys", count);
            points.resize(count);
            for (std::size_t i = 0; i < count; ++i) {
                points[i] = keyplace::hash_key(typename S::key_hash{}, "key-" + std::to_string(i));
                if ((i + 1) % io.stream.block_lines == 0) {
                    shown.advance(io.stream.block_lines);
                }
            }
            basis = "\"key-0\" ... \"key-" + std::to_string(count - 1) + "\"";
        }
        shown.step("measuring shares and load");
        const auto own = keyplace::ownership(s);
        const auto load = keyplace::load(s, points);
        shown.finish();
        return render_stats(E::name, s.nodes(), own, load, points.size(), basis, a.has(json_flag.spec));
    });
}

}  // namespace keyplace_cli

#endif
