// keyplace — keyplace::etcd: the client of etcd's v3 JSON gateway (libcurl, nlohmann_json), the
// publish protocol, client reports and the watcher. Nothing here throws out of the API.
#include <keyplace/etcd.hpp>
#include <keyplace/fleet/json.hpp>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {
namespace {

using nlohmann::json;

// Transport and protocol errors: fleet_errc::unavailable, with a message that starts with "etcd".
constexpr fleet_errc transport = fleet_errc::unavailable;

// Cut at 600 bytes (an answer may be a proxy's whole HTML page), newlines replaced: one line.
auto fail_transport(std::string message) -> error_info {
    constexpr std::size_t most = 600;
    if (message.size() > most) {
        message = message.substr(0, most) + "... (" + std::to_string(message.size()) + " bytes)";
    }
    for (auto& ch : message) {
        ch = (ch == '\n' || ch == '\r') ? ' ' : ch;
    }
    return detail::fail(transport, std::move(message));
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

auto b64_value(char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

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

auto as_b64(const json& obj, const char* name) -> std::string {
    const auto it = obj.find(name);
    if (it == obj.end() || !it->is_string()) {
        return {};
    }
    auto v = b64_decode(it->get_ref<const std::string&>());
    return v ? std::move(*v) : std::string{};
}

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

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

auto write_to_string(char* data, std::size_t size, std::size_t n, void* user) -> std::size_t {
    static_cast<std::string*>(user)->append(data, size * n);
    return size * n;
}

struct slist_guard {
    curl_slist* list = nullptr;
    ~slist_guard() { curl_slist_free_all(list); }
};

auto library_version() -> std::string {
    return std::to_string(KEYPLACE_VERSION_MAJOR) + "." + std::to_string(KEYPLACE_VERSION_MINOR) + "." +
           std::to_string(KEYPLACE_VERSION_PATCH);
}

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

// ---- client ----------------------------------------------------------------------------------

auto parse_endpoints(std::string_view list, error_info& err) -> std::vector<std::string> {
    err.clear();
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        const std::size_t comma = list.find(',', start);
        const std::string_view item = list.substr(start, comma == std::string_view::npos ? comma : comma - start);
        // A scheme, then a host: no white space or control byte anywhere (curl would be handed
        // them), and no path, query or fragment where the host belongs.
        const std::size_t scheme = item.starts_with("http://") ? 7 : item.starts_with("https://") ? 8 : 0;
        const bool host = scheme != 0 && item.size() > scheme &&
                          std::string_view("/?#").find(item[scheme]) == std::string_view::npos;
        const bool clean = std::none_of(item.begin(), item.end(), [](char c) {
            const auto u = static_cast<unsigned char>(c);
            return u <= 0x20 || u == 0x7f;
        });
        if (!host || !clean) {
            err = detail::fail(errc::invalid_argument, "endpoint " + detail::quote(item) + " of " + detail::quote(list) +
                                                           " is not an http:// or https:// URL");
            return {};
        }
        out.emplace_back(item);
        if (comma == std::string_view::npos) {
            return out;
        }
        start = comma + 1;
    }
}

namespace {

using clock = std::chrono::steady_clock;

// What one attempt on one endpoint came to.
enum class verdict : std::uint8_t {
    answered,    // a JSON object without an error
    next,        // unreachable, or unavailable there (no leader, leader changed): the next endpoint
    next_once,   // unusable there (TLS verification, a certificate file): the next, but no second round
    token,       // etcd refused the auth token (invalid, expired, issued before an auth change)
    refused,     // an answer every endpoint would give (permission denied, a bad request)
};

// A curl failure that waiting will not cure.
auto lasting(CURLcode rc) -> bool {
    switch (rc) {
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_CRL_BADFILE:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_UNSUPPORTED_PROTOCOL:
        case CURLE_URL_MALFORMAT: return true;
        default: return false;
    }
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

constexpr std::int64_t grpc_unavailable = 14;
constexpr std::int64_t grpc_unauthenticated = 16;

// etcd's answers to a token it no longer accepts (the client authenticates again).
auto token_refused(std::string_view text) -> bool {
    return text.find("invalid auth token") != std::string_view::npos ||
           text.find("revision of auth store is old") != std::string_view::npos;
}

auto classify(long status, std::int64_t code, std::string_view text) -> verdict {
    if (status == 401 || code == grpc_unauthenticated || token_refused(text)) {
        return verdict::token;
    }
    if (status >= 500 || code == grpc_unavailable) {
        return verdict::next;
    }
    return verdict::refused;
}

// The message of a refused request, with what the user can do about it.
auto explain(std::string message, const credentials& auth) -> std::string {
    if (message.find("user name is empty") != std::string::npos && auth.user.empty()) {
        return message + " (etcd requires authentication: give a user and password)";
    }
    if (message.find("permission denied") != std::string::npos && !auth.user.empty()) {
        return message + " (user " + detail::quote(auth.user) + ")";
    }
    return message;
}

// without_cert: TLS without a client certificate, which a member with --client-cert-auth refuses
// after the handshake (the failure then reads as a send or receive error).
auto curl_failure(const std::string& url, CURLcode rc, const char* detail_text, bool without_cert) -> std::string {
    std::string m = "etcd " + url + ": " + curl_easy_strerror(rc);
    if (detail_text != nullptr && detail_text[0] != '\0') {
        m += std::string(": ") + detail_text;
    }
    // The member's alert can also arrive as the read of a slow request times out.
    const std::string_view text = detail_text != nullptr ? detail_text : "";
    const bool alert = text.find("alert bad certificate") != std::string_view::npos ||
                       text.find("alert certificate required") != std::string_view::npos;
    const bool refused =
        rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_SSL_CONNECT_ERROR || alert;
    if (without_cert && refused && url.starts_with("https://")) {
        m += " (no client certificate was given: a member that requires one refuses the connection)";
    }
    return m;
}

}  // namespace

struct client::impl {
    client_options options;
    std::vector<std::string> endpoints;  // never empty, without a trailing '/'
    std::size_t current = 0;             // where the next request goes first
    std::string token;                   // etcd's auth token, once authenticated
    std::string setup_error;             // options that cannot work: every call fails with it
    CURL* curl = nullptr;

    explicit impl(client_options o) : options(std::move(o)) {
        global_init();
        curl = curl_easy_init();
        endpoints = options.endpoints.empty() ? std::vector<std::string>{options.endpoint} : options.endpoints;
        for (auto& e : endpoints) {
            while (!e.empty() && e.back() == '/') {
                e.pop_back();
            }
        }
        const auto& tls = options.tls;
        if (tls.cert_file.empty() != tls.key_file.empty()) {
            setup_error = "etcd: a client certificate needs both a certificate and a key file (certificate " +
                          detail::quote(tls.cert_file) + ", key " + detail::quote(tls.key_file) + ")";
        } else if (options.auth.user.empty() && !options.auth.password.empty()) {
            setup_error = "etcd: a password is given without a user";
        }
    }
    ~impl() {
        if (curl != nullptr) {
            curl_easy_cleanup(curl);
        }
    }
    impl(const impl&) = delete;
    auto operator=(const impl&) -> impl& = delete;

    // What every request carries: the URL, the body, the headers, TLS. headers must outlive it.
    void prepare(CURL* h, const std::string& url, const std::string& payload, slist_guard& headers,
                 bool with_token) const {
        headers.list = curl_slist_append(headers.list, "Content-Type: application/json");
        headers.list = curl_slist_append(headers.list, "Expect:");  // no 100-continue round trip
        if (with_token && !token.empty()) {
            headers.list = curl_slist_append(headers.list, ("Authorization: " + token).c_str());
        }
        curl_easy_setopt(h, CURLOPT_URL, url.c_str());
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.list);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
        if (!options.tls.ca_file.empty()) {
            curl_easy_setopt(h, CURLOPT_CAINFO, options.tls.ca_file.c_str());
        }
        if (!options.tls.cert_file.empty()) {
            curl_easy_setopt(h, CURLOPT_SSLCERT, options.tls.cert_file.c_str());
            curl_easy_setopt(h, CURLOPT_SSLKEY, options.tls.key_file.c_str());
        }
    }

    struct attempt_result {
        verdict what = verdict::refused;
        std::optional<json> answer;
        std::string message;
        bool timed_out = false;  // the request's share of the deadline ran out: no word from the member
    };

    auto attempt(const std::string& endpoint, const char* path, const std::string& payload, bool with_token,
                 std::chrono::milliseconds left) -> attempt_result {
        const std::string url = endpoint + path;
        std::string answer;
        slist_guard headers;
        char curl_detail[CURL_ERROR_SIZE] = {};
        curl_easy_reset(curl);
        prepare(curl, url, payload, headers, with_token);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_detail);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(left.count()));
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &write_to_string);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
        const CURLcode rc = curl_easy_perform(curl);
        curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
        if (rc != CURLE_OK) {
            return {lasting(rc) ? verdict::next_once : verdict::next, std::nullopt,
                    curl_failure(url, rc, curl_detail, options.tls.cert_file.empty()),
                    rc == CURLE_OPERATION_TIMEDOUT};
        }
        long status = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        json j = json::parse(answer, nullptr, false);
        const bool object = !j.is_discarded() && j.is_object();
        if (status == 200 && object && !j.contains("error")) {
            return {verdict::answered, std::move(j), {}};
        }
        if (status == 200 && !object) {
            return {verdict::refused, std::nullopt,
                    "etcd " + url + ": the answer is not a JSON object: " + answer.substr(0, 200)};
        }
        const std::string text = object ? error_text(j) : answer.substr(0, 300);
        return {classify(status, object ? grpc_code(j) : 0, text), std::nullopt,
                "etcd " + url + ": " + (status != 200 ? "HTTP " + std::to_string(status) + ": " : "") + text};
    }

    // Sends payload to path, from the current endpoint on, moving to the next while they are
    // unreachable or unavailable, in rounds until the deadline. how: what the last attempt came to.
    auto exchange(const char* path, const std::string& payload, bool with_token, clock::time_point deadline,
                  error_info& err, verdict& how) -> std::optional<json> {
        constexpr auto pause = std::chrono::milliseconds(50);  // between rounds: an election takes longer
        std::string last;
        std::string telling;  // the last failure that came with a reason (not a timeout)
        std::size_t in_round = 0;
        bool again = false;  // whether a failure of this round may pass
        for (;;) {
            const auto left = std::max(std::chrono::milliseconds(1),
                                       std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()));
            auto r = attempt(endpoints[current], path, payload, with_token, left);
            how = r.what;
            switch (r.what) {
                case verdict::answered: return std::move(r.answer);
                case verdict::token:
                case verdict::refused: err = fail_transport(explain(std::move(r.message), options.auth)); return std::nullopt;
                case verdict::next: again = true; break;
                case verdict::next_once: break;
            }
            if (!r.timed_out) {
                telling = r.message;
            }
            last = std::move(r.message);
            current = (current + 1) % endpoints.size();
            if (++in_round == endpoints.size()) {
                if (!again || clock::now() + pause >= deadline) {
                    break;
                }
                in_round = 0;
                again = false;
                std::this_thread::sleep_for(pause);
            } else if (clock::now() >= deadline) {
                break;
            }
        }
        // A last attempt cut short by the deadline says less than an earlier refusal.
        const bool earlier = !telling.empty() && telling != last;
        if (earlier) {
            last = telling;
        }
        if (endpoints.size() > 1) {
            last += " (no endpoint of " + std::to_string(endpoints.size()) + " answered; this was the " +
                    (earlier ? "last with a reason; the attempts after it timed out)" : "last)");
        }
        err = fail_transport(std::move(last));
        return std::nullopt;
    }

    // Gets a token when there are credentials and none is held; false with err set on failure.
    auto authenticate(clock::time_point deadline, error_info& err) -> bool {
        if (options.auth.user.empty() || !token.empty()) {
            return true;
        }
        verdict how = verdict::refused;
        const auto j = exchange("/v3/auth/authenticate",
                                json{{"name", options.auth.user}, {"password", options.auth.password}}.dump(), false,
                                deadline, err, how);
        if (!j) {
            if (how == verdict::refused || how == verdict::token) {  // etcd answered: it said no
                err = fail_transport("etcd: authentication of user " + detail::quote(options.auth.user) +
                                     " failed: " + err.message());
            }
            return false;
        }
        const auto t = j->find("token");
        if (t == j->end() || !t->is_string() || t->get_ref<const std::string&>().empty()) {
            err = fail_transport("etcd: authentication of user " + detail::quote(options.auth.user) +
                                 " answered without a token: " + j->dump().substr(0, 200));
            return false;
        }
        token = t->get<std::string>();
        return true;
    }

    // POSTs body to path (failover, authentication); the parsed answer, else nullopt with err set.
    auto post(const char* path, const json& body, error_info& err) -> std::optional<json> {
        err.clear();
        if (curl == nullptr) {
            err = fail_transport("etcd: curl_easy_init failed");
            return std::nullopt;
        }
        if (!setup_error.empty()) {
            err = fail_transport(setup_error);
            return std::nullopt;
        }
        const auto deadline = clock::now() + options.timeout;
        const std::string payload = body.dump();
        for (bool retried = false;; retried = true) {
            if (!authenticate(deadline, err)) {
                return std::nullopt;
            }
            verdict how = verdict::refused;
            auto j = exchange(path, payload, true, deadline, err, how);
            if (j || how != verdict::token || retried || options.auth.user.empty()) {
                return j;
            }
            token.clear();  // expired or revoked: once more with a new one
        }
    }
};

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

