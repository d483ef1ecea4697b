// keyplace-cli registry: one entry per hash function and per strategy, each a type with its
// name, one line of help, the options it takes and how to build it. Usage, help, option checks
// and dispatch are generated from the lists at the end of each section; every call into the
// library's build functions is in an entry's build().
#ifndef KEYPLACE_EXAMPLES_CLI_REGISTRY_HPP_INCLUDED
#define KEYPLACE_EXAMPLES_CLI_REGISTRY_HPP_INCLUDED

#include "args.hpp"
#include "output.hpp"
#include "spec.hpp"

#include <keyplace/keyplace.hpp>
#include <keyplace/anchor.hpp>
#include <keyplace/memento.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/token_allocation.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace keyplace_cli {

// ---- lists of entries -------------------------------------------------------------------

/// A compile-time list of registry entries: types with static name and help.
template <class... E>
struct entry_list {};

template <class... E>
auto entry_names(entry_list<E...>) -> std::vector<std::string_view> {
    return {E::name...};
}

/// Calls f(std::type_identity<E>{}) for every entry E, in order.
template <class... E, class F>
void for_each_entry(entry_list<E...>, F&& f) {
    (f(std::type_identity<E>{}), ...);
}

/// f(std::type_identity<E>{}) for the index-th entry E (index < the list's size).
template <class... E, class F>
auto visit_entry(entry_list<E...>, std::size_t index, F&& f) {
    using result = std::common_type_t<decltype(f(std::type_identity<E>{}))...>;
    std::optional<result> out;
    std::size_t i = 0;
    (void)((i++ == index && (out.emplace(f(std::type_identity<E>{})), true)) || ...);
    return std::move(out).value();
}

/// --NAME X: an entry of List by its name; without spec.required, the first is the default.
/// A command's own choice (no owner) fails as "unknown NOUN 'x' (known: ...)", a strategy's
/// as "--NAME 'x' is not NOUN of OWNER (...)".
template <class List>
struct choice_option {
    using list = List;

    option_spec spec;
    std::string_view noun;
    std::string_view owner{};

    [[nodiscard]] auto parse(std::string_view v) const -> std::size_t {
        const auto names = entry_names(List{});
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (names[i] == v) {
                return i;
            }
        }
        if (owner.empty()) {
            usage_error("unknown " + std::string(noun) + " " + quote(v) + " (known: " + join(names, ", ", ", ") + ")");
        }
        usage_error("--" + std::string(spec.name) + " " + quote(v) + " is not " + std::string(noun) + " of " +
                    std::string(owner) + " (" + join(names, ", ", ", ") + ")");
    }
    /// The index of the entry given, or of the default.
    [[nodiscard]] auto get(const parsed_args& a) const -> std::size_t {
        const auto v = a.get(spec);
        return v ? parse(*v) : 0;
    }
    /// f(std::type_identity<E>{}) for the entry chosen.
    template <class F>
    auto visit(const parsed_args& a, F&& f) const {
        return visit_entry(List{}, get(a), std::forward<F>(f));
    }
    template <class E>
    [[nodiscard]] auto is(const parsed_args& a) const -> bool {
        return visit(a, [](auto chosen) { return std::is_same_v<typename decltype(chosen)::type, E>; });
    }
    [[nodiscard]] auto default_text() const -> std::string {
        return spec.required ? "" : std::string(entry_names(List{}).front());
    }
    [[nodiscard]] auto describe() const -> std::string {
        return spec.required ? std::string(spec.help)
                             : with_default(std::string(spec.help) + ": " + join(entry_names(List{}), ", ", " or "),
                                            default_text());
    }
};

// ---- hash functions (hash --function F) -----------------------------------------------------
// digest(key) is the line hash prints; function, where present, is the hasher a strategy
// can take as its key hash.

struct xxh3_hash {
    static constexpr std::string_view name = "xxh3";
    static constexpr std::string_view help = "XXH3-64, 16 hex digits as xxhsum prints them";
    static auto digest(std::string_view key) -> std::string { return hex64(keyplace::xxh3{}(key)); }
};

struct xxh64_hash {
    static constexpr std::string_view name = "xxh64";
    static constexpr std::string_view help = "XXH64 with seed 0, 16 hex digits";
    static auto digest(std::string_view key) -> std::string { return hex64(keyplace::xxh64{}(key)); }
};

