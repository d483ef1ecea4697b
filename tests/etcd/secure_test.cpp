// keyplace::etcd against a secured 3-member etcd: TLS with client certificates and etcd
// authentication, as tests/etcd/etcd_cluster.sh starts it in KEYPLACE_ETCD_CLUSTER_DIR (a ctest
// fixture; simple tokens expire after 5 idle seconds there). Without it (no DIR/endpoints) the
// binary exits 77, which ctest reports as skipped. Every test case uses its own cluster name, and
// a case that kills a member starts it again before it ends.
#include <keyplace/etcd.hpp>
#include <keyplace/fleet/json.hpp>

#include "../keyplace_catch.hpp"
#include "etcd_test_support.hpp"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace etcd = keyplace::etcd;
using keyplace::errc;
using keyplace::error_info;
using keyplace::snapshot;
using namespace std::chrono_literals;

namespace {

auto cluster_dir() -> std::string {
    if (const char* d = std::getenv("KEYPLACE_ETCD_CLUSTER_DIR")) {
        return d;
    }
    return KEYPLACE_ETCD_CLUSTER_DIR;
}

auto read_line(const std::string& path) -> std::string {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// The members' URLs, in member order.
auto members() -> std::vector<std::string> {
    static const std::vector<std::string> urls = [] {
        std::vector<std::string> out;
        for (int n = 0; n < 3; ++n) {
            out.push_back(read_line(cluster_dir() + "/m" + std::to_string(n) + "/endpoint"));
            if (out.back().empty()) {
                std::fprintf(stderr,
                             "keyplace_etcd_secure_tests: no secured etcd in %s (start it with "
                             "tests/etcd/etcd_cluster.sh start DIR 5); skipping\n",
                             cluster_dir().c_str());
                std::exit(77);
            }
        }
        return out;
    }();
    return urls;
}

auto tls_file(const char* name) -> std::string { return cluster_dir() + "/tls/" + name; }

// What the script prints (its stdout), and whether it exited 0.
auto script(const std::string& args, std::string* out = nullptr) -> bool {
    const std::string cmd = std::string("sh '") + KEYPLACE_ETCD_CLUSTER_SCRIPT + "' " + args;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return false;
    }
    std::string text;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p) != nullptr) {
        text += buf;
    }
    const int status = pclose(p);
    if (out != nullptr) {
        *out = text;
    }
    return status == 0;
}

auto leader() -> int {
    std::string out;
    REQUIRE(script("leader '" + cluster_dir() + "'", &out));
    const int n = std::atoi(out.c_str());
    REQUIRE((n >= 0 && n <= 2));
    return n;
}

// Starts member n again (after a kill) when the scope ends.
struct restarted_at_end {
    int n;
    explicit restarted_at_end(int member) : n(member) {}
    ~restarted_at_end() { (void)script("restart '" + cluster_dir() + "' " + std::to_string(n)); }
    restarted_at_end(const restarted_at_end&) = delete;
    auto operator=(const restarted_at_end&) -> restarted_at_end& = delete;
};

// A cluster name of this process, so that a second run against the same etcd starts afresh.
auto unique(const std::string& name) -> std::string { return name + "-" + std::to_string(::getpid()); }

// A thread that is told to finish (finish()) and joined when the scope ends, also when a
// REQUIRE leaves it early.
struct scoped_thread {
    std::function<void()> finish;
    std::thread thread;
    scoped_thread(std::function<void()> on_exit, std::function<void()> body)
        : finish(std::move(on_exit)), thread(std::move(body)) {}
    ~scoped_thread() { join(); }
    scoped_thread(const scoped_thread&) = delete;
    auto operator=(const scoped_thread&) -> scoped_thread& = delete;
    void join() {
        if (thread.joinable()) {
            finish();
            thread.join();
        }
    }
};

// The members' URLs with member `first` first.
auto endpoints_from(int first) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i) {
        out.push_back(members()[static_cast<std::size_t>((first + i) % 3)]);
    }
    return out;
}

auto secured(std::vector<std::string> endpoints = members(), const std::string& user = "kp",
             const std::string& password = "kppw") -> etcd::client_options {
    etcd::client_options o;
    o.endpoints = std::move(endpoints);
    o.timeout = 5000ms;
    o.tls = {.ca_file = tls_file("ca.pem"), .cert_file = tls_file("client.pem"), .key_file = tls_file("client-key.pem")};
    o.auth = {.user = user, .password = password};
    return o;
}