client::client(client_options options) : impl_(std::make_unique<impl>(std::move(options))) {}
client::~client() = default;
client::client(client&&) noexcept = default;
auto client::operator=(client&&) noexcept -> client& = default;

auto client::endpoint() const -> const std::string& { return impl_->endpoints[impl_->current]; }

auto client::get(std::string_view key, error_info& err, std::int64_t* revision) -> std::optional<key_value> {
    return guarded(err, [&]() -> std::optional<key_value> {
        const auto j = impl_->post("/v3/kv/range", {{"key", b64_encode(key)}}, err);
        if (!j) {
            return std::nullopt;
        }
        if (revision != nullptr) {
            const auto h = j->find("header");
            *revision = h != j->end() ? as_int64(*h, "revision") : 0;
        }
        const auto kvs = j->find("kvs");
        if (kvs == j->end() || !kvs->is_array() || kvs->empty()) {
            return std::nullopt;
        }
        return parse_kv(kvs->front());
    });
}

auto client::get_prefix(std::string_view prefix, error_info& err) -> std::optional<std::vector<key_value>> {
    return guarded(err, [&]() -> std::optional<std::vector<key_value>> {
        const auto j = impl_->post(
            "/v3/kv/range", {{"key", b64_encode(prefix)}, {"range_end", b64_encode(prefix_end(prefix))}}, err);
        if (!j) {
            return std::nullopt;
        }
        std::vector<key_value> out;
        const auto kvs = j->find("kvs");
        if (kvs != j->end() && kvs->is_array()) {
            for (const auto& kv : *kvs) {
                out.push_back(parse_kv(kv));
            }
        }
        std::sort(out.begin(), out.end(), [](const key_value& a, const key_value& b) { return a.key < b.key; });
        return out;
    });
}

