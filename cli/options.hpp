// keyplace-cli: the options several commands share.
#ifndef KEYPLACE_CLI_OPTIONS_HPP_INCLUDED
#define KEYPLACE_CLI_OPTIONS_HPP_INCLUDED

#include "args.hpp"
#include "registry.hpp"
#include "stream.hpp"

#include <keyplace/hot_keys.hpp>
#include <keyplace/replicas.hpp>
#include <keyplace/spread.hpp>

#include <cstddef>
#include <cstdint>

namespace keyplace_cli {

// ---- command options ------------------------------------------------------------------------

inline constexpr plain_option json_flag{{"json", "", "print one JSON object instead of text"}};
inline constexpr plain_option quiet_flag{{"quiet", "", "no progress on stderr (shown after a second on a terminal)"}};
inline constexpr plain_option nodes_option{{"nodes", "SPEC", "the members (SPEC below)", true}};
inline constexpr plain_option prehashed_flag{
    {"prehashed", "", "each line is an unsigned decimal 64-bit point, used as is"}};
inline constexpr number_option<std::size_t> copies_n_option{
    {copies_name, "N", "N copies per key on distinct nodes (or LEVELs), comma-separated in order"}, std::nullopt, 1};
inline constexpr plain_option spread_option{
    {"spread", "LEVEL", "with --copies: copies in distinct nodes, racks, zones or regions"},
    keyplace::to_string(keyplace::replica_policy{}.spread)};
inline constexpr plain_option shortfall_option{
    {"on-shortfall", "RULE", "with --copies, too few LEVELs: fail, or relax and mark the key ' degraded'"}, "fail"};
inline constexpr plain_option input_keys_option{
    {"keys", "FILE", "read the keys from FILE (one per line, as on stdin) instead of stdin"}};
inline constexpr number_option<std::size_t> spread_reads_option{
    {"spread-reads", "K",
     "hot-key spreading: each read is served by one of the first K nodes of its key's order (1..64), "
     "chosen by --salt; K = 1 is the owner"},
    std::nullopt,
    1,
    keyplace::max_spread_width};
inline constexpr number_option<std::uint64_t> salt_option{
    {"salt", "S", "with --spread-reads: every read's salt (default: its line's index, the first line 0)"}};
inline constexpr plain_option nodes_before_option{{"nodes-before", "SPEC", "the members before the change", true}};
inline constexpr plain_option nodes_after_option{{"nodes-after", "SPEC", "the members after it", true}};
inline constexpr plain_option key_file_option{
    {"keys", "FILE",
     "measure over these keys, one per line (default: over the hash space, exact where the "
     "strategy allows, else over fixed points)"}};
/// The most keys stats places: 800 MB of points, tens of seconds.
inline constexpr std::size_t max_key_count = 100'000'000;
inline constexpr number_option<std::size_t> key_count_option{
    {"key-count", "N", "place the keys \"key-0\" ... \"key-<N-1>\""}, 100'000, 1, max_key_count};
// --keys is a key file in every command; stats measures the load over it instead of key-N.
inline constexpr plain_option stats_key_file_option{
    {"keys", "FILE", "place these keys, one per line, instead of --key-count's"}};
inline constexpr plain_option prehashed_keys_flag{
    {"prehashed", "", "--keys FILE's lines are points, as locate --prehashed reads them"}};
inline constexpr number_option<std::size_t> candidates_option{
    {"candidates", "K", "keep the K keys with the largest estimates"}, 64, 1, keyplace::max_hot_keys};
inline constexpr number_option<std::size_t> top_option{{"top", "N", "print the N hottest"}, 10, 1,
                                                      keyplace::max_hot_keys};
inline constexpr number_option<std::size_t> sketch_width_option{
    {"width", "W", "counters a sketch row, a power of two from 16 to 16777216"}, 4096, 16, std::size_t{1} << 24};
inline constexpr number_option<std::size_t> sketch_depth_option{
    {"depth", "D", "sketch rows (an estimate errs beyond the bound with probability e^-D)"}, 4, 1, 8};
inline constexpr choice_option<hash_functions> function_option{{"function", "F", "the hash function (below)", true},
                                                               "hash function"};

/// How a command shows progress: as run() was told, unless --quiet.
inline auto progress_mode_of(const parsed_args& a, const live_streams& io) -> progress_mode {
    return a.has(quiet_flag.spec) ? progress_mode::off : io.stream.progress;
}

}  // namespace keyplace_cli

#endif
