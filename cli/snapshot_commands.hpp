// keyplace-cli's snapshot commands as the command table sees them: their options and entries
// (snapshot create / next / verify / diff, shadow, plan, what-if, metrics). Their bodies read and write snapshot
// documents (snapshot_impl.hpp, with nlohmann_json) and are compiled in snapshot.cpp; a build
// without them still lists them, and running one says how to build it (components.hpp).
#ifndef KEYPLACE_CLI_SNAPSHOT_COMMANDS_HPP_INCLUDED
#define KEYPLACE_CLI_SNAPSHOT_COMMANDS_HPP_INCLUDED

#include "args.hpp"
#include "components.hpp"
#include "options.hpp"
#include "registry.hpp"

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <tuple>

namespace keyplace_cli {

inline constexpr plain_option cluster_option{{"cluster", "NAME", "the cluster the snapshot belongs to", true}};
inline constexpr number_option<std::uint64_t> epoch_option{{"epoch", "E", "the snapshot's epoch"}, 1, 1};
inline constexpr number_option<std::uint64_t> parent_epoch_option{
    {"parent-epoch", "P", "the epoch it follows (default: epoch - 1)"}};
inline constexpr plain_option states_option{
    {"states", "ID=STATE,...", "node states: joining, active, leaving, read_only or left (default active)"}};
inline constexpr plain_option addresses_option{
    {"addresses", "ID=ADDRESS,...", "where to connect to each node (never hashed)"}};
inline constexpr number_option<std::size_t> copies_option{
    {"copies", "N", "copies per key over the preference order (replica_placer)"}, std::nullopt, 1};
inline constexpr plain_option copies_spread_option{
    {"spread", "LEVEL", "with --copies: distinct nodes, racks, zones or regions"}, "node"};
inline constexpr plain_option copies_shortfall_option{
    {"on-shortfall", "RULE", "with --copies: fewer LEVELs than copies: fail, or relax (best effort)"}, "fail"};
inline constexpr plain_option reason_option{{"reason", "TEXT", "why (metadata, never hashed)"}};
inline constexpr plain_option author_option{{"author", "TEXT", "who (metadata, never hashed)"}};
inline constexpr number_option<std::uint64_t> created_option{
    {"created-ms", "T", "when, in ms since the epoch (metadata, never hashed)"}};
inline constexpr plain_option file_option{{"snapshot", "FILE", "a snapshot document (also the first argument)", true}};
inline constexpr plain_option before_file_option{
    {"before", "FILE", "the snapshot before (also the first argument)", true}};
inline constexpr plain_option after_file_option{
    {"after", "FILE", "the snapshot after (also the second argument)", true}};
inline constexpr plain_option snapshot_option{
    {"snapshot", "FILE", "place under this snapshot document instead of --strategy and --nodes"}};
inline constexpr plain_option write_set_flag{
    {"write-set", "", "with --snapshot: every node a write must reach (now, then after the transition)"}};
inline constexpr number_option<std::uint32_t> sample_option{
    {"sample-per-million", "R", "keys sampled per million, by key hash"}, 1'000'000, 0, 1'000'000};
inline constexpr number_option<std::size_t> max_ranges_option{
    {"max-ranges", "N", "text output: list at most N ranges"}, 20, 0};

inline constexpr plain_option override_option{
    {"override", "KEY=ID,...", "place each KEY on node ID whatever the strategy says (the snapshot's overrides)"}};
inline constexpr plain_option drop_override_option{
    {"drop-override", "KEY,...", "remove these keys' overrides (before --override applies)"}};

inline constexpr plain_option complete_flag{
    {"complete", "", "complete the snapshot's transition: every joining node active, every leaving node left"}};
inline constexpr plain_option new_weights_option{
    {"weights", "ID=W,...", "new node weights (a partition table is claimed again for them)"}};
inline constexpr plain_option add_nodes_option{
    {"add", "SPEC", "nodes to add, in the strategy's SPEC form (joining unless --states says otherwise)"}};

inline constexpr number_option<std::size_t> ramp_steps_option{
    {"steps", "N", "the ramp's epochs (1 to 1000)"}, std::nullopt, 1, 1000};
inline constexpr plain_option ramp_max_moved_option{
    {"max-moved", "F", "instead of --steps: the most one epoch may move, a fraction (0.05) or a percentage (5%)"}};
inline constexpr plain_option ramp_announce_flag{
    {"announce", "", "begin with an epoch announcing the change (the node joining or leaving), the ramp one epoch later"}};
inline constexpr plain_option ramp_out_option{
    {"out", "DIR", "write each epoch's document to DIR/epoch-E.json (DIR must exist)"}};

inline constexpr plain_option rollback_from_option{
    {"from", "FILE", "the epoch to roll back from: a ramp step, a transition, a completed change (also the first argument)",
     true}};
inline constexpr plain_option rollback_to_option{
    {"to", "FILE", "the settled snapshot whose placement to return to (also the second argument)", true}};
inline constexpr number_option<std::size_t> rollback_steps_option{
    {"steps", "N", "return in N epochs, ramped back (default 1: one epoch)"}, 1, 1, 1000};

inline constexpr plain_option lose_option{
    {"lose", "LEVEL=NAME,...", "what is lost: region=, zone= or rack= and their names, or nodes= and node ids", true}};

inline constexpr plain_option hot_keys_flag{
    {"hot-keys", "", "also the hot keys of the key stream on stdin (one request a line; a default summary, its top 10)"}};

inline constexpr plain_option contact_key_option{{"key", "K", "the key to read or write", true}};
inline constexpr plain_option level_option{
    {"level", "L", "ONE, QUORUM, ALL, LOCAL_QUORUM or EACH_QUORUM (any case)"}, "QUORUM"};
inline constexpr plain_option zone_option{{"zone", "Z", "the caller's zone: its copies are asked first (LOCAL_QUORUM: only)"}};
inline constexpr plain_option op_option{{"op", "read|write", "the operation"}, "read"};
inline constexpr plain_option down_option{{"down", "ID,...", "nodes that are down: not contacted"}};
inline constexpr plain_option read_only_option{
    {"read-only", "ID,...", "nodes that answer reads only (a write sends them the invalidation)"}};
inline constexpr plain_option all_copies_flag{{"all-copies", "", "a read contacts every copy at once, not only as many as needed"}};

inline constexpr plain_option tenant_option{
    {"tenant", "T[,T...]", "the tenant, or several assigned in order (with --max-overlap)", true}};
inline constexpr number_option<std::size_t> shard_size_option{{"size", "K", "nodes in a shard", true}, std::nullopt, 1};
inline constexpr number_option<std::size_t> max_overlap_option{
    {"max-overlap", "M", "no two tenants' shards share more than M nodes (tenants assigned in the order given)"},
    std::nullopt};

// ---- the commands -------------------------------------------------------------------------------

struct snapshot_create_command {
    static constexpr std::string_view name = "snapshot create";
    static constexpr std::string_view help = "a snapshot document (JSON) from a strategy and its nodes";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::build;
    static constexpr auto options() {
        return std::tuple{&strategy_option, &nodes_option, &cluster_option, &epoch_option,
                          &parent_epoch_option, &states_option, &addresses_option, &copies_option,
                          &copies_spread_option, &copies_shortfall_option, &reason_option, &author_option,
                          &created_option, &json_flag,
                          &override_option};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct snapshot_next_command {
    static constexpr std::string_view name = "snapshot next";
    static constexpr std::string_view help =
        "the next epoch of a snapshot: nodes added (joining), states and overrides changed; a partition table carried";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() {
        return std::tuple{&file_option,        &complete_flag, &add_nodes_option, &states_option,
                          &addresses_option,   &new_weights_option, &reason_option,
                          &author_option, &created_option, &override_option, &drop_override_option};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct snapshot_verify_command {
    static constexpr std::string_view name = "snapshot verify";
    static constexpr std::string_view help = "validates a snapshot document; prints its epoch and both digests";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() { return std::tuple{&file_option, &json_flag}; }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct snapshot_diff_command {
    static constexpr std::string_view name = "snapshot diff";
    static constexpr std::string_view help = "what moves between two snapshots, exactly where possible, and the plan";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&before_file_option, &after_file_option};
    static constexpr auto options() {
        return std::tuple{&before_file_option, &after_file_option, &max_ranges_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct snapshot_ramp_command {
    static constexpr std::string_view name = "snapshot ramp";
    static constexpr std::string_view help =
        "a chain of epochs that moves one node's share in steps (a ramped join, leave or reweight)";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&before_file_option, &after_file_option};
    static constexpr auto options() {
        return std::tuple{&before_file_option, &after_file_option, &ramp_steps_option, &ramp_max_moved_option,
                          &ramp_announce_flag, &ramp_out_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct snapshot_rollback_command {
    static constexpr std::string_view name = "snapshot rollback";
    static constexpr std::string_view help =
        "the epochs that return to an earlier placement, and which copies to invalidate and to drop";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&rollback_from_option, &rollback_to_option};
    static constexpr auto options() {
        return std::tuple{&rollback_from_option, &rollback_to_option, &rollback_steps_option, &ramp_max_moved_option,
                          &ramp_out_option,      &max_ranges_option,  &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct shadow_command {
    static constexpr std::string_view name = "shadow";
    static constexpr std::string_view help = "the keys on stdin (one request a line) under two snapshots";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&before_file_option, &after_file_option};
    static constexpr auto options() {
        return std::tuple{&before_file_option, &after_file_option, &sample_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream& in) -> std::string;
};

struct what_if_command {
    static constexpr std::string_view name = "what-if";
    static constexpr std::string_view help =
        "a snapshot losing zones, racks or nodes: survivors' loads, keys left with 0 or 1 copy, what moves";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() { return std::tuple{&file_option, &lose_option, &json_flag}; }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct contact_command {
    static constexpr std::string_view name = "contact";
    static constexpr std::string_view help =
        "whom to ask for a key: the copies to contact first and then, the answers a consistency level needs";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() {
        return std::tuple{&file_option, &contact_key_option, &level_option,    &zone_option,   &op_option,
                          &down_option, &read_only_option,   &all_copies_flag, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct shard_command {
    static constexpr std::string_view name = "shard";
    static constexpr std::string_view help = "a tenant's shuffle shard: K active nodes spread evenly over zones";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() {
        return std::tuple{&file_option, &tenant_option, &shard_size_option, &max_overlap_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct metrics_command {
    static constexpr std::string_view name = "metrics";
    static constexpr std::string_view help = "a snapshot's members and exact ownership as Prometheus metrics (text format)";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() { return std::tuple{&file_option, &hot_keys_flag}; }
    static auto run(const parsed_args& a, std::istream& in) -> std::string;
};

struct plan_command {
    static constexpr std::string_view name = "plan";
    static constexpr std::string_view help =
        "the ranges (or partitions) whose copies change between two snapshots";
    static constexpr component needs = component::snapshots;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&before_file_option, &after_file_option};
    static constexpr auto options() {
        return std::tuple{&before_file_option, &after_file_option, &max_ranges_option, &json_flag};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};
}  // namespace keyplace_cli

#endif
