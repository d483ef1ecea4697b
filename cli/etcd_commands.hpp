// keyplace-cli's etcd commands as the command table sees them: their options and entries (etcd
// publish / current / watch / status). Their bodies need the keyplace::etcd component
// (etcd_impl.hpp) and are compiled in etcd.cpp; a build without it still lists them, and running
// one says how to build it (components.hpp).
#ifndef KEYPLACE_CLI_ETCD_COMMANDS_HPP_INCLUDED
#define KEYPLACE_CLI_ETCD_COMMANDS_HPP_INCLUDED

#include "args.hpp"
#include "components.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "snapshot_commands.hpp"
#include "stream.hpp"

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <tuple>

namespace keyplace_cli {

/// etcd status: two clients report one epoch with different fingerprints.
inline constexpr int exit_disagreement = 3;

inline constexpr plain_option endpoints_option{
    {"endpoints", "URL,...",
     "etcd's client URLs, e.g. https://10.0.0.1:2379,https://10.0.0.2:2379 (tried in turn: failover)", true}};
inline constexpr plain_option etcd_cluster_option{{"cluster", "NAME", "the cluster, /keyplace/NAME/ in etcd", true}};
inline constexpr plain_option client_id_option{
    {"client-id", "ID", "this watcher's id under clients/ (default keyplace-cli-HOST-PID)"}};
inline constexpr number_option<std::uint64_t> watch_count_option{
    {"count", "N", "stop after N adopted snapshots (default: run until SIGINT or SIGTERM)"}, std::nullopt, 1};
inline constexpr number_option<std::uint32_t> lease_ttl_option{
    {"lease-ttl", "SECONDS", "the report's lease: it disappears this long after the watcher dies"}, 10, 1, 3600};
inline constexpr plain_option cache_option{
    {"cache", "FILE",
     "keep the last adopted snapshot in FILE, and start from it when etcd is unreachable (no older epoch is "
     "adopted after it)"}};
inline constexpr plain_option cacert_option{
    {"cacert", "FILE", "verify etcd's certificate with this CA bundle (PEM; default: the system's CAs)"}};
inline constexpr plain_option cert_option{{"cert", "FILE", "this client's TLS certificate (PEM; needs --key)"}};
inline constexpr plain_option key_option{{"key", "FILE", "the private key of --cert (PEM)"}};
inline constexpr plain_option user_option{
    {"user", "NAME[:PASSWORD]",
     "etcd authentication; without :PASSWORD, the password is --password-file's or $KEYPLACE_ETCD_PASSWORD"}};
inline constexpr plain_option password_file_option{
    {"password-file", "FILE", "--user's password: the file's first line"}};
inline constexpr plain_option ramp_dir_option{
    {"dir", "DIR", "the ramp's documents, DIR/epoch-E.json (keyplace-cli snapshot ramp --out DIR)", true}};
inline constexpr number_option<std::size_t> ramp_clients_option{
    {"clients", "N", "wait for at least N reporting clients, every one on each epoch, before the next"}, 1, 1};
inline constexpr number_option<std::uint32_t> ramp_timeout_option{
    {"timeout", "SECONDS", "stop (exit 1) when the clients have not adopted an epoch within this"}, 60, 1, 86400};
inline constexpr number_option<std::uint32_t> ramp_hold_option{
    {"hold", "SECONDS", "after every client adopted an epoch, wait this long before --check and the next"}, 0, 0,
    86400};
inline constexpr plain_option ramp_check_option{
    {"check", "COMMAND",
     "between epochs, after the hold, run COMMAND (sh -c; KEYPLACE_EPOCH and KEYPLACE_CLUSTER set): a non-zero exit "
     "stops the ramp (exit 4)"}};
/// etcd ramp: --check stopped it.
inline constexpr int exit_check_stopped = 4;

/// Where --user NAME finds its password when the option does not carry it.
inline constexpr const char* password_variable = "KEYPLACE_ETCD_PASSWORD";

// ---- the commands -------------------------------------------------------------------------------

struct etcd_publish_command {
    static constexpr std::string_view name = "etcd publish";
    static constexpr std::string_view help =
        "publishes a snapshot document to etcd: stores it, then moves current to it (compare-and-swap)";
    static constexpr component needs = component::etcd;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr std::tuple positionals{&file_option};
    static constexpr auto options() {
        return std::tuple{&endpoints_option, &etcd_cluster_option, &file_option, &cacert_option,
                          &cert_option,      &key_option,          &user_option, &password_file_option};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

struct etcd_current_command {
    static constexpr std::string_view name = "etcd current";
    static constexpr std::string_view help = "the epoch and fingerprint etcd's current names (exit 1 if none)";
    static constexpr component needs = component::etcd;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&endpoints_option, &etcd_cluster_option, &json_flag,   &cacert_option,
                          &cert_option,      &key_option,          &user_option, &password_file_option};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};

inline constexpr plain_option metrics_address_option{
    {"metrics", "ADDR:PORT", "serve GET /metrics (Prometheus text: the snapshot, publishes, the watcher) on this address; port 0: any free port"}};

struct etcd_watch_command {
    static constexpr std::string_view name = "etcd watch";
    static constexpr std::string_view help =
        "follows current like a client: one line per adopted epoch, refusals on stderr; until SIGINT/SIGTERM";
    static constexpr component needs = component::etcd;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&endpoints_option, &etcd_cluster_option, &client_id_option, &watch_count_option,
                          &lease_ttl_option, &cache_option,        &json_flag,        &cacert_option,
                          &cert_option,      &key_option,          &user_option,      &password_file_option,
                          &metrics_address_option};
    }
    /// Writes as it goes: run() hands it its streams.
    static auto run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string;
};

struct etcd_ramp_command {
    static constexpr std::string_view name = "etcd ramp";
    static constexpr std::string_view help =
        "publishes a ramp's epochs one at a time, each once every reporting client adopted the one before";
    static constexpr component needs = component::etcd;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&endpoints_option, &etcd_cluster_option, &ramp_dir_option, &ramp_clients_option,
                          &ramp_timeout_option, &ramp_hold_option, &ramp_check_option, &cacert_option,
                          &cert_option, &key_option, &user_option, &password_file_option};
    }
    /// Writes as it goes: run() hands it its streams.
    static auto run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string;
};

struct etcd_status_command {
    static constexpr std::string_view name = "etcd status";
    static constexpr std::string_view help =
        "every live client's epoch and fingerprint; exit 3 when two report one epoch with different fingerprints";
    static constexpr component needs = component::etcd;
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&endpoints_option, &etcd_cluster_option, &json_flag,   &cacert_option,
                          &cert_option,      &key_option,          &user_option, &password_file_option};
    }
    static auto run(const parsed_args& a, std::istream&) -> std::string;
};
}  // namespace keyplace_cli

#endif