struct md5_ketama_hash {
    static constexpr std::string_view name = "md5-ketama";
    static constexpr std::string_view help = "memcached clients' 32-bit MD5 key hash, decimal";
    using function = keyplace::compat::md5_ketama;
    static auto digest(std::string_view key) -> std::string { return std::to_string(function{}(key)); }
};

struct one_at_a_time_hash {
    static constexpr std::string_view name = "one-at-a-time";
    static constexpr std::string_view help = "Jenkins' one-at-a-time as libhashkit computes it, decimal";
    using function = keyplace::compat::one_at_a_time;
    static auto digest(std::string_view key) -> std::string { return std::to_string(function{}(key)); }
};

struct crc16_redis_hash {
    static constexpr std::string_view name = "crc16-redis";
    static constexpr std::string_view help = "the Redis Cluster slot (CRC-16/XMODEM of the hash tag), decimal";
    static auto digest(std::string_view key) -> std::string {
        return std::to_string(keyplace::compat::redis_slot(key));
    }
};

struct murmur3_cassandra_hash {
    static constexpr std::string_view name = "murmur3-cassandra";
    static constexpr std::string_view help = "the signed Murmur3Partitioner token of the line's bytes (a text key)";
    static auto digest(std::string_view key) -> std::string {
        return std::to_string(keyplace::compat::cassandra_token(keyplace::key_bytes(key)));
    }
};

struct murmur2_envoy_hash {
    static constexpr std::string_view name = "murmur2-envoy";
    static constexpr std::string_view help =
        "Envoy's MURMUR_HASH_2 (libstdc++ std::hash<std::string>), unsigned decimal";
    static auto digest(std::string_view key) -> std::string {
        return std::to_string(keyplace::compat::murmur2_64{}(key));
    }
};

using hash_functions = entry_list<xxh3_hash, xxh64_hash, md5_ketama_hash, one_at_a_time_hash, crc16_redis_hash,
                                  murmur3_cassandra_hash, murmur2_envoy_hash>;

// ---- strategies (--strategy S) --------------------------------------------------------------
// An entry has name, help and build(args, SPEC) returning the built strategy (or a variant
// of the types its options choose between). Optional: options() and replica_options() (locate
// only), tuples of pointers to the options it takes; spec_help, when its SPEC entries are not
// plain nodes; signed_points, when --prehashed lines are signed; max_point, when its points
// are narrower than their type; replicas(strategy, args), a replica rule of its own.

/// How one key's copies are chosen: place(point, out) writes at most width node indices into
/// out and says how many; a replica placer also has a summary of how well it spreads them.
struct replica_rule {
    std::size_t width = 0;
    std::function<keyplace::replica_result(std::uint64_t, std::span<keyplace::node_index>)> place;
    std::optional<replica_summary> summary{};
};

struct ring_entry {
    static constexpr std::string_view name = "ring";
    static constexpr std::string_view help = "a consistent hash ring (Karger et al.)";
    static constexpr number_option<std::uint32_t> vnodes{
        {"vnodes", "V", "ring points per unit of weight"}, keyplace::ring_config{}.vnodes, 1,
        static_cast<std::uint32_t>(keyplace::ring_max_points)};
    static constexpr auto options() { return std::tuple{&vnodes}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::ring_config config;
        config.vnodes = vnodes.get(a);
        return keyplace::ring::build(parse_spec(nodes), config);
    }
};

struct rendezvous_entry {
    static constexpr std::string_view name = "rendezvous";
    static constexpr std::string_view help = "weighted rendezvous (highest random weight) hashing";
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::rendezvous::build(parse_spec(nodes));
    }
};

struct jump_entry {
    static constexpr std::string_view name = "jump";
    static constexpr std::string_view help =
        "jump consistent hash (Lamping & Veach), buckets in the order given, weight 1";
    static auto build(const parsed_args&, const std::string& nodes) { return keyplace::jump::build(parse_spec(nodes)); }
};

struct jumpback_entry {
    static constexpr std::string_view name = "jumpback";
    static constexpr std::string_view help =
        "JumpBackHash (Ertl), hash4j's jumpBackHash: jump's contract in constant time, buckets in the order given";
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::jumpback::build(parse_spec(nodes));
    }
};

