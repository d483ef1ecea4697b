// keyplace-cli commands: hash, locate, diff and stats, each written once over every strategy
// of the registry; the command table they form; the usage and help generated from both;
// execute(), which run() (run.cpp) wraps.
#ifndef KEYPLACE_EXAMPLES_CLI_COMMANDS_HPP_INCLUDED
#define KEYPLACE_EXAMPLES_CLI_COMMANDS_HPP_INCLUDED

#include "args.hpp"
#include "bounded_commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "planning_commands.hpp"
#include "registry.hpp"
#include "spec.hpp"
#include "stream.hpp"

#include <keyplace/keyplace.hpp>

// With nlohmann_json (CMake defines KEYPLACE_CLI_SNAPSHOTS): the snapshot commands.
#if KEYPLACE_CLI_SNAPSHOTS
#include "snapshot_commands.hpp"
#endif
// With the keyplace::etcd component (CMake defines KEYPLACE_CLI_ETCD): the etcd commands.
#if KEYPLACE_CLI_ETCD
#include "etcd_commands.hpp"
#endif

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <istream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
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

/// The replica policy of --replicas, --spread and --on-shortfall, if --replicas was given.
inline auto replica_policy_of(const parsed_args& a) -> std::optional<keyplace::replica_policy> {
    const auto count = replicas_option.find(a);
    if (!count) {
        if (a.has(spread_option.spec) || a.has(shortfall_option.spec)) {
            usage_error("--spread and --on-shortfall need --replicas");
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
        usage_error("--spread-reads and --replicas exclude each other (writes go to --replicas K)");
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
    const auto policy = replica_policy_of(a);
    if (policy) {
        if (!has_order<E>) {
            usage_error("--replicas needs a strategy with a preference order (" +
                        join(ordered_strategy_names(), ", ", ", ") + ")");
        }
        if constexpr (requires { E::replica_options(); }) {
            for_each_in(E::replica_options(), [&](const auto& o) {
                if (a.has(o.spec)) {
                    usage_error("--replicas and --" + std::string(o.spec.name) + " exclude each other");
                }
            });
        }
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
            usage_error("--load-factor and --replicas exclude each other");
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
                key_reader reader(in, io.stream.block_lines);
                while (reader.next()) {
                    const auto points = input_points<E, S>(reader.keys(), prehashed, "stdin", reader.first_line());
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
        key_reader reader(in, io.stream.block_lines);
        std::uint64_t line_index = 0;  // --spread-reads' default salt
        while (reader.next()) {
            const auto points = input_points<E, S>(reader.keys(), prehashed, "stdin", reader.first_line());
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
    const std::string before_spec = a.value(before_option.spec);
    const std::string after_spec = a.value(after_option.spec);
    progress shown(*io.err, progress_mode_of(a, io), "diff");
    shown.step("building --before");
    const auto before_built = from_specs({before_spec}, [&] { return E::build(a, before_spec); });
    shown.step("building --after");
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
                shown.step("placing the keys");
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
            shown.step("hashing the keys");
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

// ---- the command table ------------------------------------------------------------------------
// A command has name, help, the strategy options it takes (strategy_use), options(), a tuple
// of pointers to its own options, and run(args, stdin) returning what it prints.

struct hash_command {
    static constexpr std::string_view name = "hash";
    static constexpr std::string_view help = "each line's hash under F";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() { return std::tuple{&function_option, &json_flag, &quiet_flag}; }
    /// Streams as locate does.
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
        return function_option.visit(a, [&]<class H>(std::type_identity<H>) {
            const bool json = a.has(json_flag.spec);
            held_output held(io.stream.held_bytes);
            key_results results(held, json, "{\"function\":" + json_string(H::name) + ",\"digests\":[");
            progress shown(*io.err, progress_mode_of(a, io), "hash");
            key_reader reader(in, io.stream.block_lines);
            while (reader.next()) {
                for (const auto k : reader.keys()) {
                    results.add(json ? json_string(H::digest(k)) : H::digest(k));
                }
                shown.advance(reader.keys().size());
            }
            results.finish();
            shown.finish();
            held.commit(*io.out);
            return std::string();
        });
    }
};

struct locate_command {
    static constexpr std::string_view name = "locate";
    static constexpr std::string_view help = "each key's owner or, with --replicas, its copies";
    static constexpr strategy_use strategy_options = strategy_use::locate;
    static constexpr auto options() {
#if KEYPLACE_CLI_SNAPSHOTS
        return std::tuple{&strategy_option,     &nodes_option, &prehashed_flag,     &replicas_option,
                          &spread_option,       &shortfall_option, &json_flag,      &quiet_flag,
                          &snapshot_option,     &write_set_flag,   &load_factor_option, &spread_reads_option,
                          &salt_option};
#else
        return std::tuple{&strategy_option,  &nodes_option,       &prehashed_flag, &replicas_option,
                          &spread_option,    &shortfall_option,   &json_flag,      &quiet_flag,
                          &load_factor_option, &spread_reads_option, &salt_option};
#endif
    }
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
#if KEYPLACE_CLI_SNAPSHOTS
        if (a.has(snapshot_option.spec)) {
            return locate_snapshot(a, in, io);
        }
        if (a.has(write_set_flag.spec)) {
            usage_error("--write-set needs --snapshot");
        }
#endif
        return with_strategy(a, strategy_options,
                             [&]<class E>(std::type_identity<E>) { return locate<E>(a, in, io); });
    }
};

struct diff_command {
    static constexpr std::string_view name = "diff";
    static constexpr std::string_view help = "what a membership change moves, against the least it must";
    static constexpr strategy_use strategy_options = strategy_use::build;
    static constexpr auto options() {
        return std::tuple{&strategy_option, &before_option, &after_option, &key_file_option,
                          &prehashed_keys_flag, &json_flag, &quiet_flag};
    }
    static auto run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string {
        return with_strategy(a, strategy_options, [&]<class E>(std::type_identity<E>) { return diff<E>(a, io); });
    }
};

struct stats_command {
    static constexpr std::string_view name = "stats";
    static constexpr std::string_view help = "each node's share of the hash space and of N keys (or of a key file's)";
    static constexpr strategy_use strategy_options = strategy_use::build;
    static constexpr auto options() {
        return std::tuple{&strategy_option,     &nodes_option, &key_count_option, &stats_key_file_option,
                          &prehashed_keys_flag, &json_flag,    &quiet_flag};
    }
    static auto run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string {
        return with_strategy(a, strategy_options, [&]<class E>(std::type_identity<E>) { return stats<E>(a, io); });
    }
};

#if KEYPLACE_CLI_ETCD
using commands = entry_list<hash_command, locate_command, diff_command, stats_command, allocate_command,
                            redis_create_command, redis_rebalance_command, snapshot_create_command,
                            snapshot_next_command, snapshot_verify_command, snapshot_diff_command, shadow_command,
                            plan_command, etcd_publish_command, etcd_current_command, etcd_watch_command,
                            etcd_status_command>;
#elif KEYPLACE_CLI_SNAPSHOTS
using commands = entry_list<hash_command, locate_command, diff_command, stats_command, allocate_command,
                            redis_create_command, redis_rebalance_command, snapshot_create_command,
                            snapshot_next_command, snapshot_verify_command, snapshot_diff_command, shadow_command,
                            plan_command>;
#else
using commands = entry_list<hash_command, locate_command, diff_command, stats_command, allocate_command,
                            redis_create_command, redis_rebalance_command>;
#endif

/// A command's positional arguments become its options, in order: "verify F" is "verify --file F".
template <class C>
auto with_positionals(std::span<const std::string_view> args, std::vector<std::string>& storage)
    -> std::vector<std::string_view> {
    std::vector<std::string_view> out;
    std::vector<option_spec> slots;
    if constexpr (requires { C::positionals; }) {
        for_each_in(C::positionals, [&](const auto& o) { slots.push_back(o.spec); });
    }
    std::vector<option_spec> valued;
    for_each_in(C::options(), [&](const auto& o) {
        if (!o.spec.value.empty()) {
            valued.push_back(o.spec);
        }
    });
    storage.reserve(args.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg.substr(0, 2) == "--" || arg == "-h") {
            out.push_back(arg);
            const bool takes_value =
                arg.find('=') == std::string_view::npos &&
                std::any_of(valued.begin(), valued.end(), [&](const option_spec& s) { return arg.substr(2) == s.name; });
            if (takes_value && i + 1 < args.size()) {
                out.push_back(args[++i]);
            }
        } else if (next < slots.size()) {
            storage.push_back("--" + std::string(slots[next++].name) + "=" + std::string(arg));
            out.push_back(storage.back());
        } else {
            out.push_back(arg);  // parsed_args reports it
        }
    }
    return out;
}

inline constexpr choice_option<commands> command_choice{{"", "COMMAND", ""}, "command"};

// ---- usage and help -----------------------------------------------------------------------------

inline constexpr std::string_view input_notes =
    "Keys are read from stdin, one per line: the bytes between newlines, not trimmed; an empty\n"
    "line is the empty key. SPEC: comma-separated ID[=WEIGHT][@REGION[/ZONE[/RACK]]], or @PATH\n"
    "to a file with one such entry per line (blank lines and lines starting with # are\n"
    "skipped); some strategies read other entries (see COMMAND --help). Output is written only\n"
    "when every input line was valid. Exit status: 0 ok, 1 bad input, 2 bad arguments"
#if KEYPLACE_CLI_ETCD
    ", 3 etcd status: two clients report one epoch with different fingerprints"
#endif
    ".\n";

/// "--name VALUE" ("--name" for a flag).
inline auto term(const option_spec& s) -> std::string {
    return "--" + std::string(s.name) + (s.value.empty() ? "" : " " + std::string(s.value));
}

/// The term, in brackets if the option is optional.
inline auto synopsis(const option_spec& s) -> std::string {
    return s.required ? term(s) : "[" + term(s) + "]";
}

template <class Options>
auto synopsis_of(const Options& options) -> std::string {
    std::string out;
    for_each_in(options, [&](const auto& o) { out += (out.empty() ? "" : " ") + synopsis(o.spec); });
    return out;
}

template <class C>
auto command_synopsis() -> std::string {
    return "keyplace-cli " + std::string(C::name) + " " + synopsis_of(C::options()) +
           (C::strategy_options == strategy_use::none ? "" : " [strategy options]");
}

/// One row per option: its term and its help with its default.
template <class Options>
auto option_rows(const Options& options) -> std::vector<std::pair<std::string, std::string>> {
    std::vector<std::pair<std::string, std::string>> rows;
    for_each_in(options, [&](const auto& o) { rows.emplace_back(term(o.spec), o.describe()); });
    return rows;
}

/// The strategies, each with its help, its SPEC form and, with details, its options.
inline auto strategy_section(strategy_use use, bool details) -> std::string {
    std::string out = "strategies (--strategy S):\n";
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        std::string line(E::name);
        std::vector<std::pair<std::string, std::string>> options;
        for_each_option<E>(use, [&](const auto& o) {
            line += " " + synopsis(o.spec);
            options.emplace_back(term(o.spec), o.describe());
        });
        out += help_rows({{details ? std::string(E::name) : line, std::string(E::help)}}, "  ");
        if (details) {
            if constexpr (requires { E::spec_help; }) {
                options.insert(options.begin(), {"SPEC", std::string(E::spec_help)});
            }
            out += help_rows(options, "    ");
        }
    });
    return out;
}

inline auto hash_section() -> std::string {
    std::vector<std::pair<std::string, std::string>> rows;
    for_each_entry(hash_functions{}, [&]<class H>(std::type_identity<H>) {
        rows.emplace_back(std::string(H::name), std::string(H::help));
    });
    return "hash functions (hash --function F):\n" + help_rows(rows, "  ");
}

/// keyplace-cli --help.
inline auto usage() -> std::string {
    std::string out =
        "usage: keyplace-cli COMMAND [OPTIONS]\n"
        "       keyplace-cli COMMAND --help   a command's options, and those of each strategy\n"
        "       keyplace-cli --version\n\ncommands:\n";
    for_each_entry(commands{}, [&]<class C>(std::type_identity<C>) {
        out += "  " + command_synopsis<C>().substr(command_synopsis<C>().find(' ') + 1) + "\n      " +
               std::string(C::help) + "\n";
    });
    return out + "\n" + strategy_section(strategy_use::locate, false) + "\n" + hash_section() + "\n" +
           std::string(input_notes);
}

/// keyplace-cli COMMAND --help.
template <class C>
auto command_help() -> std::string {
    std::string out = "usage: " + command_synopsis<C>() + "\n" + std::string(C::help) + "\n\noptions:\n" +
                      help_rows(option_rows(C::options()), "  ");
    if constexpr (std::is_same_v<C, hash_command>) {
        out += "\n" + hash_section();
    } else if constexpr (C::strategy_options != strategy_use::none) {
        out += "\n" + strategy_section(C::strategy_options, true);
    }
    return out + "\n" + std::string(input_notes);
}

inline auto version_line() -> std::string {
    const auto v = keyplace::version;
    return "keyplace-cli " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch) +
           " (placement contract " + std::to_string(v.contract) + ")\n";
}

