// keyplace::etcd against a real etcd: the one tests/etcd/etcd_server.sh starts in
// KEYPLACE_ETCD_FIXTURE_DIR (a ctest fixture). Without it (no DIR/endpoint) the binary exits 77,
// which ctest reports as skipped. Every test case uses its own cluster name.
#include <keyplace/etcd.hpp>
#include <keyplace/fleet/json.hpp>

#include "../keyplace_catch.hpp"
#include "etcd_test_support.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace etcd = keyplace::etcd;
using keyplace::errc;
using keyplace::error_info;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;
using keyplace_etcd_test::check_left_node_cannot_return;
using keyplace_etcd_test::check_one_of_two_wins;
using keyplace_etcd_test::description;
using keyplace_etcd_test::eventually;
using keyplace_etcd_test::recorder;
using keyplace_etcd_test::snap;
using namespace std::chrono_literals;

namespace {

auto fixture_dir() -> std::string {
    if (const char* d = std::getenv("KEYPLACE_ETCD_FIXTURE_DIR")) {
        return d;
    }
    return KEYPLACE_ETCD_FIXTURE_DIR;
}

auto endpoint() -> std::string {
    static const std::string ep = [] {
        std::ifstream in(fixture_dir() + "/endpoint");
        std::string line;
        if (!in || !std::getline(in, line) || line.empty()) {
            std::fprintf(stderr,
                         "keyplace_etcd_tests: no etcd endpoint in %s/endpoint (start it with "
                         "tests/etcd/etcd_server.sh start DIR); skipping\n",
                         fixture_dir().c_str());
            std::exit(77);
        }
        return line;
    }();
    return ep;
}

void server(const char* what) {
    const std::string cmd = std::string("'") + KEYPLACE_ETCD_SERVER_SCRIPT + "' " + what + " '" + fixture_dir() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
}

auto connection() -> etcd::client_options { return {.endpoint = endpoint(), .timeout = 2000ms}; }

auto options(const std::string& cluster, const std::string& id) -> etcd::watcher_options {
    etcd::watcher_options o;
    o.connection = connection();
    o.cluster = cluster;
    o.client_id = id;
    o.lease_ttl = 2s;
    o.backoff_min = 20ms;
    o.backoff_max = 300ms;
    return o;
}

void must_publish(etcd::client& c, const snapshot& s) {
    error_info err;
    const bool ok = etcd::publish(c, s, err);
    INFO(err.message());
    REQUIRE(ok);
}

auto curl_post(const std::string& path, const std::string& body) -> int {
    const std::string cmd = "curl -s -o /dev/null -w '' -X POST '" + endpoint() + path + "' -d '" + body + "'";
    return std::system(cmd.c_str());
}

}  // namespace

