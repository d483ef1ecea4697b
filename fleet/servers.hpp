// keyplace-fleet's processes: the memcached servers it starts on 127.0.0.1, every child (servers,
// etcd, client processes) recorded where a signal handler can stop it, and one libmemcached
// connection per server.
#ifndef KEYPLACE_FLEET_PROGRAM_SERVERS_HPP_INCLUDED
#define KEYPLACE_FLEET_PROGRAM_SERVERS_HPP_INCLUDED

#include <libmemcached/memcached.h>

#include <netinet/in.h>
#include <sys/types.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keyplace_fleet {

// Exit status when memcached (or, for --etcd start, etcd) is absent: ctest's conventional skip code.
inline constexpr int status_skipped = 77;

// Children (memcached, etcd, client processes) are recorded in a fixed array the signal handler can
// read: the servers from slot 0, etcd and the client processes at the end (clients.cpp).
inline constexpr std::size_t max_servers = 16;
extern std::array<std::atomic<pid_t>, max_servers> children;

// The directory of an etcd this program started (--etcd start), removed at exit and on a signal.
extern std::array<char, 256> etcd_dir;

void kill_children() noexcept;
void remove_etcd_dir() noexcept;

// Every child stopped by pid, and etcd's directory removed (--etcd start).
void cleanup() noexcept;

// SIGINT, SIGTERM and SIGHUP stop every child and remove etcd's directory, then end this program
// as the signal would; SIGPIPE is ignored, so that a lost output is a failed write.
void stop_children_on_signals();

// NAME itself when it holds a '/', else the first executable NAME on PATH.
auto find_executable(const std::string& name) -> std::optional<std::string>;

// 127.0.0.1:PORT.
auto loopback(std::uint16_t port) -> sockaddr_in;

// A port the kernel has just handed out (bound, then released for memcached to take).
auto free_port() -> std::uint16_t;

struct server {
    std::size_t slot = 0;  // index into children
    std::uint16_t port = 0;
    pid_t pid = 0;
};

// Forks a child, recorded in children[slot], that becomes `argv` (after `as_child`, run in the
// child first), dying with this program even when that is killed with SIGKILL; then polls
// `ready` `tries` times, `pause` apart. Returns the pid once ready, or 0 when the child exited
// first (its port was taken meanwhile) or never got ready (it is killed then).
auto spawn_until_ready(std::size_t slot, const std::vector<const char*>& argv, const std::function<void()>& as_child,
                       const std::function<bool()>& ready, int tries, useconds_t pause) -> pid_t;

// Starts memcached on a free loopback port and waits until it answers version (5 s at most).
auto start_server(const std::string& binary, std::size_t slot) -> server;

// One libmemcached connection per server; placement is keyplace's.
struct connection {
    memcached_st* mc = nullptr;
    // noreply: sets and deletes without a round trip, for one client alone. Several clients wait
    // for each reply, so that a delete has happened on the server before the write is over.
    connection(std::uint16_t port, bool noreply);
    connection(const connection&) = delete;
    auto operator=(const connection&) -> connection& = delete;
    ~connection() { memcached_free(mc); }
};

// Deletes key on server mc-<server> through c (a key that is not there is no error).
void delete_key(connection& c, std::size_t server, const std::string& key);

// The servers of a run and this process's connections to them.
struct fleet {
    std::vector<server> servers;
    std::vector<std::unique_ptr<connection>> conns;
    void flush(std::size_t server);
    void remove(std::size_t server, const std::string& key) { delete_key(*conns.at(server), server, key); }
};

// The servers mc-0..mc-<count - 1>, started with the memcached binary in children[0..count), and a
// connection to each (noreply: see connection).
auto start_fleet(const std::string& binary, std::size_t count, bool noreply) -> fleet;

}  // namespace keyplace_fleet

#endif