auto client::put(std::string_view key, std::string_view value, error_info& err, std::int64_t lease) -> bool {
    return guarded(err, [&]() -> bool {
        json body = {{"key", b64_encode(key)}, {"value", b64_encode(value)}};
        if (lease != 0) {
            body["lease"] = std::to_string(lease);
        }
        return impl_->post("/v3/kv/put", body, err).has_value();
    });
}

auto client::put_if(std::string_view key, std::string_view value, std::int64_t expected, error_info& err) -> bool {
    return guarded(err, [&]() -> bool {
        const std::string k = b64_encode(key);
        json compare = {{"key", k}, {"result", "EQUAL"}};
        if (expected == 0) {
            compare["target"] = "CREATE";
            compare["create_revision"] = "0";
        } else {
            compare["target"] = "MOD";
            compare["mod_revision"] = std::to_string(expected);
        }
        const json body = {{"compare", json::array({compare})},
                           {"success", json::array({{{"request_put", {{"key", k}, {"value", b64_encode(value)}}}}})}};
        const auto j = impl_->post("/v3/kv/txn", body, err);
        return j && as_bool(*j, "succeeded");
    });
}

auto client::lease_grant(std::chrono::seconds ttl, error_info& err) -> std::optional<std::int64_t> {
    return guarded(err, [&]() -> std::optional<std::int64_t> {
        const auto j = impl_->post("/v3/lease/grant", {{"TTL", std::to_string(ttl.count())}}, err);
        if (!j) {
            return std::nullopt;
        }
        const std::int64_t id = as_int64(*j, "ID");
        if (id == 0) {
            err = fail_transport("etcd: lease grant answered without an ID: " + j->dump());
            return std::nullopt;
        }
        return id;
    });
}