TEST_CASE("etcd client: put, get, get_prefix, put_if and leases against a real etcd", "[etcd]") {
    etcd::client c(connection());
    error_info err;
    const std::string p = "/keyplace-test/basics/";

    REQUIRE(c.put(p + "b", "two", err));
    REQUIRE(c.put(p + "a", std::string("one\0bytes", 9), err));
    std::int64_t rev = 0;
    const auto a = c.get(p + "a", err, &rev);
    REQUIRE(a);
    CHECK(!err);
    CHECK(a->value == std::string("one\0bytes", 9));
    CHECK(a->mod_revision > 0);
    CHECK(rev >= a->mod_revision);

    const auto none = c.get(p + "missing", err);
    CHECK(!none);
    CHECK(!err);

    const auto all = c.get_prefix(p, err);
    REQUIRE(all);
    REQUIRE(all->size() == 2);
    CHECK((*all)[0].key == p + "a");
    CHECK((*all)[1].key == p + "b");
    CHECK((*all)[1].value == "two");

    CHECK(c.put_if(p + "once", "first", 0, err));
    CHECK(!err);
    CHECK_FALSE(c.put_if(p + "once", "second", 0, err));
    CHECK(!err);  // the compare failed; not an error
    const auto once = c.get(p + "once", err);
    REQUIRE(once);
    CHECK(once->value == "first");
    CHECK(c.put_if(p + "once", "third", once->mod_revision, err));
    CHECK_FALSE(c.put_if(p + "once", "fourth", once->mod_revision, err));
    CHECK(!err);
    CHECK(c.get(p + "once", err)->value == "third");

    const auto lease = c.lease_grant(5s, err);
    REQUIRE(lease);
    REQUIRE(c.put(p + "leased", "x", err, *lease));
    const auto leased = c.get(p + "leased", err);
    REQUIRE(leased);
    CHECK(leased->lease == *lease);
    CHECK(c.lease_keepalive(*lease, err));
    REQUIRE(c.lease_revoke(*lease, err));
    CHECK_FALSE(c.get(p + "leased", err));
    CHECK(!err);
    CHECK_FALSE(c.lease_keepalive(*lease, err));
    CHECK(!err);

    etcd::client nowhere({.endpoint = "http://127.0.0.1:1", .timeout = 500ms});
    CHECK_FALSE(nowhere.get("x", err));
    CHECK(err);
    CHECK(err.message().find("etcd") == 0);
}

TEST_CASE("etcd publish: three watchers adopt a published snapshot and report it", "[etcd]") {
    const std::string cluster = "t-adopt";
    std::vector<std::unique_ptr<etcd::watcher>> ws;
    for (int i = 0; i < 3; ++i) {
        ws.push_back(std::make_unique<etcd::watcher>(options(cluster, "w" + std::to_string(i))));
    }
    etcd::client c(connection());
    const snapshot s = snap(cluster, 1);
    must_publish(c, s);
    for (auto& w : ws) {
        REQUIRE(w->wait_for_snapshot(10s));
        CHECK(w->stats().epoch == 1);
        REQUIRE(w->local() != nullptr);
        CHECK(w->local()->current()->fingerprint() == s.fingerprint());
        CHECK(w->local()->make_reader().get().epoch() == 1);
    }
    error_info err;
    std::vector<etcd::client_report> reports;
    CHECK(eventually([&] {
        auto r = etcd::read_reports(c, cluster, err);
        if (!r) {
            return false;
        }
        reports = *r;
        return reports.size() == 3 && std::all_of(reports.begin(), reports.end(), [&](const auto& x) {
                   return x.epoch == 1 && x.fingerprint == s.fingerprint();
               });
    }));
    REQUIRE(reports.size() == 3);
    CHECK(reports[0].id == "w0");
    CHECK(reports[2].id == "w2");
    CHECK(reports[0].library == "0.2.0");
    CHECK(reports[0].contract == 1);

    const auto loaded = etcd::load_current(c, cluster, err);
    REQUIRE(loaded);
    CHECK(loaded->fingerprint() == s.fingerprint());
}

TEST_CASE("etcd publish: of two concurrent publishes of one epoch exactly one wins, and a stale one fails", "[etcd]") {
    const std::string cluster = "t-race";
    etcd::client c(connection());
    must_publish(c, snap(cluster, 1));

    etcd::client a(connection());
    etcd::client b(connection());
    check_one_of_two_wins(c, a, b, cluster, snap(cluster, 2, "x"), snap(cluster, 2, "y"));

    error_info err;
    CHECK_FALSE(etcd::publish(c, snap(cluster, 1), err));
    CHECK(err.code() == errc::stale_epoch);
    CHECK(err.message() == "epoch 1 is not newer than the current epoch 2 of cluster 't-race'");
}

