// keyplace-cli etcd watch --metrics ADDR:PORT: GET /metrics served over HTTP by cpp-httplib
// (Debian's libcpp-httplib-dev), on threads of its own, while the watch runs. Built where
// configure finds cpp-httplib (metrics_server_built); elsewhere --metrics is refused.
#ifndef KEYPLACE_CLI_METRICS_SERVER_HPP_INCLUDED
#define KEYPLACE_CLI_METRICS_SERVER_HPP_INCLUDED

#include "args.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

namespace keyplace_cli {

#ifdef KEYPLACE_CLI_HTTPLIB
inline constexpr bool metrics_server_built = true;
#else
inline constexpr bool metrics_server_built = false;
#endif

/// Where to listen: an IPv4 address and a port (0: any free one).
struct metrics_address {
    std::string host;
    std::uint16_t port = 0;
};

/// "A.B.C.D:PORT", else a usage error naming the value.
inline auto parse_metrics_address(const std::string& text) -> metrics_address {
    const auto colon = text.rfind(':');
    const std::string host = colon == std::string::npos ? text : text.substr(0, colon);
    in_addr parsed{};
    unsigned port = 0;
    const char* const digits = text.data() + (colon == std::string::npos ? text.size() : colon + 1);
    const char* const end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(digits, end, port);
    if (colon == std::string::npos || ::inet_pton(AF_INET, host.c_str(), &parsed) != 1 || digits == end ||
        ec != std::errc{} || at != end || port > 65535) {
        usage_error("--metrics " + quote(text) + " is not ADDRESS:PORT (an IPv4 address, a port 0..65535)");
    }
    return {host, static_cast<std::uint16_t>(port)};
}

class metrics_server {
public:
    /// Listens on the address (port 0: a free port, port() says which) and answers GET /metrics
    /// with body(), called on the server's threads (it must be thread-safe). An address that
    /// cannot be listened on is an input error.
    metrics_server(const metrics_address& address, std::function<std::string()> body);
    ~metrics_server();  ///< stops listening and joins the server's thread
    metrics_server(const metrics_server&) = delete;
    auto operator=(const metrics_server&) -> metrics_server& = delete;

    [[nodiscard]] auto port() const -> std::uint16_t;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

#ifndef KEYPLACE_CLI_HTTPLIB
// Without cpp-httplib: etcd watch refuses --metrics before it would make one (metrics_server_built).
struct metrics_server::impl {};
inline metrics_server::metrics_server(const metrics_address&, std::function<std::string()>) {
    usage_error("--metrics: this keyplace-cli is built without cpp-httplib (Debian: libcpp-httplib-dev)");
}
inline metrics_server::~metrics_server() = default;
inline auto metrics_server::port() const -> std::uint16_t { return 0; }
#endif

}  // namespace keyplace_cli

#endif
