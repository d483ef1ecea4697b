// keyplace — which node owns a key. keyplace::etcd, an optional, separately linked component:
// snapshots delivered through etcd's v3 JSON gateway (libcurl, nlohmann_json). The protocol is in
// doc/etcd.md ("Fleet membership through etcd"); the core headers never include this one.
#ifndef KEYPLACE_ETCD_HPP_INCLUDED
#define KEYPLACE_ETCD_HPP_INCLUDED

#include <keyplace/error.hpp>
#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/version.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {

/// The keys of one cluster (doc/etcd-protocol.md): snapshots/<epoch, 20 digits>, current, clients/<id>.
[[nodiscard]] auto snapshot_key(std::string_view cluster, std::uint64_t epoch) -> std::string;
[[nodiscard]] auto current_key(std::string_view cluster) -> std::string;
[[nodiscard]] auto clients_prefix(std::string_view cluster) -> std::string;

/// One key as etcd returns it.
struct key_value {
    std::string key;
    std::string value;
    std::int64_t create_revision = 0;
    std::int64_t mod_revision = 0;
    std::int64_t lease = 0;
    std::int64_t version = 0;  ///< how many times the key was written since its creation
};

/// A watch event on one key: a put (value set) or a delete.
struct watch_event {
    bool deleted = false;
    key_value kv;
};

/// How a watch ended.
enum class watch_end {
    stopped,    ///< the callback returned false, or stop was requested
    compacted,  ///< the start revision was compacted away: re-read, then watch from the new revision
    failed,     ///< a transport or protocol error (message in error_info)
};

/// What the publisher (publish, read_current, load_current, read_reports) and the watcher need of
/// etcd: the seam between keyplace's protocol and a transport. `client` (etcd's JSON gateway) is one
/// implementation, `memory_store` (<keyplace/etcd/memory_store.hpp>) another, for tests without a
/// server. The contract is etcd's: one revision counter for the store, a key's mod_revision is
/// the revision of its last write, and a watch delivers every write of its key from its start
/// revision on, in order, or says the start was compacted away. Every call returns std::nullopt /
/// false and fills err on failure; nothing throws. Transport errors carry fleet_errc::unavailable
/// and a message starting with "etcd".
class kv_store {
public:
    virtual ~kv_store() = default;

    /// The key, or an empty optional with err clear when it does not exist; revision receives the
    /// store's revision at the read (the watch resume point).
    [[nodiscard]] virtual auto get(std::string_view key, error_info& err, std::int64_t* revision = nullptr)
        -> std::optional<key_value> = 0;
    /// Every key with the prefix, sorted by key.
    [[nodiscard]] virtual auto get_prefix(std::string_view prefix, error_info& err)
        -> std::optional<std::vector<key_value>> = 0;
    [[nodiscard]] virtual auto put(std::string_view key, std::string_view value, error_info& err,
                                   std::int64_t lease = 0) -> bool = 0;
    /// Put only if the key's mod_revision is `expected` (0: only if the key does not exist).
    /// Returns whether the transaction succeeded; false with err clear means the compare failed.
    [[nodiscard]] virtual auto put_if(std::string_view key, std::string_view value, std::int64_t expected,
                                      error_info& err) -> bool = 0;
    [[nodiscard]] virtual auto lease_grant(std::chrono::seconds ttl, error_info& err) -> std::optional<std::int64_t> = 0;
    /// Whether the lease is still alive (false with err clear: it expired or was revoked).
    [[nodiscard]] virtual auto lease_keepalive(std::int64_t lease, error_info& err) -> bool = 0;
    /// Revokes the lease and deletes its keys.
    [[nodiscard]] virtual auto lease_revoke(std::int64_t lease, error_info& err) -> bool = 0;
    /// Watches one key from start_revision (0: from the next write), calling on_event for each
    /// event in order until it returns false, `stop` becomes true (checked at least every 50 ms),
    /// or the stream ends. Blocks. compacted: the start revision was compacted away (err names the
    /// compact revision); failed: err holds the error.
    [[nodiscard]] virtual auto watch(std::string_view key, std::int64_t start_revision,
                                     const std::function<bool(const watch_event&)>& on_event,
                                     const std::atomic<bool>& stop, error_info& err) -> watch_end = 0;

protected:
    kv_store() = default;
    kv_store(const kv_store&) = default;
    kv_store(kv_store&&) = default;
    auto operator=(const kv_store&) -> kv_store& = default;
    auto operator=(kv_store&&) -> kv_store& = default;
};

/// TLS towards etcd (an https endpoint). Empty fields: the system's CA store, no client certificate.
struct tls_options {
    std::string ca_file{};    ///< PEM: the CA(s) that must have signed the server's certificate
    std::string cert_file{};  ///< PEM: this client's certificate (etcd's --client-cert-auth)
    std::string key_file{};   ///< PEM: its private key (set with cert_file, or neither)
};

/// etcd authentication: the token from /v3/auth/authenticate goes with every request, and is
/// fetched again when etcd says it is invalid (simple tokens expire after --auth-token-ttl idle).
struct credentials {
    std::string user{};  ///< empty: no authentication
    std::string password{};
};