TEST_CASE("etcd publish: a retry of a published snapshot succeeds, and a name that would not load back never builds",
          "[etcd]") {
    const std::string cluster = "t-retry";
    etcd::client c(connection());
    const snapshot first = snap(cluster, 1);
    must_publish(c, first);
    error_info err;
    CHECK(etcd::publish(c, first, err));  // current already holds epoch 1 with its fingerprint
    CHECK_FALSE(err);
    // An id that is not UTF-8 (JSON would write it as U+FFFD, another placement) and a cluster
    // name with '/' (its keys would sit under another cluster's prefix) do not build at all now:
    // the name grammar holds in the builder (check_name).
    CHECK_THROWS_AS(snapshot::build(description(cluster, 2, {"ok", std::string("caf\xe9")})), keyplace::error);
    CHECK_THROWS_AS(snap("t-retry/clients", 1), keyplace::error);
    CHECK_FALSE(c.get(etcd::snapshot_key(cluster, 2), err));
    CHECK_FALSE(err);
    const auto cur = etcd::read_current(c, cluster, err);
    REQUIRE(cur);
    CHECK(cur->epoch == 1);
}

TEST_CASE("etcd publish: a node that left in the current epoch may not return, and nothing is stored", "[etcd]") {
    etcd::client c(connection());
    check_left_node_cannot_return(c, "t-tombstone");
}

TEST_CASE("etcd watcher: refuses a corrupted, a wrong-cluster and a mismatched document, then adopts a good one",
          "[etcd]") {
    const std::string cluster = "t-refuse";
    etcd::client c(connection());
    const snapshot good = snap(cluster, 1);
    must_publish(c, good);
    recorder rec;
    auto o = options(cluster, "r0");
    rec.attach(o);
    etcd::watcher w(std::move(o));
    REQUIRE(w.wait_for_snapshot(10s));
    error_info err;
    const auto unchanged = [&] {
        CHECK(w.stats().epoch == 1);
        CHECK(w.local()->current()->fingerprint() == good.fingerprint());
        CHECK(w.local()->make_reader().get().fingerprint() == good.fingerprint());
    };
    const auto point = [&](std::uint64_t e, const keyplace::digest128& fp) {
        REQUIRE(c.put(etcd::current_key(cluster), R"({"epoch":)" + std::to_string(e) + R"(,"fingerprint":")" +
                                                       fp.hex() + R"("})",
                      err));
    };

    // A corrupted document.
    REQUIRE(c.put(etcd::snapshot_key(cluster, 2), "{not json at all", err));
    point(2, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 1; }));
    CHECK(rec.refusal_at(0).first == etcd::refusal::malformed);
    CHECK(rec.refusal_at(0).second.find(etcd::snapshot_key(cluster, 2)) != std::string::npos);
    unchanged();

    // A snapshot of another cluster under this cluster's keys.
    const snapshot foreign = snap("t-other", 3);
    REQUIRE(c.put(etcd::snapshot_key(cluster, 3), keyplace::write_snapshot_json(foreign), err));
    point(3, foreign.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 2; }));
    CHECK(rec.refusal_at(1).first == etcd::refusal::wrong_cluster);
    CHECK(rec.refusal_at(1).second.find("'t-other'") != std::string::npos);
    unchanged();

    // current states another fingerprint than the document's.
    const snapshot fourth = snap(cluster, 4);
    REQUIRE(c.put(etcd::snapshot_key(cluster, 4), keyplace::write_snapshot_json(fourth), err));
    point(4, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 3; }));
    CHECK(rec.refusal_at(2).first == etcd::refusal::fingerprint_mismatch);
    CHECK(rec.refusal_at(2).second.find(good.fingerprint().hex()) != std::string::npos);
    CHECK(rec.refusal_at(2).second.find(fourth.fingerprint().hex()) != std::string::npos);
    unchanged();
    CHECK(w.stats().refused == 3);
    CHECK(w.last_refusal() == rec.refusal_at(2).second);

    const snapshot fifth = snap(cluster, 5);
    must_publish(c, fifth);
    REQUIRE(eventually([&] { return w.stats().epoch == 5; }));
    CHECK(w.local()->current()->fingerprint() == fifth.fingerprint());

    // current moved back to an older epoch (a write that bypassed the CAS): refused, epoch 5 stays.
    point(1, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 4; }));
    CHECK(rec.refusal_at(3).first == etcd::refusal::stale_epoch);
    CHECK(rec.refusal_at(3).second.find("epoch 1") != std::string::npos);
    CHECK(w.stats().epoch == 5);
    CHECK(w.local()->make_reader().get().fingerprint() == fifth.fingerprint());
    CHECK(rec.increasing());
}