auto snap(const std::string& cluster, std::uint64_t epoch) -> snapshot { return keyplace_etcd_test::snap(cluster, epoch); }

auto eventually(const std::function<bool()>& pred) -> bool { return keyplace_etcd_test::eventually(pred, 20000ms); }

// Publishes s, retrying while etcd is unavailable (a leader change): never a stale epoch or a
// split brain, which would mean a retry did not recognise its own write.
void publish_through(etcd::client& c, const snapshot& s) {
    for (int attempt = 0;; ++attempt) {
        error_info err;
        if (etcd::publish(c, s, err)) {
            return;
        }
        INFO("epoch " << s.epoch() << ", attempt " << attempt << ": " << err.message());
        REQUIRE(err == errc::unavailable);
        REQUIRE(attempt < 20);
        std::this_thread::sleep_for(100ms);
    }
}

auto current_version(etcd::client& c, const std::string& cluster) -> std::int64_t {
    error_info err;
    const auto kv = c.get(etcd::current_key(cluster), err);
    INFO(err.message());
    REQUIRE(kv);
    return kv->version;
}

// Every epoch a raw watch of `current` sees, in order.
struct current_events {
    std::mutex mu;
    std::vector<std::uint64_t> epochs;
    auto snapshot_of() -> std::vector<std::uint64_t> {
        const std::lock_guard lock(mu);
        return epochs;
    }
    auto on_event() {
        return [this](const etcd::watch_event& e) {
            const auto j = nlohmann::json::parse(e.kv.value, nullptr, false);
            const std::lock_guard lock(mu);
            epochs.push_back(j.is_object() && j.contains("epoch") ? j["epoch"].get<std::uint64_t>() : 0);
            return true;
        };
    }
};

auto one_to(std::uint64_t n) -> std::vector<std::uint64_t> {
    std::vector<std::uint64_t> out;
    for (std::uint64_t e = 1; e <= n; ++e) {
        out.push_back(e);
    }
    return out;
}

}  // namespace

TEST_CASE("etcd endpoints: a comma-separated list, each an http:// or https:// URL", "[etcd-secure]") {
    error_info err;
    CHECK(etcd::parse_endpoints("https://10.0.0.1:2379,http://b:2379", err) ==
          std::vector<std::string>{"https://10.0.0.1:2379", "http://b:2379"});
    CHECK(!err);
    CHECK(etcd::parse_endpoints("https://a:1,,https://b:2", err).empty());
    CHECK(err == errc::invalid_argument);
    CHECK(err.message() == "endpoint '' of 'https://a:1,,https://b:2' is not an http:// or https:// URL");
    CHECK(etcd::parse_endpoints("a:2379", err).empty());
    CHECK(err.message() == "endpoint 'a:2379' of 'a:2379' is not an http:// or https:// URL");
    CHECK(etcd::parse_endpoints("https://", err).empty());
    CHECK(err == errc::invalid_argument);
    // Found by the etcd_options fuzz target: a control byte, white space or a missing host was
    // accepted and handed to curl.
    CHECK(etcd::parse_endpoints("http://a\x01", err).empty());
    CHECK(err.message() == "endpoint 'http://a\\x01' of 'http://a\\x01' is not an http:// or https:// URL");
    CHECK(etcd::parse_endpoints("https://a:1,http://b c:2", err).empty());
    CHECK(err == errc::invalid_argument);
    CHECK(etcd::parse_endpoints("http:///path", err).empty());
    CHECK(err == errc::invalid_argument);
}

TEST_CASE("etcd secured: a client without a client certificate is refused", "[etcd-secure]") {
    auto o = secured();
    o.tls.cert_file.clear();
    o.tls.key_file.clear();
    etcd::client c(o);
    error_info err;
    CHECK_FALSE(c.get("/keyplace/x", err));
    CHECK(err == errc::unavailable);
    INFO(err.message());
    CHECK(err.message().find("no client certificate was given") != std::string::npos);
    CHECK(err.message().find("no endpoint of 3 answered") != std::string::npos);
}

TEST_CASE("etcd secured: a server certificate not signed by the given CA is refused", "[etcd-secure]") {
    auto o = secured();
    o.tls.ca_file = tls_file("other-ca.pem");
    etcd::client c(o);
    error_info err;
    CHECK_FALSE(c.put("/keyplace/secure-ca/x", "1", err));
    INFO(err.message());
    CHECK(err.message().find("SSL") != std::string::npos);
    // Nothing was written.
    etcd::client good(secured());
    CHECK_FALSE(good.get("/keyplace/secure-ca/x", err));
    CHECK(!err);
}