struct jump_guava_entry {
    static constexpr std::string_view name = "jump-guava";
    static constexpr std::string_view help = "jump hash in Guava 31.1's arithmetic (Hashing.consistentHash)";
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::jump_guava::build(parse_spec(nodes));
    }
};

struct maglev_entry {
    static constexpr std::string_view name = "maglev";
    static constexpr std::string_view help = "a Maglev lookup table (Eisenbud et al.)";
    static constexpr number_option<std::uint64_t> table_size{{"table-size", "M", "table entries, a prime"},
                                                             keyplace::maglev_config{}.table_size};
    static constexpr auto options() { return std::tuple{&table_size}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::maglev_config config;
        config.table_size = table_size.get(a);
        return keyplace::maglev::build(parse_spec(nodes), config);
    }
};

struct modulo_entry {
    static constexpr std::string_view name = "modulo";
    static constexpr std::string_view help = "hash mod N, the baseline";
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::modulo::build(parse_spec(nodes));
    }
};

inline constexpr std::string_view envoy_spec_help =
    "ids are the strings Envoy hashes (ip:port), weights whole numbers; keys hashed with XXH64";

struct envoy_ring_entry {
    static constexpr std::string_view name = "envoy-ring";
    static constexpr std::string_view help = "Envoy's RING_HASH load balancer";
    static constexpr std::string_view spec_help = envoy_spec_help;
    static constexpr number_option<std::uint64_t> min_ring_size{
        {"min-ring-size", "N", "the least ring entries"}, keyplace::compat::envoy_ring_hash_config{}.min_ring_size};
    static constexpr number_option<std::uint64_t> max_ring_size{
        {"max-ring-size", "N", "the most ring entries"}, keyplace::compat::envoy_ring_hash_config{}.max_ring_size};
    static constexpr choice_option<entry_list<xxh64_hash, murmur2_envoy_hash>> entry_hash{
        {"hash", "H", "the hash of the ring entries"}, "an entry hash", name};
    static constexpr auto options() { return std::tuple{&min_ring_size, &max_ring_size, &entry_hash}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::compat::envoy_ring_hash_config config;
        config.min_ring_size = min_ring_size.get(a);
        config.max_ring_size = max_ring_size.get(a);
        config.hash_function = entry_hash.is<murmur2_envoy_hash>(a)
                                   ? keyplace::compat::envoy_hash_function::murmur_hash_2
                                   : keyplace::compat::envoy_hash_function::xx_hash;
        return keyplace::compat::envoy_ring_hash::build(parse_spec(nodes), config);
    }
};

struct envoy_maglev_entry {
    static constexpr std::string_view name = "envoy-maglev";
    static constexpr std::string_view help = "Envoy's MAGLEV load balancer";
    static constexpr std::string_view spec_help = envoy_spec_help;
    static constexpr number_option<std::uint64_t> table_size{
        {"table-size", "M", "table entries, a prime up to Envoy's limit"},
        keyplace::compat::envoy_maglev_config{}.table_size};
    static constexpr auto options() { return std::tuple{&table_size}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::compat::envoy_maglev_config config;
        config.table_size = table_size.get(a);
        return keyplace::compat::envoy_maglev::build(parse_spec(nodes), config);
    }
};

inline constexpr std::string_view ketama_spec_help =
    "ids are server addresses host[:port] (the port defaults to 11211), weights whole numbers";

struct ketama_entry {
    static constexpr std::string_view name = "ketama";
    static constexpr std::string_view help = "libmemcached KETAMA_WEIGHTED (pylibmc ketama_weighted, PHP memcached)";
    static constexpr std::string_view spec_help = ketama_spec_help;
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libmemcached_weighted,
                                              ketama_servers(nodes));
    }
};

struct ketama_spy_entry {
    static constexpr std::string_view name = "ketama-spy";
    static constexpr std::string_view help = "libmemcached KETAMA_SPY: spymemcached's point strings";
    static constexpr std::string_view spec_help = ketama_spec_help;
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libmemcached_spy,
                                              ketama_servers(nodes));
    }
};

/// One continuum type per key hash.
template <class... H>
auto ketama_rings(entry_list<H...>) -> std::variant<keyplace::compat::ketama_ring<typename H::function>...>;