struct client_options {
    std::string endpoint = "http://127.0.0.1:2379";  ///< the gateway URL, when `endpoints` is empty
    std::chrono::milliseconds timeout{2000};          ///< per request, failover included (not per watch)
    /// Members' gateway URLs (http:// or https://), tried in turn: a request that cannot connect,
    /// or that a member answers "unavailable" (no leader, leader changed, timed out: HTTP 5xx or
    /// gRPC code 14), goes to the next until `timeout` has passed. Empty: `endpoint` alone.
    std::vector<std::string> endpoints{};
    tls_options tls{};
    credentials auth{};
};

/// The endpoints of a comma-separated list ("URL,URL,URL"), as etcdctl's --endpoints takes them.
/// Fails with invalid_argument, naming the value, on an empty entry or one that is not an
/// http:// or https:// URL: the scheme, then a host (not '/', '?' or '#'), and no white space or
/// control byte.
[[nodiscard]] auto parse_endpoints(std::string_view list, error_info& err) -> std::vector<std::string>;

/// A thin, blocking client of etcd's v3 JSON gateway (/v3/kv/range, /v3/kv/put, /v3/kv/txn,
/// /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke, /v3/watch): the kv_store of a real
/// etcd. Keys and values are base64 on the wire and plain here. One client per thread (it owns a
/// curl handle). Errors as kv_store says; refused credentials ("authentication of user ...
/// failed") and "permission denied" (naming the user) are transport errors too.
/// A write whose answer was lost may be retried on another endpoint: publish() recognises its own
/// write when that happens.
class client final : public kv_store {
public:
    explicit client(client_options options);
    ~client() override;
    client(const client&) = delete;
    auto operator=(const client&) -> client& = delete;
    client(client&&) noexcept;
    auto operator=(client&&) noexcept -> client&;

    /// The endpoint the next request goes to first (the one that last answered).
    [[nodiscard]] auto endpoint() const -> const std::string&;

