// keyplace — keyplace::etcd's gateway client, shared by its two sources (not installed): the
// client's state and its requests (gateway.cpp), which the watch stream (gateway_watch.cpp) uses.
#ifndef KEYPLACE_ETCD_SRC_GATEWAY_HPP_INCLUDED
#define KEYPLACE_ETCD_SRC_GATEWAY_HPP_INCLUDED

#include "protocol.hpp"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {
namespace internal {

using clock = std::chrono::steady_clock;

// What one attempt on one endpoint came to.
enum class verdict : std::uint8_t {
    answered,    // a JSON object without an error
    next,        // unreachable, or unavailable there (no leader, leader changed): the next endpoint
    next_once,   // unusable there (TLS verification, a certificate file): the next, but no second round
    token,       // etcd refused the auth token (invalid, expired, issued before an auth change)
    refused,     // an answer every endpoint would give (permission denied, a bad request)
};

// An HTTP status, gRPC code and error text: what to do next.
[[nodiscard]] auto classify(long status, std::int64_t code, std::string_view text) -> verdict;
// The message of a refused request, with what the user can do about it.
[[nodiscard]] auto explain(std::string message, const credentials& auth) -> std::string;
// without_cert: TLS without a client certificate, which a member with --client-cert-auth refuses
// after the handshake (the failure then reads as a send or receive error).
[[nodiscard]] auto curl_failure(const std::string& url, CURLcode rc, const char* detail_text, bool without_cert)
    -> std::string;

struct slist_guard {
    curl_slist* list = nullptr;
    slist_guard() = default;
    slist_guard(const slist_guard&) = delete;
    auto operator=(const slist_guard&) -> slist_guard& = delete;
    ~slist_guard() { curl_slist_free_all(list); }
};

}  // namespace internal

struct client::impl {
    client_options options;
    std::vector<std::string> endpoints;  // never empty, without a trailing '/'
    std::size_t current = 0;             // where the next request goes first
    std::string token;                   // etcd's auth token, once authenticated
    std::string setup_error;             // options that cannot work: every call fails with it
    CURL* curl = nullptr;

    explicit impl(client_options o);
    ~impl();
    impl(const impl&) = delete;
    auto operator=(const impl&) -> impl& = delete;

    // What every request carries: the URL, the body, the headers, TLS. headers must outlive it.
    void prepare(CURL* h, const std::string& url, const std::string& payload, internal::slist_guard& headers,
                 bool with_token) const;

    struct attempt_result {
        internal::verdict what = internal::verdict::refused;
        std::optional<nlohmann::json> answer;
        std::string message;
        bool timed_out = false;  // the request's share of the deadline ran out: no word from the member
    };
    auto attempt(const std::string& endpoint, const char* path, const std::string& payload, bool with_token,
                 std::chrono::milliseconds left) -> attempt_result;

    // Sends payload to path, from the current endpoint on, moving to the next while they are
    // unreachable or unavailable, in rounds until the deadline. how: what the last attempt came to.
    auto exchange(const char* path, const std::string& payload, bool with_token, internal::clock::time_point deadline,
                  error_info& err, internal::verdict& how) -> std::optional<nlohmann::json>;

    // Gets a token when there are credentials and none is held; false with err set on failure.
    auto authenticate(internal::clock::time_point deadline, error_info& err) -> bool;

    // POSTs body to path (failover, authentication); the parsed answer, else nullopt with err set.
    auto post(const char* path, const nlohmann::json& body, error_info& err) -> std::optional<nlohmann::json>;
};

}  // namespace etcd
KEYPLACE_NAMESPACE_END

#endif