struct ketama_unweighted_entry {
    using key_hashes = entry_list<one_at_a_time_hash, md5_ketama_hash>;
    static constexpr std::string_view name = "ketama-unweighted";
    static constexpr std::string_view help = "libmemcached KETAMA without weights, 100 points per server";
    static constexpr std::string_view spec_help = ketama_spec_help;
    static constexpr choice_option<key_hashes> key_hash{
        {"hash", "H", "the key hash, which also hashes the point strings"}, "a key hash", name};
    static constexpr auto options() { return std::tuple{&key_hash}; }
    using built = decltype(ketama_rings(key_hashes{}));
    static auto build(const parsed_args& a, const std::string& nodes) -> built {
        const auto servers = ketama_servers(nodes);
        return key_hash.visit(a, [&]<class H>(std::type_identity<H>) -> built {
            return keyplace::compat::build_ketama<typename H::function>(
                keyplace::compat::ketama_dialect::libmemcached_unweighted, servers);
        });
    }
};

struct libketama_entry {
    static constexpr std::string_view name = "libketama";
    static constexpr std::string_view help = "last.fm libketama: addresses hashed as written";
    static constexpr std::string_view spec_help = ketama_spec_help;
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::libketama, ketama_servers(nodes));
    }
};

struct python_hash_ring_entry {
    static constexpr std::string_view name = "hash-ring";
    static constexpr std::string_view help = "Python hash_ring (and npm hashring's hash_ring mode): bisect_right lookup";
    static constexpr std::string_view spec_help = "ids are node names hashed as written, weights whole numbers";
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::compat::build_ketama(keyplace::compat::ketama_dialect::python_hash_ring,
                                              ketama_servers(nodes));
    }
};

/// --replication RF | DC:RF[,DC:RF...]: SimpleStrategy's factor, or NetworkTopologyStrategy's
/// per datacenter.
struct replication_option {
    option_spec spec;

    struct factors {
        std::optional<std::uint32_t> simple;
        std::vector<keyplace::compat::dc_replication> by_dc;
    };

    [[nodiscard]] auto parse(std::string_view v) const -> factors {
        factors f;
        const std::string option = "--" + std::string(spec.name) + " ";
        if (v.find(':') == std::string_view::npos) {
            f.simple = parse_unsigned<std::uint32_t>(v);
            if (!f.simple || *f.simple == 0) {
                usage_error(option + quote(v) + " is not RF (a positive integer) or DC:RF[,DC:RF...]");
            }
            return f;
        }
        for (const auto part : split(v, ',')) {
            const auto colon = part.rfind(':');
            const auto rf =
                colon == std::string_view::npos ? std::nullopt : parse_unsigned<std::uint32_t>(part.substr(colon + 1));
            if (!rf || colon == 0) {
                usage_error(option + "entry " + quote(part) + " is not DC:RF");
            }
            f.by_dc.push_back({std::string(part.substr(0, colon)), *rf});
        }
        return f;
    }
    /// The factors given, or nothing.
    [[nodiscard]] auto find(const parsed_args& a) const -> std::optional<factors> {
        const auto v = a.get(spec);
        return v ? std::optional<factors>(parse(*v)) : std::nullopt;
    }
    [[nodiscard]] auto default_text() const -> std::string { return ""; }
    [[nodiscard]] auto describe() const -> std::string { return std::string(spec.help); }
};