TEST_CASE("etcd secured: a client without a user or with a wrong password is refused, naming the reason",
          "[etcd-secure]") {
    error_info err;
    etcd::client anonymous(secured(members(), "", ""));
    CHECK_FALSE(anonymous.put("/keyplace/secure-anon/x", "1", err));
    CHECK(err == errc::unavailable);
    CHECK(err.message().find("user name is empty") != std::string::npos);
    CHECK(err.message().find("give a user and password") != std::string::npos);

    etcd::client wrong(secured(members(), "kp", "not-the-password"));
    CHECK_FALSE(wrong.get("/keyplace/secure-anon/x", err));
    CHECK(err.message().find("authentication of user 'kp' failed") != std::string::npos);
    CHECK(err.message().find("invalid user ID or password") != std::string::npos);

    etcd::client outsider(secured(members(), "outsider", "outsiderpw"));
    CHECK_FALSE(outsider.get("/keyplace/secure-anon/x", err));
    CHECK(err.message().find("permission denied (user 'outsider')") != std::string::npos);

    etcd::client half({.endpoints = members(), .tls = {.ca_file = tls_file("ca.pem"), .cert_file = tls_file("client.pem")}});
    CHECK_FALSE(half.get("/keyplace/secure-anon/x", err));
    CHECK(err.message().find("needs both a certificate and a key file") != std::string::npos);

    etcd::client good(secured());
    CHECK_FALSE(good.get("/keyplace/secure-anon/x", err));
    CHECK(!err);  // nothing was written by the refused clients
}

TEST_CASE("etcd secured: publish and watch with TLS and a user, past an endpoint that does not answer",
          "[etcd-secure]") {
    const std::string cluster = unique("secure-basic");
    std::vector<std::string> eps = {"https://127.0.0.1:1"};  // nothing listens there
    for (const auto& m : members()) {
        eps.push_back(m);
    }
    etcd::client c(secured(eps));
    etcd::watcher_options wo;
    wo.connection = secured(eps);
    wo.cluster = cluster;
    wo.client_id = "w1";
    wo.lease_ttl = 3s;
    wo.backoff_min = 20ms;
    wo.backoff_max = 300ms;
    etcd::watcher w(wo);
    publish_through(c, snap(cluster, 1));
    REQUIRE(w.wait_for_snapshot(20000ms));
    publish_through(c, snap(cluster, 2));
    CHECK(eventually([&] { return w.stats().epoch == 2; }));
    error_info err;
    CHECK(eventually([&] {
        const auto r = etcd::read_reports(c, cluster, err);
        return r && r->size() == 1 && (*r)[0].epoch == 2;
    }));
    CHECK(c.endpoint() != "https://127.0.0.1:1");  // it stays on the endpoint that answered
}

TEST_CASE("etcd secured: an expired token is fetched again, for requests and for a watch", "[etcd-secure]") {
    const std::string key = "/keyplace/secure-token/x";
    etcd::client c(secured());
    error_info err;
    REQUIRE(c.put(key, "1", err));
    std::int64_t rev = 0;
    REQUIRE(c.get(key, err, &rev));
    std::this_thread::sleep_for(7s);  // the fixture's tokens expire after 5 idle seconds
    REQUIRE(c.put(key, "2", err));
    INFO(err.message());
    const auto kv = c.get(key, err);
    REQUIRE(kv);
    CHECK(kv->value == "2");

    std::this_thread::sleep_for(7s);
    std::atomic<bool> stop{false};
    std::vector<std::string> seen;
    const auto end = c.watch(
        key, rev + 1,
        [&](const etcd::watch_event& e) {
            seen.push_back(e.kv.value);
            return false;
        },
        stop, err);
    INFO(err.message());
    CHECK(end == etcd::watch_end::stopped);
    CHECK(seen == std::vector<std::string>{"2"});
}