TEST_CASE("etcd watcher: keeps serving while etcd is down and catches up after it restarts", "[etcd]") {
    const std::string cluster = "t-outage";
    std::vector<std::unique_ptr<recorder>> recs;
    std::vector<std::unique_ptr<etcd::watcher>> ws;
    {
        etcd::client c(connection());
        must_publish(c, snap(cluster, 1));
    }
    for (int i = 0; i < 3; ++i) {
        recs.push_back(std::make_unique<recorder>());
        auto o = options(cluster, "o" + std::to_string(i));
        recs.back()->attach(o);
        ws.push_back(std::make_unique<etcd::watcher>(std::move(o)));
    }
    for (auto& w : ws) {
        REQUIRE(w->wait_for_snapshot(10s));
    }
    const snapshot first = snap(cluster, 1);
    const auto owner = first.current().owner("user:42");

    server("stop");
    std::this_thread::sleep_for(500ms);  // let the watches fail and the retries start
    for (auto& w : ws) {
        auto reader = w->local()->make_reader();
        CHECK(reader.get().epoch() == 1);
        CHECK(reader.get().current().owner("user:42") == owner);
    }
    server("restart");

    etcd::client c(connection());
    const snapshot second = snap(cluster, 2);
    error_info err;
    REQUIRE(eventually([&] { return etcd::publish(c, second, err) || err.code() == errc::stale_epoch; }));
    for (std::size_t i = 0; i < ws.size(); ++i) {
        CHECK(eventually([&] { return ws[i]->stats().epoch == 2; }));
        CHECK(ws[i]->local()->make_reader().get().fingerprint() == second.fingerprint());
        CHECK(ws[i]->stats().reconnects >= 1);
        CHECK(recs[i]->increasing());
    }
}