struct cassandra_entry {
    static constexpr std::string_view name = "cassandra";
    static constexpr std::string_view help = "Cassandra's token ring (Murmur3Partitioner), keys hashed as text";
    static constexpr std::string_view spec_help =
        "ID=TOKEN[;TOKEN...][@DC[/RACK]] (DC/RACK by default datacenter1/rack1); --prehashed: signed tokens";
    static constexpr bool signed_points = true;
    static constexpr replication_option replication{
        {"replication", "RF|DC:RF,...", "SimpleStrategy's RF, or NetworkTopologyStrategy's per datacenter"}};
    static constexpr auto replica_options() { return std::tuple{&replication}; }
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::compat::cassandra_ring::build(parse_entries(nodes, parse_cassandra_node));
    }
    /// The replicas --replication lists, or nothing without it. Cassandra takes an RF above the
    /// node count: a key then has every node once.
    static auto replicas(const keyplace::compat::cassandra_ring& ring, const parsed_args& a)
        -> std::optional<replica_rule> {
        const auto f = replication.find(a);
        if (!f) {
            return std::nullopt;
        }
        if (f->simple) {
            const std::uint32_t rf = *f->simple;
            return replica_rule{
                std::min<std::size_t>(rf, ring.size()),
                [&ring, rf](std::uint64_t p, std::span<keyplace::node_index> out) {
                    return keyplace::replica_result{ring.simple_strategy(static_cast<std::int64_t>(p), rf, out)};
                }};
        }
        auto plan = ring.network_topology(f->by_dc);
        const auto width = plan.replica_count();
        return replica_rule{width,
                            [&ring, plan = std::move(plan)](std::uint64_t p, std::span<keyplace::node_index> out) {
                                return keyplace::replica_result{
                                    ring.network_topology_replicas(static_cast<std::int64_t>(p), plan, out)};
                            }};
    }
};

struct redis_entry {
    static constexpr std::string_view name = "redis";
    static constexpr std::string_view help = "Redis Cluster's slot map, keys hashed to slots as the server does";
    static constexpr std::string_view spec_help =
        "ID=FIRST-LAST[;FIRST-LAST...] (slot ranges; ID= holds none), or ids alone for an even split";
    static constexpr std::uint64_t max_point = keyplace::compat::redis_slot_count - 1;
    static auto build(const parsed_args&, const std::string& nodes) {
        const auto spec = parse_redis_spec(nodes);
        return !spec.explicit_ranges ? keyplace::compat::redis_cluster::build_even(spec.nodes)
                                   : keyplace::compat::redis_cluster::build(spec.nodes, spec.ranges);
    }
};

struct tokens_entry {
    static constexpr std::string_view name = "tokens";
    static constexpr std::string_view help =
        "a ring of chosen 64-bit tokens (as allocate proposes them), keys hashed with XXH3";
    static constexpr std::string_view spec_help =
        "ID=TOKEN[;TOKEN...][@REGION[/ZONE[/RACK]]] (unsigned decimal tokens, distinct)";
    static auto build(const parsed_args&, const std::string& nodes) {
        const auto holders = parse_entries(nodes, parse_token_node);
        std::vector<keyplace::node> members;
        std::vector<keyplace::ring_point<std::uint64_t>> points;
        for (std::size_t i = 0; i < holders.size(); ++i) {
            members.push_back(holders[i].member);
            for (const auto t : holders[i].tokens) {
                points.push_back({t, static_cast<std::uint32_t>(i)});
            }
        }
        auto ring = keyplace::token_ring::build(members, keyplace::compat::given_points<std::uint64_t>(std::move(points)));
        if (auto f = keyplace::compat::check_chosen_points(ring)) {
            throw keyplace::error(f);
        }
        return ring;
    }
};

struct partitions_entry {
    static constexpr std::string_view name = "partitions";
    static constexpr std::string_view help =
        "Q equal partitions of the hash space claimed by quota (with --replicas N --spread L: N per partition)";
    static constexpr number_option<std::uint32_t> partitions{
        {"partitions", "Q", "partitions, a power of two"}, keyplace::partitions_config{}.partitions, 1};
    // No range here: the library refuses a contract it does not implement, naming the ones it does.
    static constexpr number_option<std::uint32_t> contract{
        {"contract", "C", "the partitions claim rules: 2 (domain limits, the default) or 1 (the first release's)"},
        keyplace::partitions_config{}.contract};
    static constexpr auto options() { return std::tuple{&partitions, &contract}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::partitions_config config;
        config.partitions = partitions.get(a);
        config.contract = contract.get(a);
        // locate's --replicas and --spread shape the table itself: each partition's replicas.
        if (const auto n = a.get(option_spec{"replicas", "N", ""})) {
            config.replicas = parse_unsigned<std::uint32_t>(*n).value_or(0);
        }
        if (const auto level = a.get(option_spec{"spread", "LEVEL", ""})) {
            config.spread = keyplace::parse_failure_domain(*level).value_or(config.spread);
        }
        return keyplace::partitions::build(parse_spec(nodes), config);
    }
    /// diff's after state: the before table transitioned to the new members (the table is state).
    static auto derive(const keyplace::partitions& before, const parsed_args&, const std::string& nodes) {
        return before.transitioned(parse_spec(nodes));
    }
};