TEST_CASE("etcd secured: the leader killed during a watch: no event lost or repeated, no epoch back",
          "[etcd-secure]") {
    const std::string cluster = unique("secure-watch");
    const int lead = leader();
    // Both watches start on the leader, so its death cuts their streams.
    etcd::client raw(secured(endpoints_from(lead)));
    error_info err;
    std::int64_t rev = 0;
    (void)raw.get(etcd::current_key(cluster), err, &rev);
    REQUIRE(!err);
    current_events events;
    std::atomic<bool> stop{false};
    etcd::watch_end raw_end = etcd::watch_end::failed;
    error_info raw_err;
    scoped_thread raw_thread([&] { stop.store(true); },
                             [&] { raw_end = raw.watch(etcd::current_key(cluster), rev + 1, events.on_event(), stop, raw_err); });

    etcd::watcher_options wo;
    wo.connection = secured(endpoints_from(lead));
    wo.cluster = cluster;
    wo.client_id = "w1";
    wo.lease_ttl = 3s;
    wo.backoff_min = 20ms;
    wo.backoff_max = 300ms;
    std::mutex mu;
    std::vector<std::uint64_t> adopted;
    wo.on_adopt = [&](const snapshot& s) {
        const std::lock_guard lock(mu);
        adopted.push_back(s.epoch());
    };
    etcd::watcher w(wo);

    etcd::client publisher(secured(endpoints_from(lead + 1)));  // on a member that survives
    constexpr std::uint64_t before = 3;
    constexpr std::uint64_t total = 8;
    for (std::uint64_t e = 1; e <= before; ++e) {
        publish_through(publisher, snap(cluster, e));
    }
    CHECK(eventually([&] { return w.stats().epoch == before && events.snapshot_of().size() == before; }));
    {
        const restarted_at_end restart(lead);
        REQUIRE(script("kill '" + cluster_dir() + "' " + std::to_string(lead)));
        for (std::uint64_t e = before + 1; e <= total; ++e) {
            publish_through(publisher, snap(cluster, e));
        }
        CHECK(eventually([&] { return w.stats().epoch == total && events.snapshot_of().size() >= total; }));
        raw_thread.join();
    }
    INFO(raw_err.message());
    CHECK(raw_end == etcd::watch_end::stopped);
    CHECK(events.snapshot_of() == one_to(total));  // every write of current once, in order
    const std::lock_guard lock(mu);
    CHECK(adopted.back() == total);
    for (std::size_t i = 1; i < adopted.size(); ++i) {
        CHECK(adopted[i] > adopted[i - 1]);
    }
}

TEST_CASE("etcd secured: the leader killed during publishes: each applied once, none refused, none back",
          "[etcd-secure]") {
    const std::string cluster = unique("secure-publish");
    const int lead = leader();
    etcd::client publisher(secured(endpoints_from(lead)));  // its requests go to the leader first
    etcd::client observer(secured(endpoints_from(lead + 1)));
    constexpr std::uint64_t total = 12;
    std::atomic<std::uint64_t> published{0};
    std::atomic<bool> killed{false};
    {
        const restarted_at_end restart(lead);
        // Kill the leader once epoch 4 is out, while the next publishes are in flight.
        std::atomic<bool> give_up{false};
        scoped_thread killer([&] { give_up.store(true); },
                             [&] {
                                 while (published.load() < 4 && !give_up.load()) {
                                     std::this_thread::sleep_for(1ms);
                                 }
                                 killed.store(script("kill '" + cluster_dir() + "' " + std::to_string(lead)));
                             });
        for (std::uint64_t e = 1; e <= total; ++e) {
            publish_through(publisher, snap(cluster, e));
            published.store(e);
        }
        killer.join();
        CHECK(killed.load());
        error_info err;
        const auto cur = etcd::read_current(observer, cluster, err);
        INFO(err.message());
        REQUIRE(cur);
        CHECK(cur->epoch == total);
        // current was written once per epoch: no publish applied twice.
        CHECK(current_version(observer, cluster) == static_cast<std::int64_t>(total));
    }
}

namespace {

// A TCP relay to one member that can lose an answer: after lose_answer_to(k), the k-th request
// from then on reaches the member, and when the member answers, the relay closes the client's
// connection instead of passing the answer on (the write is applied; the client never hears).
// TLS passes through untouched: the client still talks to the member. A request is what the
// client sends between two answers on a connection.
class lossy_relay {
public:
    explicit lossy_relay(int member_port) : member_port_(member_port) {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&a), len) == 0);
        REQUIRE(::listen(listener_, 8) == 0);
        REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~lossy_relay() {
        stop_.store(true);
        thread_.join();
        ::close(listener_);
    }
    lossy_relay(const lossy_relay&) = delete;
    auto operator=(const lossy_relay&) -> lossy_relay& = delete;

    [[nodiscard]] auto url() const -> std::string { return "https://127.0.0.1:" + std::to_string(port_); }
    void lose_answer_to(int k) {
        lost_.store(false);
        countdown_.store(k);
    }
    [[nodiscard]] auto lost() const -> bool { return lost_.load(); }