auto client::lease_keepalive(std::int64_t lease, error_info& err) -> bool {
    return guarded(err, [&]() -> bool {
        const auto j = impl_->post("/v3/lease/keepalive", {{"ID", std::to_string(lease)}}, err);
        if (!j) {
            return false;
        }
        // A stream of one answer: {"result":{"ID":..,"TTL":..}}; TTL omitted (0) once the lease is gone.
        const auto r = j->find("result");
        const json& result = r != j->end() ? *r : *j;
        return as_int64(result, "TTL") > 0;
    });
}

auto client::lease_revoke(std::int64_t lease, error_info& err) -> bool {
    return guarded(err, [&]() -> bool {
        return impl_->post("/v3/lease/revoke", {{"ID", std::to_string(lease)}}, err).has_value();
    });
}

namespace {

struct watch_state {
    const std::function<bool(const watch_event&)>* on_event = nullptr;
    const std::atomic<bool>* stop = nullptr;
    std::string buffer;
    bool created = false;
    bool callback_stopped = false;
    bool compacted = false;
    std::string failure;  // set: the stream reported an error or a cancel
    std::int64_t failure_code = 0;  // gRPC's code of a stream error
    std::int64_t compact_revision = 0;
    std::int64_t delivered = 0;  // every event up to this revision was handed over (the resume point)
};

// One line of the stream: true to keep reading.
auto watch_line(watch_state& st, std::string_view line) -> bool {
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        st.failure = "etcd watch: a line that is not a JSON object: " + std::string(line.substr(0, 200));
        return false;
    }
    if (j.contains("error")) {
        st.failure = "etcd watch: " + error_text(j);
        st.failure_code = grpc_code(j);
        return false;
    }
    const auto r = j.find("result");
    if (r == j.end() || !r->is_object()) {
        return true;
    }
    const json& result = *r;
    if (as_bool(result, "created") && !as_bool(result, "canceled")) {
        st.created = true;
    }
    if (as_bool(result, "canceled")) {
        st.compact_revision = as_int64(result, "compact_revision");
        if (st.compact_revision != 0) {
            st.compacted = true;
        } else {
            const auto reason = result.find("cancel_reason");
            st.failure = "etcd watch: canceled" +
                         (reason != result.end() && reason->is_string() ? ": " + reason->get<std::string>() : "");
        }
        return false;
    }
    const auto events = result.find("events");
    const bool progress = !as_bool(result, "created") && !as_bool(result, "canceled") &&
                          (events == result.end() || !events->is_array() || events->empty());
    if (progress) {  // a progress notification: every event up to its header's revision was sent
        const auto h = result.find("header");
        if (h != result.end() && h->is_object()) {
            st.delivered = std::max(st.delivered, as_int64(*h, "revision"));
        }
    }
    if (events != result.end() && events->is_array()) {
        for (const auto& e : *events) {
            watch_event ev;
            const auto type = e.find("type");
            ev.deleted = type != e.end() && type->is_string() && type->get<std::string>() == "DELETE";
            const auto kv = e.find("kv");
            if (kv != e.end() && kv->is_object()) {
                ev.kv = parse_kv(*kv);
            }
            if (!(*st.on_event)(ev)) {
                st.callback_stopped = true;
                return false;
            }
            st.delivered = std::max(st.delivered, ev.kv.mod_revision);
            if (st.stop->load(std::memory_order_relaxed)) {
                return false;
            }
        }
    }
    return true;
}

auto watch_write(char* data, std::size_t size, std::size_t n, void* user) -> std::size_t {
    auto& st = *static_cast<watch_state*>(user);
    const std::size_t total = size * n;
    try {
        st.buffer.append(data, total);
        std::size_t start = 0;
        for (;;) {
            const std::size_t nl = st.buffer.find('\n', start);
            if (nl == std::string::npos) {
                break;
            }
            const std::string_view line(st.buffer.data() + start, nl - start);
            start = nl + 1;
            if (line.find_first_not_of(" \r\t") == std::string_view::npos) {
                continue;
            }
            if (!watch_line(st, line)) {
                return 0;  // a short count aborts the transfer
            }
        }
        st.buffer.erase(0, start);
        // The gateway may end a message without a newline: try the rest as a whole object.
        if (!st.buffer.empty() && st.buffer.back() == '}' && json::accept(st.buffer)) {
            const std::string line = std::move(st.buffer);
            st.buffer.clear();
            if (!watch_line(st, line)) {
                return 0;
            }
        }
    } catch (const std::exception& e) {
        st.failure = std::string("etcd watch: ") + e.what();
        return 0;
    } catch (...) {
        st.failure = "etcd watch: unknown exception";
        return 0;
    }
    return total;
}

}  // namespace