inline constexpr number_option<std::uint32_t> probes_option{
    {"probes", "K", "probes per key"}, keyplace::multiprobe_config{}.probes, 1, keyplace::multiprobe_max_probes};

struct multiprobe_entry {
    static constexpr std::string_view name = "multiprobe";
    static constexpr std::string_view help = "multi-probe consistent hashing (Appleton & O'Reilly), weight 1";
    static constexpr auto options() { return std::tuple{&probes_option}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::multiprobe_config config;
        config.probes = probes_option.get(a);
        return keyplace::multiprobe::build(parse_spec(nodes), config);
    }
};

struct mpchash_entry {
    static constexpr std::string_view name = "mpchash";
    static constexpr std::string_view help =
        "go-mpchash (SipHash-2-4), buckets in the order given, weight 1; --prehashed points are H(key, 1)";
    static constexpr auto options() { return std::tuple{&probes_option}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        keyplace::multiprobe_config config;
        config.probes = probes_option.get(a);
        return keyplace::compat::mpchash::build(parse_spec(nodes), config);
    }
};

/// diff's after state for a strategy whose state is its history (anchor, memento): the before
/// value without the ids the after list drops (in before's order), then with the ids it adds
/// (in the after list's order), so removed buckets stay removed and re-adds are LIFO.
template <class S>
auto derive_members(const S& before, const std::string& nodes) -> S {
    const auto after = parse_spec(nodes);
    S out = before;
    for (const auto& n : before.nodes()) {
        const bool kept = std::any_of(after.begin(), after.end(), [&](const keyplace::node& m) { return m.id == n.id; });
        if (!kept) {
            out = out.without(n.id);
        }
    }
    for (const auto& m : after) {
        if (!out.find(m.id)) {
            out = out.with(m);
        }
    }
    return out;
}

struct anchor_entry {
    static constexpr std::string_view name = "anchor";
    static constexpr std::string_view help =
        "AnchorHash (Mendelson et al.): the nodes take buckets 0.. of --capacity A, weight 1; diff derives removals";
    static constexpr number_option<std::uint32_t> capacity{
        {"capacity", "A", "AnchorHash buckets (default: the node count)"}, std::nullopt, 1,
        keyplace::anchor_max_capacity};
    static constexpr auto options() { return std::tuple{&capacity}; }
    static auto build(const parsed_args& a, const std::string& nodes) {
        const auto members = parse_spec(nodes);
        const auto cap = capacity.find(a).value_or(static_cast<std::uint32_t>(members.size()));
        return keyplace::anchor::build(members, keyplace::anchor_config{cap, {}});
    }
    static auto derive(const keyplace::anchor& before, const parsed_args&, const std::string& nodes) {
        return derive_members(before, nodes);
    }
};

struct memento_entry {
    static constexpr std::string_view name = "memento";
    static constexpr std::string_view help =
        "MementoHash (Coluzzi et al.): jump plus a memento of removed buckets, weight 1; diff derives removals";
    static auto build(const parsed_args&, const std::string& nodes) {
        return keyplace::memento::build(parse_spec(nodes));
    }
    static auto derive(const keyplace::memento& before, const parsed_args&, const std::string& nodes) {
        return derive_members(before, nodes);
    }
};

using strategies = entry_list<ring_entry, rendezvous_entry, jump_entry, jump_guava_entry, jumpback_entry, maglev_entry, modulo_entry,
                              envoy_ring_entry, envoy_maglev_entry, ketama_entry, ketama_spy_entry,
                              ketama_unweighted_entry, libketama_entry, python_hash_ring_entry, cassandra_entry,
                              redis_entry, tokens_entry, partitions_entry, multiprobe_entry, mpchash_entry,
                              anchor_entry, memento_entry>;

// ---- what generic code asks of an entry -------------------------------------------------------

/// Which strategy options a command takes: none, those that shape the strategy, or those and
/// the ones that shape replicas (locate).
enum class strategy_use { none, build, locate };

/// Calls f(option) for every option of a tuple of pointers to options.
template <class Options, class F>
void for_each_in(const Options& options, F&& f) {
    std::apply([&](const auto*... o) { (f(*o), ...); }, options);
}