private:
    struct pair {
        int client = -1;
        int member = -1;
        bool client_spoke_last = false;
        bool doomed = false;  // the answer to its current request is lost
    };

    static void close_pair(pair& p) {
        ::close(p.client);
        ::close(p.member);
        p.client = p.member = -1;
    }

    static auto forward(int from, int to) -> bool {
        char buf[16384];
        const auto n = ::recv(from, buf, sizeof buf, 0);
        if (n <= 0) {
            return false;
        }
        std::size_t sent = 0;
        while (sent < static_cast<std::size_t>(n)) {
            const auto k = ::send(to, buf + sent, static_cast<std::size_t>(n) - sent, MSG_NOSIGNAL);
            if (k <= 0) {
                return false;
            }
            sent += static_cast<std::size_t>(k);
        }
        return true;
    }

    void serve() {
        std::vector<pair> pairs;
        while (!stop_.load()) {
            std::vector<pollfd> fds{{listener_, POLLIN, 0}};
            for (const auto& p : pairs) {
                fds.push_back({p.client, POLLIN, 0});
                fds.push_back({p.member, POLLIN, 0});
            }
            if (::poll(fds.data(), fds.size(), 50) <= 0) {
                continue;
            }
            const std::size_t polled = pairs.size();  // a pair accepted now is polled next round
            if ((fds[0].revents & POLLIN) != 0) {
                pair p;
                p.client = ::accept(listener_, nullptr, nullptr);
                p.member = ::socket(AF_INET, SOCK_STREAM, 0);
                sockaddr_in a{};
                a.sin_family = AF_INET;
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                a.sin_port = htons(static_cast<std::uint16_t>(member_port_));
                if (::connect(p.member, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
                    pairs.push_back(p);
                } else {
                    close_pair(p);
                }
            }
            for (std::size_t i = 0; i < polled; ++i) {
                auto& p = pairs[i];
                const auto from_client = fds[1 + 2 * i].revents;
                const auto from_member = fds[2 + 2 * i].revents;
                bool open = true;
                if (from_client != 0) {
                    if (!p.client_spoke_last && countdown_.load() > 0 && countdown_.fetch_sub(1) == 1) {
                        p.doomed = true;  // the request whose answer is lost begins
                    }
                    p.client_spoke_last = true;
                    open = forward(p.client, p.member);
                }
                if (open && from_member != 0) {
                    if (p.doomed) {
                        lost_.store(true);
                        open = false;
                    } else {
                        p.client_spoke_last = false;
                        open = forward(p.member, p.client);
                    }
                }
                if (!open) {
                    close_pair(p);
                }
            }
            std::erase_if(pairs, [](const pair& p) { return p.client < 0; });
        }
        for (auto& p : pairs) {
            close_pair(p);
        }
    }

    int member_port_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::atomic<int> countdown_{0};
    std::atomic<bool> lost_{false};
    std::thread thread_;
};

auto port_of(const std::string& url) -> int { return std::atoi(url.substr(url.rfind(':') + 1).c_str()); }

}  // namespace

TEST_CASE("etcd secured: a publish whose answer was lost is retried on another member and recognised as its own",
          "[etcd-secure]") {
    const std::string cluster = unique("secure-lost");
    lossy_relay relay(port_of(members()[0]));
    etcd::client c(secured({relay.url(), members()[1], members()[2]}));
    etcd::client observer(secured(endpoints_from(1)));
    publish_through(c, snap(cluster, 1));

    // A publish sends three requests: the snapshot's create, the read of current, and current's
    // compare-and-swap. Lose the answer to each in turn; the request is retried (by curl on a new
    // connection, or on the next member), and the publish must see its own write: it succeeds,
    // and current was written once per epoch.
    for (int lost = 1; lost <= 3; ++lost) {
        const std::uint64_t epoch = 1 + static_cast<std::uint64_t>(lost);
        etcd::client p(secured({relay.url(), members()[1], members()[2]}));
        error_info err;
        REQUIRE(etcd::read_current(p, cluster, err));  // connects and authenticates through the relay
        REQUIRE(p.endpoint() == relay.url());
        relay.lose_answer_to(lost);
        const bool ok = etcd::publish(p, snap(cluster, epoch), err);
        INFO("the answer to request " << lost << " was lost: " << err.message());
        CHECK(ok);
        CHECK(relay.lost());
        const auto cur = etcd::read_current(observer, cluster, err);
        REQUIRE(cur);
        CHECK(cur->epoch == epoch);
        CHECK(current_version(observer, cluster) == static_cast<std::int64_t>(epoch));
    }
}