// ---- running ------------------------------------------------------------------------------------

/// The two-word command families: their first word and the subcommands it takes.
inline auto subcommands_of(std::string_view first) -> std::string_view {
    if (first == "snapshot") {
        return "create, next, verify or diff";
    }
    if (first == "etcd") {
        return "publish, current, watch or status";
    }
    if (first == "redis") {
        return "create or rebalance";
    }
    return "";
}

/// keyplace-cli FAMILY --help ("snapshot --help"): the synopsis and help of each subcommand.
inline auto family_help(std::string_view family) -> std::string {
    std::string out = "usage: keyplace-cli " + std::string(family) + " SUBCOMMAND [OPTIONS]\n\nsubcommands:\n";
    for_each_entry(commands{}, [&]<class C>(std::type_identity<C>) {
        if (C::name.substr(0, family.size() + 1) == std::string(family) + " ") {
            out += "  " + command_synopsis<C>().substr(command_synopsis<C>().find(' ') + 1) + "\n      " +
                   std::string(C::help) + "\n";
        }
    });
    return out + "\nkeyplace-cli " + std::string(family) + " SUBCOMMAND --help: a subcommand's options.\n";
}

/// What a command line prints on success; throws on any failure.
inline auto execute(std::span<const std::string_view> args, std::istream& in, live_streams live = {})
    -> std::string {
    if (args.empty()) {
        usage_error("no command given; try 'keyplace-cli --help'");
    }
    const auto is_help = [](std::string_view arg) { return arg == "--help" || arg == "-h"; };
    const std::string_view first = args.front();
    if (is_help(first) || first == "help") {
        // "help COMMAND [SUBCOMMAND]" is "COMMAND [SUBCOMMAND] --help".
        if (first == "help" && args.size() > 1) {
            std::vector<std::string_view> asked(args.begin() + 1, args.end());
            asked.emplace_back("--help");
            return execute(asked, in, live);
        }
        return usage();
    }
    if (first == "--version") {
        if (args.size() > 1) {
            usage_error("unexpected argument " + quote(args[1]));
        }
        return version_line();
    }
    // A two-word command ("snapshot create") is named by its first two arguments.
    std::string name(first);
    std::size_t words = 1;
    if (const auto subcommands = subcommands_of(first); !subcommands.empty()) {  // also one argument
        if (args.size() < 2 || args[1].substr(0, 2) == "--" || is_help(args[1])) {
            if (std::any_of(args.begin(), args.end(), is_help)) {
                return family_help(first);
            }
            usage_error(std::string(first) + " needs a subcommand: " + std::string(subcommands));
        }
        name += " " + std::string(args[1]);
        words = 2;
    }
    return visit_entry(commands{}, command_choice.parse(name), [&]<class C>(std::type_identity<C>) {
        std::vector<option_spec> known{{"help", "", "this help"}};
        for_each_in(C::options(), [&](const auto& o) { known.push_back(o.spec); });
        const auto strategy = all_strategy_options(C::strategy_options);
        known.insert(known.end(), strategy.begin(), strategy.end());
        // --help anywhere after the command wins over everything else on the line.
        if (std::any_of(args.begin() + static_cast<std::ptrdiff_t>(words), args.end(), is_help)) {
            return command_help<C>();
        }
        std::vector<std::string> storage;
        const auto rest = with_positionals<C>(args.subspan(words), storage);
        const parsed_args a(rest, known);
        if constexpr (requires { &C::run_live; }) {
            if (live.out != nullptr && live.err != nullptr) {
                return C::run_live(a, in, live);
            }
            std::ostringstream out;
            std::ostringstream err;
            const std::string tail = C::run_live(a, in, live_streams{&out, &err, live.stream});
            return out.str() + tail;
        } else {
            return C::run(a, in);
        }
    });
}

}  // namespace keyplace_cli

#endif
