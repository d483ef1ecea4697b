// The late client's path to etcd (keyplace-fleet --clients N --late-ms D): a loopback relay that
// holds every byte etcd sends for D before passing it on.
#ifndef KEYPLACE_FLEET_PROGRAM_DELAY_RELAY_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_DELAY_RELAY_HPP_INCLUDED

#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace keyplace_fleet {

// Nanoseconds of CLOCK_MONOTONIC: one clock for every process of this machine.
auto now_ns() -> std::int64_t;

// Everything the client hears from etcd through the relay (reads, watch events, the replies to its
// reports) arrives `delay` late; what it sends arrives at once. One thread relays every connection.
class delay_relay {
public:
    delay_relay(const sockaddr_in& upstream, std::chrono::milliseconds delay);
    delay_relay(const delay_relay&) = delete;
    auto operator=(const delay_relay&) -> delay_relay& = delete;
    ~delay_relay();
    [[nodiscard]] auto port() const -> std::uint16_t { return port_; }

private:
    void loop();

    sockaddr_in upstream_;
    std::int64_t delay_ns_;
    int listen_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace keyplace_fleet

#endif