TEST_CASE("etcd watcher: restarted while etcd is down, it routes with the epoch its cache file kept, then catches "
          "up when etcd returns, never going back",
          "[etcd]") {
    const std::string cluster = "t-cache";
    const auto dir = std::filesystem::temp_directory_path() / ("keyplace-etcd-cache-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string cache = (dir / "watcher.cache").string();
    const snapshot second = snap(cluster, 2);
    {
        etcd::client c(connection());
        must_publish(c, snap(cluster, 1));
        must_publish(c, second);
        auto o = options(cluster, "cached");
        o.cache_file = cache;
        o.revoke_on_exit = false;  // as a killed process leaves it
        etcd::watcher w(std::move(o));
        REQUIRE(eventually([&] { return w.stats().epoch == 2 && w.stats().cache_writes >= 1; }));
    }

    server("stop");
    recorder rec;
    auto o = options(cluster, "cached");
    rec.attach(o);
    o.cache_file = cache;
    etcd::watcher w(std::move(o));
    REQUIRE(w.local() != nullptr);
    auto reader = w.local()->make_reader();
    CHECK(reader.get().epoch() == 2);
    CHECK(reader.get().fingerprint() == second.fingerprint());
    for (const char* key : {"user:42", "user:7", "cart:9"}) {
        CHECK(reader.get().owner(key).id == second.owner(key).id);
    }
    CHECK(w.stats().restored_epoch == 2);
    server("restart");

    etcd::client c(connection());
    const snapshot third = snap(cluster, 3);
    error_info err;
    REQUIRE(eventually([&] { return etcd::publish(c, third, err) || err.code() == errc::stale_epoch; }));
    REQUIRE(eventually([&] { return w.stats().epoch == 3; }));
    CHECK(w.local()->make_reader().get().fingerprint() == third.fingerprint());
    // stats() shows epoch 3 before on_adopt has run: wait for the callback, then check it alone ran.
    CHECK(eventually([&] { return !rec.adopted().empty(); }));
    CHECK(rec.adopted() == std::vector<std::uint64_t>{3});  // 2 came from the file; nothing older was adopted
    CHECK(rec.refusal_count() == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("etcd watcher: the report of a client that died without revoking disappears after its lease TTL",
          "[etcd]") {
    const std::string cluster = "t-lease";
    etcd::client c(connection());
    must_publish(c, snap(cluster, 1));
    error_info err;
    const auto reported = [&](const std::string& id) {
        const auto r = etcd::read_reports(c, cluster, err);
        return r && std::any_of(r->begin(), r->end(), [&](const auto& x) { return x.id == id && x.epoch == 1; });
    };
    {
        auto o = options(cluster, "dies");
        o.revoke_on_exit = false;
        etcd::watcher w(std::move(o));
        REQUIRE(w.wait_for_snapshot(10s));
        REQUIRE(eventually([&] { return reported("dies"); }));
    }
    CHECK(reported("dies"));  // the lease outlives the process for up to its TTL
    CHECK(eventually([&] { return !reported("dies"); }, 10000ms));
    {
        etcd::watcher w(options(cluster, "exits"));
        REQUIRE(w.wait_for_snapshot(10s));
        REQUIRE(eventually([&] { return reported("exits"); }));
    }
    CHECK_FALSE(reported("exits"));  // revoked by the destructor
}

TEST_CASE("etcd watch: a compacted start revision ends the watch as compacted, and a watcher keeps going", "[etcd]") {
    const std::string cluster = "t-compact";
    etcd::client c(connection());
    recorder rec;
    auto o = options(cluster, "k0");
    rec.attach(o);
    etcd::watcher w(std::move(o));
    must_publish(c, snap(cluster, 1));
    REQUIRE(w.wait_for_snapshot(10s));
    must_publish(c, snap(cluster, 2));
    must_publish(c, snap(cluster, 3));
    REQUIRE(eventually([&] { return w.stats().epoch == 3; }));

    error_info err;
    std::int64_t rev = 0;
    const auto cur = c.get(etcd::current_key(cluster), err, &rev);
    REQUIRE(cur);
    REQUIRE(curl_post("/v3/kv/compaction", R"({"revision":")" + std::to_string(rev) + R"(","physical":true})") == 0);

    std::atomic<bool> stop{false};
    int events = 0;
    const auto end = c.watch(
        etcd::current_key(cluster), cur->create_revision,
        [&](const etcd::watch_event&) {
            ++events;
            return true;
        },
        stop, err);
    CHECK(end == etcd::watch_end::compacted);
    CHECK(events == 0);
    CHECK(err.message().find(std::to_string(rev)) != std::string::npos);

    // A watch from the current revision sees the next publish.
    std::thread later([&] {
        std::this_thread::sleep_for(200ms);
        etcd::client p(connection());
        must_publish(p, snap(cluster, 4));
    });
    std::uint64_t seen = 0;
    const auto end2 = c.watch(
        etcd::current_key(cluster), rev + 1,
        [&](const etcd::watch_event& e) {
            seen = e.deleted ? 0 : 1;
            return false;
        },
        stop, err);
    later.join();
    CHECK(end2 == etcd::watch_end::stopped);
    CHECK(seen == 1);
    CHECK(eventually([&] { return w.stats().epoch == 4; }));
    CHECK(rec.increasing());

    // stop is noticed promptly by a watch that sees no event.
    std::atomic<bool> stop2{false};
    std::thread stopper([&] {
        std::this_thread::sleep_for(100ms);
        stop2 = true;
    });
    const auto end3 = c.watch(
        etcd::current_key(cluster), 0, [](const etcd::watch_event&) { return true; }, stop2, err);
    stopper.join();
    CHECK(end3 == etcd::watch_end::stopped);
}

// A fleet whose documents and current value were written under fingerprint encoding 1 (before
// node locations were in the fingerprint) keeps adopting them after an upgrade: the stated
// encoding-1 fingerprint still proves the snapshot whole. The value is the golden table's
// (tests/golden/snapshot_digests_v1.txt, case ring_replicas3_zone).
TEST_CASE("etcd watcher: adopts a snapshot whose document and current state its encoding-1 fingerprint", "[etcd]") {
    const std::string cluster = "t-encoding-1";
    const auto old_case = keyplace_etcd_test::make_encoding_1_case(cluster);
    const snapshot& s = old_case.s;
    const keyplace::snapshot_description& old = old_case.old;
    const keyplace::digest128* v1 = &old_case.v1;
    etcd::client c(connection());
    error_info err;
    REQUIRE(c.put(etcd::snapshot_key(cluster, 1), keyplace::write_description_json(old), err));
    const std::string current = R"({"epoch":1,"fingerprint":")" + v1->hex() + R"("})";
    REQUIRE(c.put(etcd::current_key(cluster), current, err));

    recorder rec;
    auto o = options(cluster, "e0");
    rec.attach(o);
    etcd::watcher w(std::move(o));
    REQUIRE(w.wait_for_snapshot(10s));
    CHECK(w.stats().epoch == 1);
    CHECK(w.local()->current()->fingerprint() == s.fingerprint());
    // Publishing the same snapshot again is a retry of what is there, not a split brain.
    CHECK(etcd::publish(c, s, err));
    INFO(err.message());
    // current written again with the same encoding-1 value: nothing to refuse.
    REQUIRE(c.put(etcd::current_key(cluster), current, err));
    const snapshot second = snap(cluster, 2);
    must_publish(c, second);
    REQUIRE(eventually([&] { return w.stats().epoch == 2; }));
    CHECK(rec.refusal_count() == 0);
    CHECK(rec.increasing());
}

TEST_CASE("etcd: every entry point refuses a cluster or client id outside the name grammar, before any request",
          "[etcd][names]") {
    // Nothing listens on port 9 of loopback: an answer there would be a transport error, not this.
    etcd::client c(etcd::client_options{.endpoint = "http://127.0.0.1:9", .timeout = 2000ms});
    const std::string long_name(300, 'c');
    for (const std::string& cluster : {std::string("bar/clients"), std::string(), long_name, std::string("a\nb")}) {
        INFO(cluster);
        error_info err;
        CHECK_FALSE(etcd::read_current(c, cluster, err));
        CHECK(err.code() == errc::invalid_name);
        err.clear();
        CHECK_FALSE(etcd::load_current(c, cluster, err));
        CHECK(err.code() == errc::invalid_name);
        err.clear();
        CHECK_FALSE(etcd::read_reports(c, cluster, err));
        CHECK(err.code() == errc::invalid_name);
        CHECK(err.message().rfind("cluster '", 0) == 0);
        etcd::watcher_options o{.cluster = cluster, .client_id = "w1"};
        CHECK(etcd::check_watcher_options(o).code() == errc::invalid_name);
        CHECK_THROWS_AS(etcd::watcher(std::move(o)), keyplace::error);
    }
    for (const std::string& id : {std::string("a\nb"), std::string(), std::string("a/b")}) {
        etcd::watcher_options o{.cluster = "eu", .client_id = id};
        const auto f = etcd::check_watcher_options(o);
        CHECK(f.code() == errc::invalid_name);
        CHECK(f.message().rfind("client id '", 0) == 0);
        CHECK_THROWS_AS(etcd::watcher(std::move(o)), keyplace::error);
    }
    CHECK_FALSE(etcd::check_watcher_options({.cluster = "eu", .client_id = "keyplace-cli-host-42"}));
}
