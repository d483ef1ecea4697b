// keyplace-cli's /metrics server (metrics_server.hpp): cpp-httplib's server on one address.
#include "metrics_server.hpp"

#include "args.hpp"

#include <httplib.h>

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

namespace keyplace_cli {

struct metrics_server::impl {
    httplib::Server server;
    std::thread thread;
    std::uint16_t port = 0;
    std::atomic<bool> done{false};  // listen_after_bind returned
};

metrics_server::metrics_server(const metrics_address& address, std::function<std::string()> body)
    : impl_(std::make_unique<impl>()) {
    // httplib sets SO_REUSEPORT by default, with which a second process could listen on the same
    // port and take half the scrapes: SO_REUSEADDR alone (a restart may reuse a port in TIME_WAIT).
    impl_->server.set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    impl_->server.Get("/metrics", [body = std::move(body)](const httplib::Request&, httplib::Response& res) {
        res.set_content(body(), "text/plain; version=0.0.4; charset=utf-8");
    });
    int bound = 0;
    if (address.port == 0) {
        bound = impl_->server.bind_to_any_port(address.host);
    } else if (impl_->server.bind_to_port(address.host, address.port)) {
        bound = address.port;
    }
    if (bound <= 0) {
        input_error("--metrics: cannot listen on " + quote(address.host + ":" + std::to_string(address.port)) +
                    " (in use, or not an address of this machine)");
    }
    impl_->port = static_cast<std::uint16_t>(bound);
    impl_->thread = std::thread([this] {
        impl_->server.listen_after_bind();
        impl_->done = true;
    });
    // stop() only stops a server that is running: wait until it is, so that the destructor's does.
    while (!impl_->server.is_running() && !impl_->done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

metrics_server::~metrics_server() {
    impl_->server.stop();
    if (impl_->thread.joinable()) {
        impl_->thread.join();
    }
}

auto metrics_server::port() const -> std::uint16_t { return impl_->port; }

}  // namespace keyplace_cli
