// keyplace — keyplace::etcd's protocol: the gateway's encodings, the keys and values of one
// cluster, and what publishing and reading them means (read_current, load_current, publish,
// read_reports), over any kv_store. Nothing here throws out of the API.
#include "protocol.hpp"

#include <keyplace/fleet/json.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {
namespace internal {

auto fail_transport(std::string message) -> error_info {
    constexpr std::size_t most = 600;
    if (message.size() > most) {
        message = message.substr(0, most) + "... (" + std::to_string(message.size()) + " bytes)";
    }
    for (auto& ch : message) {
        ch = (ch == '\n' || ch == '\r') ? ' ' : ch;
    }
    return detail::fail(fleet_errc::unavailable, std::move(message));
}

// ---- base64 ----------------------------------------------------------------------------------

constexpr char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

auto b64_encode(std::string_view in) -> std::string {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16U) |
                       (static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8U) |
                       static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 2]));
        out += b64_digits[(n >> 18U) & 63U];
        out += b64_digits[(n >> 12U) & 63U];
        out += b64_digits[(n >> 6U) & 63U];
        out += b64_digits[n & 63U];
    }
    const std::size_t rest = in.size() - i;
    if (rest > 0) {
        std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16U;
        if (rest == 2) {
            n |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8U;
        }
        out += b64_digits[(n >> 18U) & 63U];
        out += b64_digits[(n >> 12U) & 63U];
        out += rest == 2 ? b64_digits[(n >> 6U) & 63U] : '=';
        out += '=';
    }
    return out;
}

namespace {

auto b64_value(char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

}  // namespace

auto b64_decode(std::string_view in) -> std::optional<std::string> {
    std::string out;
    out.reserve(in.size() / 4 * 3);
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char c : in) {
        if (c == '=') {
            break;
        }
        const int v = b64_value(c);
        if (v < 0) {
            return std::nullopt;
        }
        acc = (acc << 6U) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> static_cast<unsigned>(bits)) & 0xffU);
        }
    }
    return out;
}

// ---- JSON helpers (int64 fields are strings; default fields are omitted) ---------------------

auto as_int64(const json& obj, const char* name) -> std::int64_t {
    const auto it = obj.find(name);
    if (it == obj.end()) {
        return 0;
    }
    if (it->is_number_integer()) {
        return it->get<std::int64_t>();
    }
    if (it->is_string()) {
        const auto& s = it->get_ref<const std::string&>();
        std::int64_t v = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        return r.ec == std::errc{} ? v : 0;
    }
    return 0;
}

auto as_bool(const json& obj, const char* name) -> bool {
    const auto it = obj.find(name);
    return it != obj.end() && it->is_boolean() && it->get<bool>();
}

namespace {

auto as_b64(const json& obj, const char* name) -> std::string {
    const auto it = obj.find(name);
    if (it == obj.end() || !it->is_string()) {
        return {};
    }
    auto v = b64_decode(it->get_ref<const std::string&>());
    return v ? std::move(*v) : std::string{};
}

}  // namespace

auto parse_kv(const json& j) -> key_value {
    key_value kv;
    kv.key = as_b64(j, "key");
    kv.value = as_b64(j, "value");
    kv.create_revision = as_int64(j, "create_revision");
    kv.mod_revision = as_int64(j, "mod_revision");
    kv.lease = as_int64(j, "lease");
    kv.version = as_int64(j, "version");
    return kv;
}

