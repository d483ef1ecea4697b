// keyplace — keyplace::etcd's protocol, shared by its sources (not installed): the encodings of
// etcd's JSON gateway (base64, int64 as strings), the values keyplace stores (current, reports),
// and the one way a transport error is reported. Pure functions, except guarded's catch.
#ifndef KEYPLACE_ETCD_SRC_PROTOCOL_HPP_INCLUDED
#define KEYPLACE_ETCD_SRC_PROTOCOL_HPP_INCLUDED

#include <keyplace/etcd.hpp>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd::internal {

using json = nlohmann::json;

/// Transport and protocol errors: fleet_errc::unavailable, one line (cut at 600 bytes: an answer
/// may be a proxy's whole HTML page), starting with "etcd".
[[nodiscard]] auto fail_transport(std::string message) -> error_info;

/// Runs f, turning an exception into a transport error: nothing throws out of the API.
template <class F>
auto guarded(error_info& err, F&& f) noexcept -> decltype(f()) {
    try {
        return f();
    } catch (const std::exception& e) {
        err = fail_transport(std::string("etcd: ") + e.what());
    } catch (...) {
        err = fail_transport("etcd: unknown exception");
    }
    return {};
}

// ---- the gateway's encodings -----------------------------------------------------------------

[[nodiscard]] auto b64_encode(std::string_view in) -> std::string;
/// Standard or URL-safe alphabet, padding optional; nullopt on any other byte.
[[nodiscard]] auto b64_decode(std::string_view in) -> std::optional<std::string>;
/// The range end of every key with the prefix (etcd's prefix + 1; "\0" for every key).
[[nodiscard]] auto prefix_end(std::string_view prefix) -> std::string;

/// An int64 field (the gateway writes them as strings; an omitted field is 0).
[[nodiscard]] auto as_int64(const json& obj, const char* name) -> std::int64_t;
[[nodiscard]] auto as_bool(const json& obj, const char* name) -> bool;
[[nodiscard]] auto parse_kv(const json& j) -> key_value;
/// The message of an error answer, unary ({"error":"..."}) or of a stream ({"error":{...}}).
[[nodiscard]] auto error_text(const json& j) -> std::string;
/// gRPC's status code of an error answer: {"code":N} (unary) or {"error":{"grpc_code":N}} (stream).
[[nodiscard]] auto grpc_code(const json& j) -> std::int64_t;

/// How a watch from `from` reports that etcd compacted its history up to compact_revision.
[[nodiscard]] auto compacted_error(std::string_view key, std::int64_t from, std::int64_t compact_revision)
    -> error_info;

// ---- keyplace's values -----------------------------------------------------------------------

/// current's value: {"epoch":N,"fingerprint":"<32 hex>"}; invalid_document naming key and value.
[[nodiscard]] auto parse_current(std::string_view key, std::string_view value, error_info& err)
    -> std::optional<current_pointer>;
[[nodiscard]] auto current_value(std::uint64_t epoch, const digest128& fp) -> std::string;
[[nodiscard]] auto stale_message(std::uint64_t epoch, std::uint64_t current, std::string_view cluster)
    -> std::string;
/// A client's report under clients/<id>.
[[nodiscard]] auto report_value(std::string_view client_id, std::uint64_t epoch, const digest128& fp)
    -> std::string;

// ---- the watcher's snapshot cache (cache.cpp) -------------------------------------------------

/// Writes the document and the fingerprint `current` stated for it to path (through path.tmp,
/// fsync and rename). Empty on success, else the reason, naming the file and the OS's error.
[[nodiscard]] auto write_cache(const std::string& path, std::string_view document, const digest128& stated)
    -> std::string;

/// What read_cache found: a snapshot, nothing (absent), or a refusal with its reason.
struct cache_outcome {
    std::optional<snapshot> snap;
    digest128 stated{};
    std::string document;
    bool absent = false;
    refusal why = refusal::other;
    std::string message;  ///< names the file and what is wrong with it
};
/// Reads path and loads its snapshot, which must be of `cluster`: true when out.snap holds it.
[[nodiscard]] auto read_cache(const std::string& path, const std::string& cluster, cache_outcome& out) -> bool;

}  // namespace etcd::internal
KEYPLACE_NAMESPACE_END

#endif
