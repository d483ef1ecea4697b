// keyplace — keyplace::etcd's in-memory kv_store: etcd's data model without a server, for tests of
// code that publishes or watches (keyplace's own, and a service's), with failures on demand.
// Modelled on etcd's mvcc store: one revision counter (1 when empty, +1 per write), a key's
// create/mod revision and version, leases that delete their keys, compaction, and watches that
// replay history from a revision.
#ifndef KEYPLACE_ETCD_MEMORY_STORE_HPP_INCLUDED
#define KEYPLACE_ETCD_MEMORY_STORE_HPP_INCLUDED

#include <keyplace/etcd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {

/// A kv_store held in memory. Thread-safe: one store may serve every connection of a program (a
/// watcher's three, a publisher's), as one etcd does; share it through a std::shared_ptr.
/// Transport failures are injected, never spontaneous: they carry fleet_errc::unavailable and a
/// message starting with "etcd (memory)".
class memory_store final : public kv_store {
public:
    /// The kv_store operations, to inject failures into and to count.
    enum class op : std::uint8_t { get, get_prefix, put, put_if, lease_grant, lease_keepalive, lease_revoke, watch };
    enum class fault : std::uint8_t {
        unreachable,  ///< the request fails and is not applied (connection refused)
        timeout,      ///< a write is applied, then its answer is lost: the caller sees a failure
        compacted,    ///< watch: ends compacted, as when a compaction raced the watch's creation
    };

    memory_store();
    ~memory_store() override;
    memory_store(const memory_store&) = delete;
    auto operator=(const memory_store&) -> memory_store& = delete;

    [[nodiscard]] auto get(std::string_view key, error_info& err, std::int64_t* revision = nullptr)
        -> std::optional<key_value> override;
    [[nodiscard]] auto get_prefix(std::string_view prefix, error_info& err)
        -> std::optional<std::vector<key_value>> override;
    /// A lease that does not exist is refused, as etcd does ("requested lease not found").
    [[nodiscard]] auto put(std::string_view key, std::string_view value, error_info& err, std::int64_t lease = 0)
        -> bool override;
    [[nodiscard]] auto put_if(std::string_view key, std::string_view value, std::int64_t expected, error_info& err)
        -> bool override;
    /// Leases never expire by time here: expire_lease() stands for their TTL passing.
    [[nodiscard]] auto lease_grant(std::chrono::seconds ttl, error_info& err) -> std::optional<std::int64_t> override;
    [[nodiscard]] auto lease_keepalive(std::int64_t lease, error_info& err) -> bool override;
    [[nodiscard]] auto lease_revoke(std::int64_t lease, error_info& err) -> bool override;
    /// Replays the key's writes from start_revision, then delivers each new one, until stopped,
    /// broken (break_watches, set_down) or compacted: a start below the compact revision ends at
    /// once, and so does a watch that falls behind a compaction while its callback runs.
    [[nodiscard]] auto watch(std::string_view key, std::int64_t start_revision,
                             const std::function<bool(const watch_event&)>& on_event, const std::atomic<bool>& stop,
                             error_info& err) -> watch_end override;

    /// After `after` more calls of `which` succeed, the next `count` fail with f (a timeout on a
    /// read or a watch fails it as unreachable does; compacted applies to watch only). Replaces
    /// what was injected into `which` before.
    void inject(op which, fault f, std::size_t count = 1, std::size_t after = 0);
    /// While down, every call fails unreachable, and going down ends every open watch (etcd stopped).
    void set_down(bool down);
    /// Ends every open watch as a broken connection does (failed).
    void break_watches();
    /// Compacts the history up to revision (etcd's /v3/kv/compaction): a watch from below it ends
    /// compacted. Refuses (invalid_argument) a revision above the store's or below the last compaction.
    auto compact(std::int64_t revision, error_info& err) -> bool;
    /// What the lease's TTL passing does: the lease and its keys are gone (each key's watchers see a delete).
    void expire_lease(std::int64_t lease);

    /// The store's revision (1 when empty).
    [[nodiscard]] auto revision() const -> std::int64_t;
    /// How many calls of `which` were made (failed ones included).
    [[nodiscard]] auto calls(op which) const -> std::uint64_t;
    /// Watches running now.
    [[nodiscard]] auto open_watches() const -> std::size_t;

private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace etcd
KEYPLACE_NAMESPACE_END

#endif
