// keyplace-fleet's processes: starting memcached, stopping every child (servers.hpp).
#include "servers.hpp"

#include "fleet_options.hpp"

#include <arpa/inet.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace keyplace_fleet {

std::array<std::atomic<pid_t>, max_servers> children{};
std::array<char, 256> etcd_dir{};

void kill_children() noexcept {
    for (auto& c : children) {
        const pid_t p = c.exchange(0);
        if (p > 0) {
            ::kill(p, SIGKILL);
            ::waitpid(p, nullptr, 0);
        }
    }
}

// etcd's directory is removed at exit; like the servers, etcd dies with this program.
void remove_etcd_dir() noexcept {
    if (etcd_dir[0] != '\0') {
        std::error_code ec;
        std::filesystem::remove_all(etcd_dir.data(), ec);
        etcd_dir[0] = '\0';
    }
}

void cleanup() noexcept {
    kill_children();
    remove_etcd_dir();
}

extern "C" {
static void on_signal(int sig) {
    kill_children();  // kill, waitpid, fork and execv are async-signal-safe
    if (etcd_dir[0] != '\0') {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const char* const argv[] = {"/bin/rm", "-rf", "--", etcd_dir.data(), nullptr};
            ::execv(argv[0], const_cast<char* const*>(argv));
            ::_exit(127);
        }
        if (pid > 0) {
            ::waitpid(pid, nullptr, 0);
        }
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}
}

void stop_children_on_signals() {
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        ::sigaction(sig, &sa, nullptr);
    }
    std::signal(SIGPIPE, SIG_IGN);
}

auto find_executable(const std::string& name) -> std::optional<std::string> {
    if (name.find('/') != std::string::npos) {
        return executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
    }
    const char* path = std::getenv("PATH");
    std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::string dir(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        const std::string full = (dir.empty() ? "." : dir) + "/" + name;
        if (executable_file(full)) {
            return full;
        }
    }
    return std::nullopt;
}

auto loopback(std::uint16_t port) -> sockaddr_in {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

auto free_port() -> std::uint16_t {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        throw failure(std::string("cannot open a socket: ") + std::strerror(errno));
    }
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof a;
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    ::close(fd);
    if (!ok) {
        throw failure(std::string("cannot find a free port: ") + std::strerror(errno));
    }
    return ntohs(a.sin_port);
}

// Whether the server on port answers "version\r\n" with "VERSION ...".
static auto answers_version(std::uint16_t port) -> bool {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return false;
    }
    const sockaddr_in a = loopback(port);
    bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0 && ::write(fd, "version\r\n", 9) == 9;
    if (ok) {
        pollfd p{fd, POLLIN, 0};
        char buf[64] = {};
        ok = ::poll(&p, 1, 1000) == 1 && ::read(fd, buf, sizeof buf - 1) >= 8 && std::strncmp(buf, "VERSION ", 8) == 0;
    }
    ::close(fd);
    return ok;
}

auto spawn_until_ready(std::size_t slot, const std::vector<const char*>& argv, const std::function<void()>& as_child,
                       const std::function<bool()>& ready, int tries, useconds_t pause) -> pid_t {
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw failure(std::string("cannot fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        as_child();
        // After any change of user, which clears the parent-death signal.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) {
            ::_exit(1);
        }
        ::execv(argv.front(), const_cast<char* const*>(argv.data()));
        ::_exit(127);
    }
    children[slot].store(pid);
    for (int i = 0; i < tries; ++i) {
        if (ready()) {
            return pid;
        }
        int st = 0;
        if (::waitpid(pid, &st, WNOHANG) == pid) {
            children[slot].store(0);
            return 0;
        }
        ::usleep(pause);
    }
    if (const pid_t p = children[slot].exchange(0); p > 0) {
        ::kill(p, SIGKILL);
        ::waitpid(p, nullptr, 0);
    }
    return 0;
}

auto start_server(const std::string& binary, std::size_t slot) -> server {
    for (int attempt = 0; attempt < 5; ++attempt) {
        const std::uint16_t port = free_port();
        const std::string port_s = std::to_string(port);
        // As root, the child drops to nobody itself rather than by memcached's -u: a change of
        // user clears the parent-death signal, which is set after it.
        const auto drop_root = [] {
            if (::geteuid() == 0) {
                const passwd* nobody = ::getpwnam("nobody");
                if (nobody == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(nobody->pw_gid) != 0 ||
                    ::setuid(nobody->pw_uid) != 0) {
                    ::_exit(126);
                }
            }
        };
        const pid_t pid = spawn_until_ready(
            slot, {binary.c_str(), "-l", "127.0.0.1", "-p", port_s.c_str(), "-U", "0", "-m", "64", "-t", "1", nullptr},
            drop_root, [&] { return answers_version(port); }, 500, 10000);
        if (pid != 0) {
            return {slot, port, pid};
        }
    }
    throw failure("memcached (" + binary + ") did not answer version on 127.0.0.1 after 5 attempts");
}

connection::connection(std::uint16_t port, bool noreply) : mc(memcached_create(nullptr)) {
    if (mc == nullptr || memcached_server_add(mc, "127.0.0.1", port) != MEMCACHED_SUCCESS) {
        throw failure("libmemcached: cannot add server 127.0.0.1:" + std::to_string(port));
    }
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_NOREPLY, noreply ? 1 : 0);
}

void delete_key(connection& c, std::size_t server, const std::string& key) {
    const auto rc = memcached_delete(c.mc, key.data(), key.size(), 0);
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED && rc != MEMCACHED_NOTFOUND) {
        throw failure("memcached: delete failed on mc-" + std::to_string(server) + ": " + memcached_strerror(c.mc, rc));
    }
}

void fleet::flush(std::size_t server) {
    if (memcached_flush(conns[server]->mc, 0) != MEMCACHED_SUCCESS) {
        throw failure("memcached: flush_all failed on mc-" + std::to_string(server) + ": " +
                      memcached_last_error_message(conns[server]->mc));
    }
}

auto start_fleet(const std::string& binary, std::size_t count, bool noreply) -> fleet {
    fleet f;
    for (std::size_t i = 0; i < count; ++i) {
        f.servers.push_back(start_server(binary, i));
        f.conns.push_back(std::make_unique<connection>(f.servers.back().port, noreply));
    }
    return f;
}

}  // namespace keyplace_fleet