auto client::watch(std::string_view key, std::int64_t start_revision,
                   const std::function<bool(const watch_event&)>& on_event, const std::atomic<bool>& stop,
                   error_info& err) -> watch_end {
    err.clear();
    // How one stream ended: broken (unreachable, cut, unavailable: the next endpoint), token (etcd
    // refused the token: authenticate again), failed (a refusal any endpoint would repeat).
    enum class stream_end : std::uint8_t { stopped, compacted, broken, token, failed };
    try {
        impl& im = *impl_;
        if (!im.setup_error.empty()) {
            err = fail_transport(im.setup_error);
            return watch_end::failed;
        }
        // One stream on the current endpoint, from `from`; st records how far it got.
        const auto run_stream = [&](std::int64_t from, watch_state& st) -> stream_end {
            const std::string url = im.endpoints[im.current] + "/v3/watch";
            json create = {{"key", b64_encode(key)}, {"progress_notify", true}};
            if (from > 0) {
                create["start_revision"] = std::to_string(from);
            }
            const std::string payload = json{{"create_request", create}}.dump();
            CURL* h = curl_easy_init();
            CURLM* m = curl_multi_init();
            if (h == nullptr || m == nullptr) {
                if (h != nullptr) curl_easy_cleanup(h);
                if (m != nullptr) curl_multi_cleanup(m);
                err = fail_transport("etcd watch: curl init failed");
                return stream_end::failed;
            }
            slist_guard headers;
            char curl_detail[CURL_ERROR_SIZE] = {};
            im.prepare(h, url, payload, headers, true);
            curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_detail);
            curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(im.options.timeout.count()));
            curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
            curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 5L);
            curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 2L);
            curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &watch_write);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
            curl_multi_add_handle(m, h);

            CURLcode result = CURLE_OK;
            bool done = false;
            bool stopped = false;
            bool multi_failed = false;
            while (!done) {
                if (stop.load(std::memory_order_relaxed)) {
                    stopped = true;
                    break;
                }
                int running = 0;
                const CURLMcode mc = curl_multi_perform(m, &running);
                if (mc != CURLM_OK) {
                    err = fail_transport(std::string("etcd watch: ") + curl_multi_strerror(mc));
                    multi_failed = true;
                    break;
                }
                int queued = 0;
                while (CURLMsg* msg = curl_multi_info_read(m, &queued)) {
                    if (msg->msg == CURLMSG_DONE) {
                        result = msg->data.result;
                        done = true;
                    }
                }
                if (done || st.callback_stopped || st.compacted || !st.failure.empty()) {
                    break;
                }
                curl_multi_poll(m, nullptr, 0, 50, nullptr);  // stop is noticed within ~50 ms
            }
            long status = 0;
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
            curl_multi_remove_handle(m, h);
            curl_easy_cleanup(h);
            curl_multi_cleanup(m);

            if (stopped || st.callback_stopped || (stop.load() && st.failure.empty() && !st.compacted)) {
                return stream_end::stopped;
            }
            if (st.compacted) {
                err = detail::fail(transport, "etcd watch of '" + std::string(key) + "' from revision " +
                                                  std::to_string(from) + ": compacted up to revision " +
                                                  std::to_string(st.compact_revision));
                return stream_end::compacted;
            }
            if (multi_failed) {
                return stream_end::failed;
            }
            if (!st.failure.empty()) {
                // st.failure starts "etcd watch: "; name the endpoint after "etcd watch".
                err = fail_transport(explain("etcd watch " + url + st.failure.substr(10), im.options.auth));
                const auto v = classify(status, st.failure_code, st.failure);
                return v == verdict::token ? stream_end::token
                       : v == verdict::next ? stream_end::broken
                                            : stream_end::failed;
            }
            if (status != 0 && status != 200) {
                err = fail_transport("etcd watch " + url + ": HTTP " + std::to_string(status) + ": " + st.buffer);
                const auto v = classify(status, 0, st.buffer);
                return v == verdict::token ? stream_end::token
                       : v == verdict::refused ? stream_end::failed
                                               : stream_end::broken;
            }
            if (result != CURLE_OK) {
                const bool without_cert = im.options.tls.cert_file.empty();
                err = fail_transport("etcd watch " + curl_failure(url, result, curl_detail, without_cert).substr(5));
            } else {
                err = fail_transport("etcd watch " + url + ": the stream ended");
            }
            return stream_end::broken;
        };

        std::int64_t from = start_revision;
        std::size_t failed_in_row = 0;  // endpoints that failed one after the other
        bool fresh_token = false;       // authenticated again for this stream already
        for (;;) {
            if (!im.authenticate(clock::now() + im.options.timeout, err)) {
                return watch_end::failed;
            }
            watch_state st;
            st.on_event = &on_event;
            st.stop = &stop;
            const stream_end end = run_stream(from, st);
            if (st.delivered > 0 && st.delivered >= from) {
                from = st.delivered + 1;  // resume after what was handed over: nothing lost or repeated
            }
            switch (end) {
                case stream_end::stopped: err.clear(); return watch_end::stopped;
                case stream_end::compacted: return watch_end::compacted;
                case stream_end::failed: return watch_end::failed;
                case stream_end::token:
                    if (fresh_token && !st.created) {
                        return watch_end::failed;
                    }
                    fresh_token = true;
                    im.token.clear();
                    continue;
                case stream_end::broken: break;
            }
            if (st.created) {
                failed_in_row = 0;  // this endpoint served the watch for a while
                fresh_token = false;
            }
            im.current = (im.current + 1) % im.endpoints.size();
            if (++failed_in_row >= im.endpoints.size()) {
                return watch_end::failed;
            }
        }
    } catch (const std::exception& e) {
        err = fail_transport(std::string("etcd watch: ") + e.what());
    } catch (...) {
        err = fail_transport("etcd watch: unknown exception");
    }
    return watch_end::failed;
}