auto prefix_end(std::string_view prefix) -> std::string {
    std::string end(prefix);
    while (!end.empty()) {
        auto& last = end.back();
        if (static_cast<unsigned char>(last) < 0xffU) {
            last = static_cast<char>(static_cast<unsigned char>(last) + 1U);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');  // every key
}

auto error_text(const json& j) -> std::string {
    // Unary errors: {"error":"...","message":"...","code":N}; stream errors: {"error":{...}}.
    const auto it = j.find("error");
    if (it != j.end()) {
        if (it->is_string()) {
            return it->get<std::string>();
        }
        if (it->is_object()) {
            const auto m = it->find("message");
            if (m != it->end() && m->is_string()) {
                return m->get<std::string>();
            }
        }
    }
    const auto m = j.find("message");
    if (m != j.end() && m->is_string()) {
        return m->get<std::string>();
    }
    return j.dump();
}

// gRPC's status code of an error answer: {"code":N} (unary) or {"error":{"grpc_code":N}} (stream).
auto grpc_code(const json& j) -> std::int64_t {
    if (!j.is_object()) {
        return 0;
    }
    const auto e = j.find("error");
    if (e != j.end() && e->is_object()) {
        return as_int64(*e, "grpc_code");
    }
    return as_int64(j, "code");
}

auto compacted_error(std::string_view key, std::int64_t from, std::int64_t compact_revision) -> error_info {
    return detail::fail(fleet_errc::unavailable, "etcd watch of '" + std::string(key) + "' from revision " +
                                                     std::to_string(from) + ": compacted up to revision " +
                                                     std::to_string(compact_revision));
}

auto parse_current(std::string_view key, std::string_view value, error_info& err) -> std::optional<current_pointer> {
    const json j = json::parse(value, nullptr, false);
    const auto bad = [&](const std::string& why) -> std::optional<current_pointer> {
        err = detail::fail(fleet_errc::invalid_document,
                           std::string(key) + ": " + why + ": " + detail::quote(value));
        return std::nullopt;
    };
    if (j.is_discarded() || !j.is_object()) {
        return bad("not a JSON object");
    }
    const auto e = j.find("epoch");
    const auto f = j.find("fingerprint");
    if (e == j.end() || !e->is_number_unsigned()) {
        return bad("no unsigned integer \"epoch\"");
    }
    if (f == j.end() || !f->is_string()) {
        return bad("no string \"fingerprint\"");
    }
    const auto fp = digest128::from_hex(f->get_ref<const std::string&>());
    if (!fp) {
        return bad("\"fingerprint\" is not 32 hex digits");
    }
    current_pointer p;
    p.epoch = e->get<std::uint64_t>();
    p.fingerprint = *fp;
    return p;
}

auto current_value(std::uint64_t epoch, const digest128& fp) -> std::string {
    return json{{"epoch", epoch}, {"fingerprint", fp.hex()}}.dump();
}

auto stale_message(std::uint64_t epoch, std::uint64_t current, std::string_view cluster) -> std::string {
    return "epoch " + std::to_string(epoch) + " is not newer than the current epoch " + std::to_string(current) +
           " of cluster " + detail::quote(cluster);
}

auto report_value(std::string_view client_id, std::uint64_t epoch, const digest128& fp) -> std::string {
    const std::string library = std::to_string(KEYPLACE_VERSION_MAJOR) + "." + std::to_string(KEYPLACE_VERSION_MINOR) +
                                "." + std::to_string(KEYPLACE_VERSION_PATCH);
    return json{{"id", client_id},
                {"epoch", epoch},
                {"fingerprint", fp.hex()},
                {"library", library},
                {"contract", KEYPLACE_CONTRACT_VERSION}}
        .dump();
}

}  // namespace internal

using internal::fail_transport;
using internal::guarded;
using internal::json;
using internal::current_value;
using internal::parse_current;
using internal::stale_message;

namespace {

auto epoch_digits(std::uint64_t epoch) -> std::string {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%020llu", static_cast<unsigned long long>(epoch));
    return buf;
}

}  // namespace

auto snapshot_key(std::string_view cluster, std::uint64_t epoch) -> std::string {
    return "/keyplace/" + std::string(cluster) + "/snapshots/" + epoch_digits(epoch);
}
auto current_key(std::string_view cluster) -> std::string { return "/keyplace/" + std::string(cluster) + "/current"; }
auto clients_prefix(std::string_view cluster) -> std::string {
    return "/keyplace/" + std::string(cluster) + "/clients/";
}

// ---- the protocol ----------------------------------------------------------------------------

auto read_current(kv_store& c, std::string_view cluster, error_info& err, std::int64_t* revision)
    -> std::optional<current_pointer> {
    return guarded(err, [&]() -> std::optional<current_pointer> {
        if ((err = check_name(name_kind::cluster, cluster))) {
            return std::nullopt;
        }
        const std::string key = current_key(cluster);
        auto kv = c.get(key, err, revision);
        if (!kv) {
            return std::nullopt;
        }
        auto p = parse_current(key, kv->value, err);
        if (p) {
            p->mod_revision = kv->mod_revision;
        }
        return p;
    });
}

auto load_current(kv_store& c, std::string_view cluster, error_info& err) -> std::optional<snapshot> {
    return guarded(err, [&]() -> std::optional<snapshot> {
        const auto cur = read_current(c, cluster, err);
        if (!cur) {
            if (!err) {
                err = detail::fail(fleet_errc::invalid_document,
                                   "cluster " + detail::quote(cluster) + " has no current snapshot in etcd");
            }
            return std::nullopt;
        }
        const std::string key = snapshot_key(cluster, cur->epoch);
        const auto kv = c.get(key, err);
        if (!kv) {
            if (!err) {
                err = detail::fail(fleet_errc::invalid_document, key + ": missing (current names epoch " +
                                                               std::to_string(cur->epoch) + ")");
            }
            return std::nullopt;
        }
        auto s = try_load_snapshot_json(kv->value, err);
        if (!s) {
            err = detail::fail(err.code(), key + ": " + err.message());
            return std::nullopt;
        }
        if (s->cluster() != cluster) {
            err = detail::fail(fleet_errc::wrong_cluster, key + ": the snapshot is of cluster " +
                                                        detail::quote(s->cluster()) + ", not " +
                                                        detail::quote(cluster));
            return std::nullopt;
        }
        if (s->epoch() != cur->epoch) {
            err = detail::fail(fleet_errc::invalid_document, key + ": the snapshot has epoch " + std::to_string(s->epoch()) +
                                                           ", current names " + std::to_string(cur->epoch));
            return std::nullopt;
        }
        if (!s->fingerprint_matches(cur->fingerprint)) {
            err = detail::fail(fleet_errc::fingerprint_mismatch, key + ": the snapshot's fingerprint " +
                                                               s->fingerprint().hex() + " is not " +
                                                               cur->fingerprint.hex() + ", which current states");
            return std::nullopt;
        }
        return s;
    });
}

auto publish(kv_store& c, const snapshot& s, error_info& err) -> bool {
    return guarded(err, [&]() -> bool {
        const std::string& cluster = s.cluster();
        if ((err = check_name(name_kind::cluster, cluster))) {
            return false;
        }
        // The rule watchers apply at adoption (no tombstone returns) holds before anything is
        // stored. A current document that does not load is not checked against: publishing repairs it.
        if (const auto before = load_current(c, cluster, err)) {
            if (auto f = check_successor(*before, s); f && s.epoch() > before->epoch()) {
                err = detail::fail(f.code(), "epoch " + std::to_string(s.epoch()) + " not published: " + f.message());
                return false;
            }
        } else if (err == fleet_errc::unavailable) {
            return false;
        }
        err.clear();
        const std::string skey = snapshot_key(cluster, s.epoch());
        const std::string doc = write_snapshot_json(s);
        // What watchers will load must be this placement (JSON writes bytes that are not UTF-8 as
        // U+FFFD, which would change an id): refuse before anything is stored.
        if (error_info back; !try_load_snapshot_json(doc, back) || back) {
            err = detail::fail(errc::invalid_argument, "epoch " + std::to_string(s.epoch()) +
                                                           " not published: its document does not load back as the "
                                                           "same snapshot (" + back.message().substr(0, 200) + ")");
            return false;
        }
        if (!c.put_if(skey, doc, 0, err)) {
            if (err) {
                return false;
            }
            const auto existing = c.get(skey, err);
            if (!existing) {
                if (!err) {
                    err = fail_transport("etcd: " + skey + " existed and then vanished");
                }
                return false;
            }
            const json j = json::parse(existing->value, nullptr, false);
            std::string theirs = "(no fingerprint)";
            if (j.is_object() && j.contains("fingerprint") && j["fingerprint"].is_string()) {
                theirs = j["fingerprint"].get<std::string>();
            }
            const auto fp = digest128::from_hex(theirs);
            if (!fp || !s.fingerprint_matches(*fp)) {
                err = detail::fail(fleet_errc::split_brain, skey + " already holds epoch " + std::to_string(s.epoch()) +
                                                          " with fingerprint " + detail::quote(theirs) +
                                                          ", not " + s.fingerprint().hex());
                return false;
            }
        }
        const auto cur = read_current(c, cluster, err);
        if (err) {
            return false;
        }
        if (cur && cur->epoch == s.epoch() && s.fingerprint_matches(cur->fingerprint)) {
            return true;  // already published (a retry after a response that was lost)
        }
        if (cur && cur->epoch >= s.epoch()) {
            err = detail::fail(fleet_errc::stale_epoch, stale_message(s.epoch(), cur->epoch, cluster));
            return false;
        }
        const std::string value = current_value(s.epoch(), s.fingerprint());
        if (c.put_if(current_key(cluster), value, cur ? cur->mod_revision : 0, err)) {
            return true;
        }
        if (err) {
            return false;
        }
        const auto now = read_current(c, cluster, err);
        if (err) {
            return false;
        }
        if (now && now->epoch == s.epoch() && s.fingerprint_matches(now->fingerprint)) {
            return true;  // the same snapshot, published by another publisher meanwhile
        }
        if (now && now->epoch < s.epoch()) {
            err = detail::fail(fleet_errc::stale_epoch, "epoch " + std::to_string(s.epoch()) + " not published: another "
                                                  "publisher moved current of cluster " + detail::quote(cluster) +
                                                  " to epoch " + std::to_string(now->epoch) + " first; publish again");
            return false;
        }
        err = detail::fail(fleet_errc::stale_epoch, stale_message(s.epoch(), now ? now->epoch : 0, cluster) +
                                                  " (another publisher moved current first)");
        return false;
    });
}

auto read_reports(kv_store& c, std::string_view cluster, error_info& err)
    -> std::optional<std::vector<client_report>> {
    return guarded(err, [&]() -> std::optional<std::vector<client_report>> {
        if ((err = check_name(name_kind::cluster, cluster))) {
            return std::nullopt;
        }
        const auto kvs = c.get_prefix(clients_prefix(cluster), err);
        if (!kvs) {
            return std::nullopt;
        }
        std::vector<client_report> out;
        for (const auto& kv : *kvs) {
            const json j = json::parse(kv.value, nullptr, false);
            if (!j.is_object()) {
                continue;
            }
            client_report r;
            r.id = j.value("id", std::string{});
            if (r.id.empty()) {
                r.id = kv.key.substr(clients_prefix(cluster).size());
            }
            if (j.contains("epoch") && j["epoch"].is_number_unsigned()) {
                r.epoch = j["epoch"].get<std::uint64_t>();
            }
            if (j.contains("fingerprint") && j["fingerprint"].is_string()) {
                r.fingerprint = digest128::from_hex(j["fingerprint"].get<std::string>()).value_or(digest128{});
            }
            r.library = j.value("library", std::string{});
            if (j.contains("contract") && j["contract"].is_number_integer()) {
                r.contract = j["contract"].get<int>();
            }
            out.push_back(std::move(r));
        }
        std::sort(out.begin(), out.end(), [](const client_report& a, const client_report& b) { return a.id < b.id; });
        return out;
    });
}

auto check_watcher_options(const watcher_options& options) -> error_info {
    if (auto f = check_name(name_kind::cluster, options.cluster)) {
        return f;
    }
    return check_name(name_kind::client_id, options.client_id);
}

}  // namespace etcd
KEYPLACE_NAMESPACE_END