/// Calls f(option) for every option of E a command with this use takes.
template <class E, class F>
void for_each_option(strategy_use use, F&& f) {
    if constexpr (requires { E::options(); }) {
        for_each_in(E::options(), f);
    }
    if constexpr (requires { E::replica_options(); }) {
        if (use == strategy_use::locate) {
            for_each_in(E::replica_options(), f);
        }
    }
}

template <class E>
auto option_specs(strategy_use use) -> std::vector<option_spec> {
    std::vector<option_spec> out;
    for_each_option<E>(use, [&](const auto& o) { out.push_back(o.spec); });
    return out;
}

template <class E>
auto takes_option(std::string_view name, strategy_use use) -> bool {
    for (const auto& s : option_specs<E>(use)) {
        if (s.name == name) {
            return true;
        }
    }
    return false;
}

/// Every strategy option a command with this use accepts on its command line.
inline auto all_strategy_options(strategy_use use) -> std::vector<option_spec> {
    std::vector<option_spec> out;
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        const auto own = option_specs<E>(use);
        out.insert(out.end(), own.begin(), own.end());
    });
    return out;
}

/// What E::build returns: a strategy, or a variant of strategies.
template <class E>
using built_t = decltype(E::build(std::declval<const parsed_args&>(), std::declval<const std::string&>()));

template <class T>
inline constexpr bool is_variant = false;
template <class... S>
inline constexpr bool is_variant<std::variant<S...>> = true;

/// f(strategy) for what E::build returned.
template <class Built, class F>
auto use_built(const Built& built, F&& f) {
    if constexpr (is_variant<Built>) {
        return std::visit(std::forward<F>(f), built);
    } else {
        return f(built);
    }
}

/// f(before, after) for two builds of one entry (the same alternative: the same options chose it).
template <class Built, class F>
auto use_built(const Built& before, const Built& after, F&& f) {
    if constexpr (is_variant<Built>) {
        return std::visit([&](const auto& b) { return f(b, std::get<std::remove_cvref_t<decltype(b)>>(after)); },
                          before);
    } else {
        return f(before, after);
    }
}

template <class T>
inline constexpr bool ordered_built = keyplace::ordered_placement_strategy<T>;
template <class... S>
inline constexpr bool ordered_built<std::variant<S...>> = (keyplace::ordered_placement_strategy<S> && ...);

/// Whether every strategy E builds has a preference order (and so takes --replicas).
template <class E>
inline constexpr bool has_order = ordered_built<built_t<E>>;

inline auto ordered_strategy_names() -> std::vector<std::string_view> {
    std::vector<std::string_view> out;
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        if (has_order<E>) {
            out.push_back(E::name);
        }
    });
    return out;
}

inline constexpr choice_option<strategies> strategy_option{{"strategy", "S", "the placement strategy (below)", true},
                                                           "strategy"};

/// Checks the strategy options given against E: each must be one E takes (else a usage error
/// naming the option, the strategies that take it and E), and its value must parse.
template <class E>
void check_strategy_options(const parsed_args& a, strategy_use use) {
    for (const auto given : a.names()) {
        if (takes_option<E>(given, use)) {
            continue;
        }
        std::vector<std::string_view> takers;
        for_each_entry(strategies{}, [&]<class T>(std::type_identity<T>) {
            if (takes_option<T>(given, use)) {
                takers.push_back(T::name);
            }
        });
        if (!takers.empty()) {
            usage_error("--" + std::string(given) + " applies only to --strategy " + join(takers, ", ", " and ") +
                        ", not to " + std::string(E::name));
        }
    }
    for_each_option<E>(use, [&](const auto& o) {
        if (const auto v = a.get(o.spec)) {
            (void)o.parse(*v);
        }
    });
}

/// f(std::type_identity<E>{}) for the strategy entry E that --strategy names, once the strategy
/// options given are checked against it.
template <class F>
auto with_strategy(const parsed_args& a, strategy_use use, F&& f) {
    return strategy_option.visit(a, [&]<class E>(std::type_identity<E> entry) {
        check_strategy_options<E>(a, use);
        return f(entry);
    });
}

}  // namespace keyplace_cli

#endif
