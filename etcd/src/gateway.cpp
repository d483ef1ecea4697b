// keyplace — keyplace::etcd's client of etcd's v3 JSON gateway (libcurl): one request with
// failover across endpoints, authentication, TLS, and the unary calls. The watch stream is in
// gateway_watch.cpp.
#include "gateway.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {
namespace internal {
namespace {

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

auto write_to_string(char* data, std::size_t size, std::size_t n, void* user) -> std::size_t {
    static_cast<std::string*>(user)->append(data, size * n);
    return size * n;
}

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

constexpr std::int64_t grpc_unavailable = 14;
constexpr std::int64_t grpc_unauthenticated = 16;

// etcd's answers to a token it no longer accepts (the client authenticates again).
auto token_refused(std::string_view text) -> bool {
    return text.find("invalid auth token") != std::string_view::npos ||
           text.find("revision of auth store is old") != std::string_view::npos;
}

}  // namespace

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

}  // namespace internal

using internal::as_bool;
using internal::as_int64;
using internal::b64_encode;
using internal::clock;
using internal::fail_transport;
using internal::guarded;
using internal::json;
using internal::parse_kv;
using internal::prefix_end;
using internal::verdict;

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

client::impl::impl(client_options o) : options(std::move(o)) {
    internal::global_init();
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
client::impl::~impl() {
    if (curl != nullptr) {
        curl_easy_cleanup(curl);
    }
}
void client::impl::prepare(CURL* h, const std::string& url, const std::string& payload, internal::slist_guard& headers,
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

auto client::impl::attempt(const std::string& endpoint, const char* path, const std::string& payload, bool with_token,
                           std::chrono::milliseconds left) -> attempt_result {
    const std::string url = endpoint + path;
    std::string answer;
    internal::slist_guard headers;
    char curl_detail[CURL_ERROR_SIZE] = {};
    curl_easy_reset(curl);
    prepare(curl, url, payload, headers, with_token);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_detail);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(left.count()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(left.count()));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &internal::write_to_string);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
    const CURLcode rc = curl_easy_perform(curl);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
    if (rc != CURLE_OK) {
        return {internal::lasting(rc) ? verdict::next_once : verdict::next, std::nullopt,
                internal::curl_failure(url, rc, curl_detail, options.tls.cert_file.empty()),
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
    const std::string text = object ? internal::error_text(j) : answer.substr(0, 300);
    return {internal::classify(status, object ? internal::grpc_code(j) : 0, text), std::nullopt,
            "etcd " + url + ": " + (status != 200 ? "HTTP " + std::to_string(status) + ": " : "") + text};
}

auto client::impl::exchange(const char* path, const std::string& payload, bool with_token, clock::time_point deadline,
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
            case verdict::refused: err = fail_transport(internal::explain(std::move(r.message), options.auth)); return std::nullopt;
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

auto client::impl::authenticate(clock::time_point deadline, error_info& err) -> bool {
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

auto client::impl::post(const char* path, const json& body, error_info& err) -> std::optional<json> {
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

}  // namespace etcd
KEYPLACE_NAMESPACE_END