    [[nodiscard]] auto get(std::string_view key, error_info& err, std::int64_t* revision = nullptr)
        -> std::optional<key_value> override;
    [[nodiscard]] auto get_prefix(std::string_view prefix, error_info& err)
        -> std::optional<std::vector<key_value>> override;
    [[nodiscard]] auto put(std::string_view key, std::string_view value, error_info& err, std::int64_t lease = 0)
        -> bool override;
    [[nodiscard]] auto put_if(std::string_view key, std::string_view value, std::int64_t expected, error_info& err)
        -> bool override;
    [[nodiscard]] auto lease_grant(std::chrono::seconds ttl, error_info& err) -> std::optional<std::int64_t> override;
    [[nodiscard]] auto lease_keepalive(std::int64_t lease, error_info& err) -> bool override;
    [[nodiscard]] auto lease_revoke(std::int64_t lease, error_info& err) -> bool override;
    /// As kv_store says; asks etcd for progress notifications. When the stream breaks, the watch
    /// resumes on the next endpoint after the last revision delivered (or notified as progress),
    /// so no event is lost or repeated; it fails once every endpoint has failed in a row.
    [[nodiscard]] auto watch(std::string_view key, std::int64_t start_revision,
                             const std::function<bool(const watch_event&)>& on_event, const std::atomic<bool>& stop,
                             error_info& err) -> watch_end override;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// What `current` holds: the epoch, its fingerprint, and the key's mod_revision (the CAS token).
struct current_pointer {
    std::uint64_t epoch = 0;
    digest128 fingerprint{};
    std::int64_t mod_revision = 0;
};

/// Every function taking a cluster name (read_current, load_current, read_reports, publish's
/// snapshot's cluster) first checks it against the name grammar (check_name): invalid_name,
/// before any request.

/// Reads /keyplace/<cluster>/current: empty optional with err clear when nothing was published.
[[nodiscard]] auto read_current(kv_store& c, std::string_view cluster, error_info& err, std::int64_t* revision = nullptr)
    -> std::optional<current_pointer>;

/// Reads and loads (strictly, digests verified) the snapshot `current` names.
[[nodiscard]] auto load_current(kv_store& c, std::string_view cluster, error_info& err)
    -> std::optional<snapshot>;

/// Publishes s: stores its document at snapshots/<epoch> (once: an existing key must hold the
/// same fingerprint), then moves `current` to it by a compare-and-swap on current's
/// mod_revision, only to a higher epoch. Refuses, before storing anything, a snapshot in which a
/// node left in the current one returns (check_successor: invalid_state). Fails with
/// stale_epoch (naming both epochs) when current is at s.epoch() or above, including when
/// another publisher won the race; with split_brain when snapshots/<epoch> holds another
/// fingerprint; or with the transport error.
[[nodiscard]] auto publish(kv_store& c, const snapshot& s, error_info& err) -> bool;

/// A client's report under /keyplace/<cluster>/clients/<id> (held by a lease).
struct client_report {
    std::string id;
    std::uint64_t epoch = 0;
    digest128 fingerprint{};
    std::string library;  ///< "0.2.0"
    int contract = 0;
};

/// Every live client's report, sorted by id.
[[nodiscard]] auto read_reports(kv_store& c, std::string_view cluster, error_info& err)
    -> std::optional<std::vector<client_report>>;

/// Why a watcher did not adopt a document.
enum class refusal : std::uint8_t {
    malformed,             ///< not a snapshot document, or current/snapshot key missing
    wrong_cluster,
    stale_epoch,           ///< not newer than the adopted epoch
    fingerprint_mismatch,  ///< the built placement is not what current or the document states
    other,                 ///< anything else the publisher refuses
};

struct watcher_options {
    client_options connection{};
    std::string cluster;
    std::string client_id;                       ///< this process's id under clients/
    std::chrono::seconds lease_ttl{10};          ///< the report disappears this long after death
    std::chrono::milliseconds backoff_min{50};   ///< reconnect backoff, doubled up to max, jittered
    std::chrono::milliseconds backoff_max{2000};
    /// Whether the destructor revokes the report's lease (false: the report lingers until the
    /// lease's TTL passes, as after a crash).
    bool revoke_on_exit = true;
    /// Called on the watcher's thread after each adopted snapshot, and after each refusal with
    /// the reason and the message (which names the value).
    std::function<void(const snapshot&)> on_adopt{};
    std::function<void(refusal, const std::string&)> on_refuse{};
    /// A file that keeps the last adopted snapshot across restarts (empty: none; doc/etcd.md,
    /// "Restart without etcd"). After each adoption the watcher writes it (FILE.tmp.<pid>, fsync,
    /// rename, fsync of the directory; an XXH3-128 checksum inside). The constructor reads it
    /// before connecting: a valid snapshot of this cluster is adopted at once, so a process that
    /// restarts while etcd is down routes with it, and from then on no older epoch is adopted. A
    /// corrupt, truncated or foreign file is refused (on_refuse, with the file and the reason)
    /// and left as it is; the watcher then waits for etcd. A missing file is a first start, not
    /// an error. One watcher per file.
    std::string cache_file{};
    /// Called on the constructing thread when the cache file's snapshot is adopted (on_adopt is
    /// not called for it).
    std::function<void(const snapshot&)> on_restore{};
    /// Called on the watcher's thread when writing the cache file fails, with the reason (the
    /// file, the step and the system's error). The adopted snapshot serves all the same.
    std::function<void(const std::string&)> on_cache_error{};
};

/// Counters of a watcher, readable from any thread.
struct watcher_stats {
    std::uint64_t epoch = 0;        ///< adopted; 0 before the first
    std::uint64_t adopted = 0;      ///< snapshots adopted
    std::uint64_t refused = 0;      ///< documents refused
    std::uint64_t reconnects = 0;   ///< watch streams re-established after an error
    std::chrono::steady_clock::duration since_contact{};  ///< since etcd last answered
    std::uint64_t restored_epoch = 0;  ///< the epoch read from the cache file at start; 0 if none
    std::uint64_t cache_writes = 0;    ///< cache file writes that succeeded
    std::uint64_t cache_failures = 0;  ///< cache file writes that failed
};

/// Whether a watcher may be built with these options: the cluster and the client id follow the
/// name grammar (check_name; invalid_name naming the value). The watcher's constructor throws
/// (detail::raise) what this returns, before any network I/O.
[[nodiscard]] auto check_watcher_options(const watcher_options& options) -> error_info;

/// Keeps a publisher on the cluster's current snapshot: a background thread reads `current`,
/// loads and verifies the snapshot, publishes it locally, reports itself under a lease, and
/// watches `current` for the next; on errors it retries with backoff and jitter while the last
/// good snapshot keeps serving. After a compaction it re-reads `current`; epochs never go back.
class watcher {
public:
    /// Makes one of the watcher's connections; it asks for three (its reads, its watch, its
    /// report), each then used from one thread. Several may be one thread-safe store.
    using connector = std::function<std::shared_ptr<kv_store>()>;

    /// Connects to etcd with options.connection (three gateway clients).
    explicit watcher(watcher_options options);
    /// Connects through `connect` (options.connection is not used): another kv_store, such as a
    /// memory_store in tests. Throws invalid_argument if it returns nullptr.
    watcher(watcher_options options, const connector& connect);
    ~watcher();  ///< stops the thread and revokes the lease
    watcher(const watcher&) = delete;
    auto operator=(const watcher&) -> watcher& = delete;

    /// Waits until a first snapshot is adopted (or the timeout passes): whether one is.
    auto wait_for_snapshot(std::chrono::milliseconds timeout) -> bool;
    /// The local publisher, once a first snapshot is adopted (else nullptr). Readers come from it.
    [[nodiscard]] auto local() const -> publisher*;
    [[nodiscard]] auto stats() const -> watcher_stats;
    /// The last refusal's message, or empty.
    [[nodiscard]] auto last_refusal() const -> std::string;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace etcd
KEYPLACE_NAMESPACE_END

#endif
