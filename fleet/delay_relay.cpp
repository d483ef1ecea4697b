// The late client's relay to etcd (delay_relay.hpp).
#include "delay_relay.hpp"

#include "fleet_options.hpp"
#include "servers.hpp"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace keyplace_fleet {

auto now_ns() -> std::int64_t {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);  // one clock for every process of this machine
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

namespace {

struct chunk {
    std::int64_t due;
    std::string bytes;
};
struct link {
    int down = -1;  // the client's side
    int up = -1;    // etcd's side
    bool up_closed = false;
    bool dead = false;
    std::deque<chunk> held;
};

auto write_all(int fd, const char* p, std::size_t n) -> bool {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

}  // namespace

delay_relay::delay_relay(const sockaddr_in& upstream, std::chrono::milliseconds delay)
    : upstream_(upstream), delay_ns_(static_cast<std::int64_t>(delay.count()) * 1000000) {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    if (listen_ < 0 || ::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_, 16) != 0 || ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        const std::string why = std::strerror(errno);
        if (listen_ >= 0) {
            ::close(listen_);
        }
        throw failure("the late client's relay cannot listen on 127.0.0.1: " + why);
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
}

delay_relay::~delay_relay() {
    stop_.store(true);
    thread_.join();
    ::close(listen_);
}

void delay_relay::loop() {
    std::vector<link> links;
    std::vector<char> buf(1 << 16);
    while (!stop_.load()) {
        std::vector<pollfd> fds{{listen_, POLLIN, 0}};
        std::int64_t wake = now_ns() + 20000000;  // checks stop_ every 20 ms
        for (const auto& l : links) {
            fds.push_back({l.down, POLLIN, 0});
            fds.push_back({l.up_closed ? -1 : l.up, POLLIN, 0});
            if (!l.held.empty()) {
                wake = std::min(wake, l.held.front().due);
            }
        }
        const auto wait_ms = std::max<std::int64_t>(0, (wake - now_ns() + 999999) / 1000000);
        if (::poll(fds.data(), fds.size(), static_cast<int>(wait_ms)) < 0 && errno != EINTR) {
            return;
        }
        for (std::size_t j = 0; j < links.size(); ++j) {
            auto& l = links[j];
            if ((fds[1 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                const ssize_t n = ::read(l.down, buf.data(), buf.size());
                l.dead = n <= 0 || l.up_closed || !write_all(l.up, buf.data(), static_cast<std::size_t>(n));
            }
            if (!l.dead && !l.up_closed && (fds[2 + 2 * j].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
                const ssize_t n = ::read(l.up, buf.data(), buf.size());
                if (n <= 0) {
                    l.up_closed = true;
                } else {
                    l.held.push_back({now_ns() + delay_ns_, std::string(buf.data(), static_cast<std::size_t>(n))});
                }
            }
            const std::int64_t t = now_ns();
            while (!l.dead && !l.held.empty() && l.held.front().due <= t) {
                l.dead = !write_all(l.down, l.held.front().bytes.data(), l.held.front().bytes.size());
                l.held.pop_front();
            }
            l.dead = l.dead || (l.up_closed && l.held.empty());
        }
        std::erase_if(links, [](const link& l) {
            if (l.dead) {
                ::close(l.down);
                ::close(l.up);
            }
            return l.dead;
        });
        if ((fds[0].revents & POLLIN) != 0) {
            const int down = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
            if (down >= 0) {
                const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (up >= 0 && ::connect(up, reinterpret_cast<const sockaddr*>(&upstream_), sizeof upstream_) == 0) {
                    const int one = 1;
                    ::setsockopt(down, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    ::setsockopt(up, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    links.push_back({down, up, false, false, {}});
                } else {
                    ::close(down);
                    if (up >= 0) {
                        ::close(up);
                    }
                }
            }
        }
    }
    for (const auto& l : links) {
        ::close(l.down);
        ::close(l.up);
    }
}

}  // namespace keyplace_fleet