// ---- the protocol ----------------------------------------------------------------------------

namespace {

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

}  // namespace

auto read_current(client& c, std::string_view cluster, error_info& err, std::int64_t* revision)
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

auto load_current(client& c, std::string_view cluster, error_info& err) -> std::optional<snapshot> {
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

auto publish(client& c, const snapshot& s, error_info& err) -> bool {
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

auto read_reports(client& c, std::string_view cluster, error_info& err)
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

// ---- watcher ---------------------------------------------------------------------------------

struct watcher::impl {
    watcher_options options;
    client reads;
    client watching;
    client reporting;

    std::atomic<bool> stop{false};
    std::mutex mu;  // guards the fields below and the condition variables
    std::condition_variable cv;           // stop, adoption (wait_for_snapshot, reporter)
    std::unique_ptr<publisher> local;     // created by the first adoption
    std::atomic<publisher*> local_ptr{nullptr};
    std::string last_refusal;
    std::uint64_t report_version = 0;     // bumped on every adoption

    std::atomic<std::uint64_t> epoch{0};
    std::atomic<std::uint64_t> adopted{0};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> reconnects{0};
    std::atomic<std::chrono::steady_clock::rep> contact{0};

    // Only the watch thread touches these.
    digest128 fingerprint{};
    digest128 stated_fingerprint{};  // what current stated at the adoption (contract 1's for older values)
    std::int64_t handled_mod = -1;  // current's mod_revision last adopted or refused...
    std::string handled_value;      // ...and its value: a restored etcd may reuse a revision

    std::int64_t lease = 0;  // only the report thread (and the destructor after joining it)

    std::thread watch_thread;
    std::thread report_thread;

    explicit impl(watcher_options o)
        : options(std::move(o)), reads(options.connection), watching(options.connection),
          reporting(options.connection) {}

    void touch() {
        contact.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    }

    // Sleeps up to d; true when stop was requested.
    auto sleep_for(std::chrono::milliseconds d) -> bool {
        std::unique_lock lock(mu);
        return cv.wait_for(lock, d, [&] { return stop.load(); });
    }

    void refuse(refusal why, const std::string& message, std::int64_t mod) {
        handled_mod = mod;
        refused.fetch_add(1, std::memory_order_relaxed);
        {
            const std::lock_guard lock(mu);
            last_refusal = message;
        }
        if (options.on_refuse) {
            try {
                options.on_refuse(why, message);
            } catch (...) {
            }
        }
    }

    static auto refusal_of(const error_info& err) -> refusal {
        const auto code = fleet_code(err);
        if (!code) {
            return refusal::other;
        }
        switch (*code) {
            case fleet_errc::invalid_document: return refusal::malformed;
            case fleet_errc::wrong_cluster: return refusal::wrong_cluster;
            case fleet_errc::stale_epoch: return refusal::stale_epoch;
            case fleet_errc::fingerprint_mismatch:
            case fleet_errc::split_brain: return refusal::fingerprint_mismatch;
            default: return refusal::other;
        }
    }

    // Reads current and adopts what it names if it is new. Returns false on a transport error;
    // revision receives the store's revision at the read.
    auto sync(std::int64_t& revision, error_info& err) -> bool {
        const std::string ckey = current_key(options.cluster);
        const auto kv = reads.get(ckey, err, &revision);
        if (err) {
            return false;
        }
        touch();
        if (!kv) {
            return true;  // nothing published yet
        }
        if (kv->mod_revision == handled_mod && kv->value == handled_value) {
            return true;
        }
        handled_value = kv->value;  // whatever follows adopts or refuses this value
        error_info perr;
        const auto cur = parse_current(ckey, kv->value, perr);
        if (!cur) {
            refuse(refusal::malformed, perr.message(), kv->mod_revision);
            return true;
        }
        const std::uint64_t have = epoch.load(std::memory_order_relaxed);
        if (have != 0 && cur->epoch == have) {
            if (cur->fingerprint != fingerprint && cur->fingerprint != stated_fingerprint) {
                refuse(refusal::fingerprint_mismatch,
                       ckey + " states fingerprint " + cur->fingerprint.hex() + " for epoch " +
                           std::to_string(cur->epoch) + ", but the adopted snapshot of that epoch has " +
                           fingerprint.hex(),
                       kv->mod_revision);
            } else {
                handled_mod = kv->mod_revision;
            }
            return true;
        }
        if (cur->epoch < have) {
            refuse(refusal::stale_epoch, ckey + ": " + stale_message(cur->epoch, have, options.cluster) + " adopted here",
                   kv->mod_revision);
            return true;
        }
        const std::string skey = snapshot_key(options.cluster, cur->epoch);
        const auto doc = reads.get(skey, err);
        if (err) {
            return false;
        }
        if (!doc) {
            refuse(refusal::malformed, skey + ": missing, though current names epoch " + std::to_string(cur->epoch),
                   kv->mod_revision);
            return true;
        }
        error_info lerr;
        auto s = try_load_snapshot_json(doc->value, lerr);
        if (!s) {
            refuse(refusal_of(lerr), skey + ": " + lerr.message(), kv->mod_revision);
            return true;
        }
        if (s->cluster() != options.cluster) {
            refuse(refusal::wrong_cluster,
                   skey + ": the snapshot is of cluster " + detail::quote(s->cluster()) + ", not " +
                       detail::quote(options.cluster),
                   kv->mod_revision);
            return true;
        }
        if (!s->fingerprint_matches(cur->fingerprint)) {
            refuse(refusal::fingerprint_mismatch,
                   skey + ": the snapshot's fingerprint " + s->fingerprint().hex() + " is not " +
                       cur->fingerprint.hex() + ", which current states",
                   kv->mod_revision);
            return true;
        }
        if (s->epoch() <= have || s->epoch() != cur->epoch) {
            refuse(refusal::stale_epoch,
                   skey + ": the snapshot has epoch " + std::to_string(s->epoch()) + " (current names " +
                       std::to_string(cur->epoch) + ", adopted " + std::to_string(have) + ")",
                   kv->mod_revision);
            return true;
        }
        auto shared = std::make_shared<const snapshot>(std::move(*s));
        if (local_ptr.load(std::memory_order_relaxed) == nullptr) {
            auto p = std::make_unique<publisher>(shared);
            const std::lock_guard lock(mu);
            local = std::move(p);
            local_ptr.store(local.get(), std::memory_order_release);
        } else {
            error_info pub;
            if (!local_ptr.load(std::memory_order_relaxed)->try_publish(shared, pub)) {
                refuse(refusal_of(pub), skey + ": " + pub.message(), kv->mod_revision);
                return true;
            }
        }
        handled_mod = kv->mod_revision;
        fingerprint = shared->fingerprint();
        stated_fingerprint = cur->fingerprint;
        {
            const std::lock_guard lock(mu);
            epoch.store(shared->epoch(), std::memory_order_release);
            adopted.fetch_add(1, std::memory_order_relaxed);
            ++report_version;
        }
        cv.notify_all();
        if (options.on_adopt) {
            try {
                options.on_adopt(*shared);
            } catch (...) {
            }
        }
        return true;
    }

    void watch_loop() {
        std::mt19937_64 rng(std::random_device{}() ^
                            static_cast<std::uint64_t>(std::hash<std::string>{}(options.client_id)));
        auto backoff = options.backoff_min;
        bool failed_before = false;
        while (!stop.load()) {
            error_info err;
            std::int64_t revision = 0;
            watch_end end = watch_end::failed;
            try {
                if (sync(revision, err)) {
                    if (failed_before) {
                        reconnects.fetch_add(1, std::memory_order_relaxed);
                        failed_before = false;
                    }
                    backoff = options.backoff_min;
                    const std::string ckey = current_key(options.cluster);
                    bool resync_failed = false;
                    end = watching.watch(
                        ckey, revision + 1,
                        [&](const watch_event&) {
                            touch();
                            std::int64_t r = 0;
                            error_info e;
                            if (!sync(r, e)) {
                                resync_failed = true;
                                return false;
                            }
                            return true;
                        },
                        stop, err);
                    if (end == watch_end::stopped && !resync_failed) {
                        continue;  // stop requested (the loop ends), or nothing to do
                    }
                    if (end == watch_end::compacted) {
                        continue;  // re-read current, watch from the new revision
                    }
                }
            } catch (...) {
            }
            if (stop.load()) {
                break;
            }
            failed_before = true;
            const auto lo = options.backoff_min.count();
            const auto hi = std::max(lo, backoff.count());
            std::uniform_int_distribution<std::int64_t> pick(lo, hi);
            if (sleep_for(std::chrono::milliseconds(pick(rng)))) {
                break;
            }
            backoff = std::min(options.backoff_max, backoff * 2);
        }
    }

    auto report_value(std::uint64_t e, const digest128& fp) const -> std::string {
        return json{{"id", options.client_id},
                    {"epoch", e},
                    {"fingerprint", fp.hex()},
                    {"library", library_version()},
                    {"contract", KEYPLACE_CONTRACT_VERSION}}
            .dump();
    }

    void report_loop() {
        const auto ttl = std::max(options.lease_ttl, std::chrono::seconds(1));
        const auto interval = std::max(std::chrono::milliseconds(200),
                                       std::chrono::duration_cast<std::chrono::milliseconds>(ttl) / 3);
        const std::string key = clients_prefix(options.cluster) + options.client_id;
        std::uint64_t reported = ~std::uint64_t{0};
        auto next_keepalive = std::chrono::steady_clock::now();
        auto backoff = options.backoff_min;
        std::mt19937_64 rng(std::random_device{}() ^
                            static_cast<std::uint64_t>(std::hash<std::string>{}(options.client_id + "/report")));
        const auto jittered = [&](std::chrono::milliseconds most) {
            const auto lo = options.backoff_min.count();
            std::uniform_int_distribution<std::int64_t> pick(lo, std::max(lo, most.count()));
            return std::chrono::milliseconds(pick(rng));
        };
        while (!stop.load()) {
            bool ok = true;
            try {
                // The epoch and fingerprint of one snapshot, and nothing before the first adoption.
                std::uint64_t want = 0;
                std::shared_ptr<const snapshot> cur;
                {
                    const std::lock_guard lock(mu);
                    want = report_version;
                    if (local) {
                        cur = local->current();
                    }
                }
                error_info err;
                if (lease == 0) {
                    const auto id = reporting.lease_grant(ttl, err);
                    ok = id.has_value();
                    if (ok) {
                        lease = *id;
                        reported = ~std::uint64_t{0};
                        next_keepalive = std::chrono::steady_clock::now() + interval;
                    }
                } else if (std::chrono::steady_clock::now() >= next_keepalive) {
                    const bool alive = reporting.lease_keepalive(lease, err);
                    ok = !err;
                    if (ok && !alive) {
                        lease = 0;  // gone: grant a new one and report again
                        continue;
                    }
                    if (ok) {
                        next_keepalive = std::chrono::steady_clock::now() + interval;
                    }
                }
                if (ok && lease != 0 && cur && reported != want) {
                    ok = reporting.put(key, report_value(cur->epoch(), cur->fingerprint()), err, lease);
                    if (ok) {
                        reported = want;
                    } else {
                        lease = 0;  // perhaps expired on the server: grant a new one before retrying
                    }
                }
            } catch (...) {
                ok = false;
            }
            if (ok) {
                touch();
                backoff = options.backoff_min;
                std::unique_lock lock(mu);
                const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                    next_keepalive - std::chrono::steady_clock::now());
                cv.wait_for(lock, std::max(wait, std::chrono::milliseconds(1)),
                            [&] { return stop.load() || (local && report_version != reported); });
            } else {
                // A failure waits its backoff (doubled up to backoff_max, jittered) whatever is
                // owed: only stop cuts it short.
                const auto wait = jittered(backoff);
                backoff = std::min(backoff * 2, options.backoff_max);
                std::unique_lock lock(mu);
                cv.wait_for(lock, wait, [&] { return stop.load(); });
            }
        }
    }
};

auto check_watcher_options(const watcher_options& options) -> error_info {
    if (auto f = check_name(name_kind::cluster, options.cluster)) {
        return f;
    }
    return check_name(name_kind::client_id, options.client_id);
}

namespace {
auto checked(watcher_options&& options) -> watcher_options&& {
    if (auto f = check_watcher_options(options)) {
        detail::raise(f);
    }
    return std::move(options);
}
}  // namespace

watcher::watcher(watcher_options options) : impl_(std::make_unique<impl>(checked(std::move(options)))) {
    impl_->touch();
    try {
        impl_->watch_thread = std::thread([this] { impl_->watch_loop(); });
        impl_->report_thread = std::thread([this] { impl_->report_loop(); });
    } catch (...) {
        impl_->stop.store(true);
        impl_->cv.notify_all();
        if (impl_->watch_thread.joinable()) {
            impl_->watch_thread.join();
        }
        throw;  // a watcher without its threads would never adopt anything: say so
    }
}

watcher::~watcher() {
    {
        const std::lock_guard lock(impl_->mu);
        impl_->stop.store(true);
    }
    impl_->cv.notify_all();
    if (impl_->watch_thread.joinable()) {
        impl_->watch_thread.join();
    }
    if (impl_->report_thread.joinable()) {
        impl_->report_thread.join();
    }
    if (impl_->options.revoke_on_exit && impl_->lease != 0) {
        error_info err;
        (void)impl_->reporting.lease_revoke(impl_->lease, err);
    }
}

auto watcher::wait_for_snapshot(std::chrono::milliseconds timeout) -> bool {
    std::unique_lock lock(impl_->mu);
    return impl_->cv.wait_for(lock, timeout,
                              [&] { return impl_->local_ptr.load() != nullptr || impl_->stop.load(); }) &&
           impl_->local_ptr.load() != nullptr;
}

auto watcher::local() const -> publisher* { return impl_->local_ptr.load(std::memory_order_acquire); }

auto watcher::stats() const -> watcher_stats {
    watcher_stats s;
    s.epoch = impl_->epoch.load(std::memory_order_acquire);
    s.adopted = impl_->adopted.load(std::memory_order_relaxed);
    s.refused = impl_->refused.load(std::memory_order_relaxed);
    s.reconnects = impl_->reconnects.load(std::memory_order_relaxed);
    const auto then =
        std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(impl_->contact.load()));
    s.since_contact = std::chrono::steady_clock::now() - then;
    return s;
}

auto watcher::last_refusal() const -> std::string {
    const std::lock_guard lock(impl_->mu);
    return impl_->last_refusal;
}

}  // namespace etcd
KEYPLACE_NAMESPACE_END
