// keyplace::etcd with no etcd: memory_store's model of etcd (revisions, compares, leases,
// compaction, watch streams, injected failures), and over it the publisher's and the watcher's
// logic (adoption, refusals, never an older epoch, backoff, outages, compaction, reports). The
// transport itself is tested against a real etcd (etcd_test.cpp, secure_test.cpp).
#include <keyplace/etcd.hpp>
#include <keyplace/etcd/memory_store.hpp>
#include <keyplace/fleet/json.hpp>

#include "../keyplace_catch.hpp"
#include "etcd_test_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace etcd = keyplace::etcd;
using keyplace::errc;
using keyplace::error_info;
using keyplace::snapshot;
using keyplace_etcd_test::check_left_node_cannot_return;
using keyplace_etcd_test::check_one_of_two_wins;
using keyplace_etcd_test::eventually;
using keyplace_etcd_test::recorder;
using keyplace_etcd_test::snap;
using store_op = keyplace::etcd::memory_store::op;
using store_fault = keyplace::etcd::memory_store::fault;
using namespace std::chrono_literals;

namespace memory_store_test {

auto options(const std::string& cluster, const std::string& id) -> etcd::watcher_options {
    etcd::watcher_options o;
    o.cluster = cluster;
    o.client_id = id;
    o.lease_ttl = 1s;  // keepalives every 333 ms: a lost lease is noticed soon
    o.backoff_min = 1ms;
    o.backoff_max = 20ms;
    return o;
}

auto watcher_on(const std::shared_ptr<etcd::memory_store>& store, etcd::watcher_options o)
    -> std::unique_ptr<etcd::watcher> {
    return std::make_unique<etcd::watcher>(std::move(o), [store] { return store; });
}

void must_publish(etcd::kv_store& c, const snapshot& s) {
    error_info err;
    const bool ok = etcd::publish(c, s, err);
    INFO(err.message());
    REQUIRE(ok);
}

void point(etcd::kv_store& c, const std::string& cluster, std::uint64_t e, const keyplace::digest128& fp) {
    error_info err;
    REQUIRE(c.put(etcd::current_key(cluster), R"({"epoch":)" + std::to_string(e) + R"(,"fingerprint":")" + fp.hex() +
                                                  R"("})",
                  err));
}

// A fresh directory under the system's temporary one, removed with everything in it.
struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        static std::atomic<int> serial{0};
        path = std::filesystem::temp_directory_path() /
               ("keyplace-cache-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    auto operator=(const temp_dir&) -> temp_dir& = delete;
    [[nodiscard]] auto file(const std::string& name) const -> std::string { return (path / name).string(); }
};

auto slurp(const std::string& path) -> std::string {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spit(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
    REQUIRE(out.good());
}

// The options of a watcher that keeps its snapshot in cache, recording restores and cache errors.
struct cache_recorder : recorder {
    std::vector<std::uint64_t> restored;
    std::vector<std::string> cache_errors;

    void attach_cache(etcd::watcher_options& o, const std::string& cache) {
        attach(o);
        o.cache_file = cache;
        o.on_restore = [this](const snapshot& s) {
            const std::lock_guard lock(mu);
            restored.push_back(s.epoch());
        };
        o.on_cache_error = [this](const std::string& m) {
            const std::lock_guard lock(mu);
            cache_errors.push_back(m);
        };
    }
    auto cache_error_count() -> std::size_t {
        const std::lock_guard lock(mu);
        return cache_errors.size();
    }
};

// Runs a watcher on store until it adopted `epoch` and wrote it to cache.
void adopt_and_persist(const std::shared_ptr<etcd::memory_store>& store, const std::string& cluster,
                       const std::string& cache, std::uint64_t epoch) {
    cache_recorder rec;
    auto o = options(cluster, "writer");
    rec.attach_cache(o, cache);
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(eventually([&] { return w->stats().epoch == epoch && w->stats().cache_writes >= 1; }));
    CHECK(rec.cache_error_count() == 0);
}

}  // namespace memory_store_test

using namespace memory_store_test;

TEST_CASE("memory store: revisions, versions and compares count as etcd's do", "[etcd-memory]") {
    etcd::memory_store s;
    error_info err;
    std::int64_t rev = 0;
    CHECK_FALSE(s.get("/a", err, &rev));
    CHECK_FALSE(err);
    CHECK(rev == 1);  // an empty etcd is at revision 1
    REQUIRE(s.put("/a", "x", err));
    auto a = s.get("/a", err, &rev);
    REQUIRE(a);
    CHECK(rev == 2);
    CHECK((a->create_revision == 2 && a->mod_revision == 2 && a->version == 1 && a->value == "x"));
    REQUIRE(s.put("/a", "y", err));
    a = s.get("/a", err);
    REQUIRE(a);
    CHECK((a->create_revision == 2 && a->mod_revision == 3 && a->version == 2 && a->value == "y"));

    // A compare that fails changes nothing and is no error.
    CHECK_FALSE(s.put_if("/a", "z", 0, err));
    CHECK_FALSE(err);
    CHECK_FALSE(s.put_if("/a", "z", 2, err));
    CHECK_FALSE(err);
    CHECK(s.revision() == 3);
    CHECK(s.get("/a", err)->value == "y");
    CHECK(s.put_if("/a", "z", 3, err));
    CHECK(s.put_if("/b", "new", 0, err));
    CHECK(s.revision() == 5);

    REQUIRE(s.put("/p/2", "2", err));
    REQUIRE(s.put("/p/1", "1", err));
    REQUIRE(s.put("/q", "q", err));
    const auto p = s.get_prefix("/p/", err);
    REQUIRE(p);
    REQUIRE(p->size() == 2);
    CHECK(((*p)[0].key == "/p/1" && (*p)[1].key == "/p/2"));
}

TEST_CASE("memory store: a watch replays from its start, follows new writes, and ends compacted below the compact "
          "revision",
          "[etcd-memory]") {
    etcd::memory_store s;
    error_info err;
    REQUIRE(s.put("/k", "1", err));     // revision 2
    REQUIRE(s.put("/other", "x", err)); // 3
    REQUIRE(s.put("/k", "2", err));     // 4
    std::atomic<bool> stop{false};
    std::vector<std::string> seen;
    std::vector<std::int64_t> revisions;
    const auto collect = [&](std::size_t until) {
        return [&seen, &revisions, until](const etcd::watch_event& e) {
            seen.push_back(e.kv.value);
            revisions.push_back(e.kv.mod_revision);
            return seen.size() < until;
        };
    };
    CHECK(s.watch("/k", 2, collect(2), stop, err) == etcd::watch_end::stopped);
    CHECK(seen == std::vector<std::string>{"1", "2"});
    CHECK(revisions == std::vector<std::int64_t>{2, 4});

    // From the next revision on: the replay is empty, the next write arrives.
    seen.clear();
    bool written = false;
    std::thread writer([&] {
        while (s.open_watches() == 0) {
            std::this_thread::sleep_for(1ms);
        }
        error_info e;
        written = s.put("/other", "y", e) && s.put("/k", "3", e);
    });
    CHECK(s.watch("/k", 5, collect(1), stop, err) == etcd::watch_end::stopped);
    writer.join();
    CHECK(written);
    CHECK(seen == std::vector<std::string>{"3"});

    REQUIRE(s.compact(4, err));
    CHECK(s.watch("/k", 2, collect(9), stop, err) == etcd::watch_end::compacted);
    CHECK(err.code() == errc::unavailable);
    CHECK(err.message() == "etcd watch of '/k' from revision 2: compacted up to revision 4");
    seen.clear();
    CHECK(s.watch("/k", 4, collect(1), stop, err) == etcd::watch_end::stopped);  // revision 4 is kept
    CHECK(seen == std::vector<std::string>{"2"});

    CHECK_FALSE(s.compact(99, err));
    CHECK(err.code() == errc::invalid_argument);
    CHECK(err.message() == "compaction revision 99 is not above the compact revision 4 and at most the store's 6");

    // stop ends a watch that sees nothing.
    std::atomic<bool> stop_now{false};
    std::thread stopper([&] {
        while (s.open_watches() == 0) {
            std::this_thread::sleep_for(1ms);
        }
        stop_now = true;
    });
    CHECK(s.watch("/quiet", 0, collect(1), stop_now, err) == etcd::watch_end::stopped);
    stopper.join();
    CHECK(s.open_watches() == 0);
}

TEST_CASE("memory store: injected failures: unreachable applies nothing, a timeout applies and loses the answer, "
          "down ends watches",
          "[etcd-memory]") {
    etcd::memory_store s;
    error_info err;
    s.inject(store_op::put, store_fault::unreachable);
    CHECK_FALSE(s.put("/a", "x", err));
    CHECK(err.code() == errc::unavailable);
    CHECK(err.message() == "etcd (memory): put: unreachable");
    CHECK(s.revision() == 1);
    s.inject(store_op::put_if, store_fault::timeout);
    CHECK_FALSE(s.put_if("/a", "x", 0, err));
    CHECK(err.message() == "etcd (memory): put_if: timed out (the request may have been applied)");
    CHECK(s.get("/a", err)->value == "x");
    CHECK(s.calls(store_op::put_if) == 1);

    s.inject(store_op::watch, store_fault::compacted);
    std::atomic<bool> stop{false};
    const auto any = [](const etcd::watch_event&) { return true; };
    CHECK(s.watch("/a", 2, any, stop, err) == etcd::watch_end::compacted);

    std::thread down([&] {
        while (s.open_watches() == 0) {
            std::this_thread::sleep_for(1ms);
        }
        s.set_down(true);
    });
    CHECK(s.watch("/a", 0, any, stop, err) == etcd::watch_end::failed);
    down.join();
    CHECK(err.message() == "etcd (memory) watch of '/a': unreachable");
    CHECK_FALSE(s.get("/a", err));
    CHECK(err.message() == "etcd (memory): get: unreachable");
    s.set_down(false);
    CHECK(s.get("/a", err));
    CHECK_FALSE(err);
}

TEST_CASE("memory store: a lease's keys go when it is revoked or expires, and a watch sees the delete",
          "[etcd-memory]") {
    etcd::memory_store s;
    error_info err;
    const auto lease = s.lease_grant(10s, err);
    REQUIRE(lease);
    REQUIRE(s.put("/c/1", "a", err, *lease));
    REQUIRE(s.put("/c/2", "b", err, *lease));
    CHECK_FALSE(s.put("/c/3", "c", err, *lease + 1));
    CHECK(err.message() == "etcd (memory): put: requested lease not found");
    CHECK(s.lease_keepalive(*lease, err));
    const std::int64_t before = s.revision();
    s.expire_lease(*lease);
    CHECK(s.revision() == before + 1);  // both keys in one revision
    CHECK(s.get_prefix("/c/", err)->empty());
    CHECK_FALSE(s.lease_keepalive(*lease, err));
    CHECK_FALSE(err);
    CHECK_FALSE(s.lease_revoke(*lease, err));
    CHECK(err.message() == "etcd (memory): lease_revoke: requested lease not found");

    std::atomic<bool> stop{false};
    bool deleted = false;
    const auto until_deleted = [&](const etcd::watch_event& e) {
        deleted = e.deleted;
        return !deleted;
    };
    CHECK(s.watch("/c/1", before, until_deleted, stop, err) == etcd::watch_end::stopped);
    CHECK(deleted);
}

TEST_CASE("etcd publish over memory: three watchers adopt and report, a stale publish fails, a retry succeeds",
          "[etcd-memory]") {
    const std::string cluster = "m-adopt";
    auto store = std::make_shared<etcd::memory_store>();
    std::vector<std::unique_ptr<etcd::watcher>> ws;
    for (int i = 0; i < 3; ++i) {
        ws.push_back(watcher_on(store, options(cluster, "w" + std::to_string(i))));
    }
    const snapshot s = snap(cluster, 1);
    must_publish(*store, s);
    for (auto& w : ws) {
        REQUIRE(w->wait_for_snapshot(10s));
        CHECK(w->stats().epoch == 1);
        CHECK(w->local()->make_reader().get().fingerprint() == s.fingerprint());
    }
    error_info err;
    std::vector<etcd::client_report> reports;
    CHECK(eventually([&] {
        auto r = etcd::read_reports(*store, cluster, err);
        reports = r ? *r : std::vector<etcd::client_report>{};
        return reports.size() == 3 && std::all_of(reports.begin(), reports.end(), [&](const auto& x) {
                   return x.epoch == 1 && x.fingerprint == s.fingerprint();
               });
    }));
    REQUIRE(reports.size() == 3);
    CHECK(reports[0].id == "w0");
    CHECK(reports[0].library == "0.2.0");
    CHECK(reports[0].contract == 1);

    CHECK(etcd::publish(*store, s, err));  // a retry of what is there
    CHECK_FALSE(err);
    must_publish(*store, snap(cluster, 2));
    CHECK_FALSE(etcd::publish(*store, snap(cluster, 1), err));
    CHECK(err.code() == errc::stale_epoch);
    CHECK(err.message() == "epoch 1 is not newer than the current epoch 2 of cluster 'm-adopt'");
    for (auto& w : ws) {
        CHECK(eventually([&] { return w->stats().epoch == 2; }));
    }
}

TEST_CASE("etcd publish over memory: of two concurrent publishes of one epoch exactly one wins", "[etcd-memory]") {
    const std::string cluster = "m-race";
    etcd::memory_store store;
    must_publish(store, snap(cluster, 1));
    // One store serves both threads, as one etcd serves two publishers.
    check_one_of_two_wins(store, store, store, cluster, snap(cluster, 2, "x"), snap(cluster, 2, "y"));
}

TEST_CASE("etcd publish over memory: a publish whose answer was lost is retried and recognised as its own, and "
          "another document at the epoch is a split brain",
          "[etcd-memory]") {
    const std::string cluster = "m-lost";
    etcd::memory_store store;
    must_publish(store, snap(cluster, 1));
    const snapshot second = snap(cluster, 2);
    error_info err;
    // The document is stored, the answer lost: the publish fails, and its retry finds the
    // document it stored, then moves current.
    store.inject(store_op::put_if, store_fault::timeout);
    CHECK_FALSE(etcd::publish(store, second, err));
    CHECK(err.code() == errc::unavailable);
    CHECK_FALSE(etcd::read_current(store, cluster, err)->epoch == 2);
    must_publish(store, second);
    CHECK(etcd::read_current(store, cluster, err)->epoch == 2);
    // current is moved, the answer lost: the retry sees current at its own epoch and fingerprint.
    const snapshot third = snap(cluster, 3);
    store.inject(store_op::put_if, store_fault::timeout, 1, 1);
    CHECK_FALSE(etcd::publish(store, third, err));
    CHECK(err.code() == errc::unavailable);
    CHECK(etcd::read_current(store, cluster, err)->epoch == 3);
    must_publish(store, third);
    CHECK(etcd::read_current(store, cluster, err)->epoch == 3);

    const snapshot other = snap(cluster, 4, "o");
    REQUIRE(store.put(etcd::snapshot_key(cluster, 4), keyplace::write_snapshot_json(snap(cluster, 4)), err));
    CHECK_FALSE(etcd::publish(store, other, err));
    CHECK(err.code() == errc::split_brain);
    CHECK(etcd::read_current(store, cluster, err)->epoch == 3);
}

TEST_CASE("etcd publish over memory: a node that left may not return, and nothing is stored", "[etcd-memory]") {
    etcd::memory_store store;
    check_left_node_cannot_return(store, "m-tombstone");
}

TEST_CASE("etcd watcher over memory: refuses a corrupted, a wrong-cluster, a mismatched and an older document, "
          "never going back",
          "[etcd-memory]") {
    const std::string cluster = "m-refuse";
    auto store = std::make_shared<etcd::memory_store>();
    const snapshot good = snap(cluster, 1);
    must_publish(*store, good);
    recorder rec;
    auto o = options(cluster, "r0");
    rec.attach(o);
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(w->wait_for_snapshot(10s));
    error_info err;
    const auto unchanged = [&] {
        CHECK(w->stats().epoch == 1);
        CHECK(w->local()->make_reader().get().fingerprint() == good.fingerprint());
    };

    REQUIRE(store->put(etcd::snapshot_key(cluster, 2), "{not json at all", err));
    point(*store, cluster, 2, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 1; }));
    CHECK(rec.refusal_at(0).first == etcd::refusal::malformed);
    CHECK(rec.refusal_at(0).second.find(etcd::snapshot_key(cluster, 2)) != std::string::npos);
    unchanged();

    const snapshot foreign = snap("m-other", 3);
    REQUIRE(store->put(etcd::snapshot_key(cluster, 3), keyplace::write_snapshot_json(foreign), err));
    point(*store, cluster, 3, foreign.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 2; }));
    CHECK(rec.refusal_at(1).first == etcd::refusal::wrong_cluster);
    CHECK(rec.refusal_at(1).second.find("'m-other'") != std::string::npos);
    unchanged();

    const snapshot fourth = snap(cluster, 4);
    REQUIRE(store->put(etcd::snapshot_key(cluster, 4), keyplace::write_snapshot_json(fourth), err));
    point(*store, cluster, 4, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 3; }));
    CHECK(rec.refusal_at(2).first == etcd::refusal::fingerprint_mismatch);
    CHECK(rec.refusal_at(2).second.find(fourth.fingerprint().hex()) != std::string::npos);
    unchanged();

    CHECK(w->stats().refused == 3);
    CHECK(w->last_refusal() == rec.refusal_at(2).second);

    const snapshot fifth = snap(cluster, 5);
    must_publish(*store, fifth);
    REQUIRE(eventually([&] { return w->stats().epoch == 5; }));

    // current names no document at all.
    point(*store, cluster, 7, fifth.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 4; }));
    CHECK(rec.refusal_at(3).first == etcd::refusal::malformed);
    CHECK(rec.refusal_at(3).second.find("missing") != std::string::npos);
    // current moved back (a write that bypassed the compare): refused, epoch 5 stays.
    point(*store, cluster, 1, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 5; }));
    CHECK(rec.refusal_at(4).first == etcd::refusal::stale_epoch);
    CHECK(rec.refusal_at(4).second.find("epoch 1") != std::string::npos);
    // The adopted epoch stated with another fingerprint: refused too.
    point(*store, cluster, 5, good.fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() >= 6; }));
    CHECK(rec.refusal_at(5).first == etcd::refusal::fingerprint_mismatch);
    CHECK(w->stats().epoch == 5);
    CHECK(w->local()->make_reader().get().fingerprint() == fifth.fingerprint());
    CHECK(rec.increasing());
    CHECK(w->stats().adopted == 2);
}

TEST_CASE("etcd watcher over memory: keeps serving while etcd is down and catches up after", "[etcd-memory]") {
    const std::string cluster = "m-outage";
    auto store = std::make_shared<etcd::memory_store>();
    must_publish(*store, snap(cluster, 1));
    recorder rec;
    auto o = options(cluster, "o0");
    rec.attach(o);
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(w->wait_for_snapshot(10s));
    const auto owner = snap(cluster, 1).current().owner("user:42");

    store->set_down(true);
    const std::uint64_t gets = store->calls(store_op::get);
    REQUIRE(eventually([&] { return store->calls(store_op::get) >= gets + 2; }));  // retrying
    auto reader = w->local()->make_reader();
    CHECK(reader.get().epoch() == 1);
    CHECK(reader.get().current().owner("user:42") == owner);
    store->set_down(false);

    const snapshot second = snap(cluster, 2);
    must_publish(*store, second);
    REQUIRE(eventually([&] { return w->stats().epoch == 2; }));
    CHECK(w->local()->make_reader().get().fingerprint() == second.fingerprint());
    CHECK(w->stats().reconnects >= 1);
    CHECK(rec.increasing());
}

TEST_CASE("etcd watcher over memory: after a failure it calls nothing until its backoff passes, and stopping cuts "
          "the backoff short",
          "[etcd-memory]") {
    const std::string cluster = "m-backoff";
    auto store = std::make_shared<etcd::memory_store>();
    must_publish(*store, snap(cluster, 1));
    store->set_down(true);
    auto o = options(cluster, "b0");
    o.backoff_min = std::chrono::hours(1);
    o.backoff_max = std::chrono::hours(1);
    const std::uint64_t gets = store->calls(store_op::get);  // the publish's
    auto w = watcher_on(store, std::move(o));
    REQUIRE(eventually([&] {
        return store->calls(store_op::get) == gets + 1 && store->calls(store_op::lease_grant) == 1;
    }));
    store->set_down(false);
    std::this_thread::sleep_for(200ms);  // were it retrying, it would have
    CHECK(store->calls(store_op::get) == gets + 1);
    CHECK(store->calls(store_op::lease_grant) == 1);
    CHECK(store->calls(store_op::watch) == 0);
    CHECK(w->local() == nullptr);
    w.reset();  // returns without waiting the hour out
    CHECK(store->calls(store_op::get) == gets + 1);
}

TEST_CASE("etcd watcher over memory: a compaction between its read and its watch: it reads current again and "
          "adopts what was published meanwhile, without a reconnect",
          "[etcd-memory]") {
    const std::string cluster = "m-compact";
    auto store = std::make_shared<etcd::memory_store>();
    must_publish(*store, snap(cluster, 1));
    auto o = options(cluster, "k0");
    // The first adoption runs before the watch is created: publish and compact there, as another
    // process could at that moment.
    // (No assertion on the watcher's thread: the test checks `raced` after.)
    std::atomic<bool> raced{false};
    o.on_adopt = [&](const snapshot& s) {
        if (s.epoch() == 1) {
            error_info err;
            raced = etcd::publish(*store, snap(cluster, 2), err) && store->compact(store->revision(), err);
        }
    };
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(eventually([&] { return w->stats().epoch == 2; }));
    CHECK(raced);
    CHECK(store->calls(store_op::watch) >= 2);  // the first ended compacted
    CHECK(w->stats().reconnects == 0);

    // An injected compaction too, then the next publish arrives through the new watch.
    store->inject(store_op::watch, store_fault::compacted);
    store->break_watches();
    must_publish(*store, snap(cluster, 3));
    REQUIRE(eventually([&] { return w->stats().epoch == 3; }));
    must_publish(*store, snap(cluster, 4));
    REQUIRE(eventually([&] { return w->stats().epoch == 4; }));
}

TEST_CASE("etcd watcher over memory: a report goes with its lease, is revoked on exit, and is written again under "
          "a new lease when one expires",
          "[etcd-memory]") {
    const std::string cluster = "m-lease";
    auto store = std::make_shared<etcd::memory_store>();
    must_publish(*store, snap(cluster, 1));
    error_info err;
    const auto report_of = [&](const std::string& id) -> std::optional<etcd::key_value> {
        return store->get(etcd::clients_prefix(cluster) + id, err);
    };
    {
        auto o = options(cluster, "dies");
        o.revoke_on_exit = false;
        const auto w = watcher_on(store, std::move(o));
        REQUIRE(eventually([&] { return report_of("dies").has_value(); }));
        const std::int64_t lease = report_of("dies")->lease;
        CHECK(lease != 0);
        store->expire_lease(lease);  // as if etcd lost contact for the TTL
        REQUIRE(eventually([&] {
            const auto r = report_of("dies");
            return r && r->lease != lease;
        }));
    }
    const auto left = report_of("dies");
    REQUIRE(left);  // not revoked: it lingers for the lease's TTL
    store->expire_lease(left->lease);
    CHECK_FALSE(report_of("dies"));
    {
        const auto w = watcher_on(store, options(cluster, "exits"));
        REQUIRE(eventually([&] { return report_of("exits").has_value(); }));
    }
    CHECK_FALSE(report_of("exits"));  // revoked by the destructor
}

// A document and current stating the encoding-1 fingerprint (before node locations were in it)
// are adopted.
TEST_CASE("etcd watcher over memory: adopts a snapshot whose document and current state its encoding-1 fingerprint",
          "[etcd-memory]") {
    const std::string cluster = "m-encoding-1";
    const auto old_case = keyplace_etcd_test::make_encoding_1_case(cluster);
    const snapshot& s = old_case.s;
    const keyplace::snapshot_description& old = old_case.old;
    const keyplace::digest128* v1 = &old_case.v1;
    auto store = std::make_shared<etcd::memory_store>();
    error_info err;
    REQUIRE(store->put(etcd::snapshot_key(cluster, 1), keyplace::write_description_json(old), err));
    point(*store, cluster, 1, *v1);
    recorder rec;
    auto o = options(cluster, "e0");
    rec.attach(o);
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(w->wait_for_snapshot(10s));
    CHECK(w->local()->current()->fingerprint() == s.fingerprint());
    CHECK(etcd::publish(*store, s, err));  // a retry of what is there, not a split brain
    point(*store, cluster, 1, *v1);        // written again: nothing to refuse
    must_publish(*store, snap(cluster, 2));
    REQUIRE(eventually([&] { return w->stats().epoch == 2; }));
    CHECK(rec.refusal_count() == 0);
}

TEST_CASE("etcd watcher over memory: a bad name is refused before connecting, and so is a connector without a store",
          "[etcd-memory]") {
    int connects = 0;
    const etcd::watcher::connector counting = [&]() -> std::shared_ptr<etcd::kv_store> {
        ++connects;
        return std::make_shared<etcd::memory_store>();
    };
    CHECK_THROWS_AS(etcd::watcher(options("bad/cluster", "w"), counting), keyplace::error);
    CHECK_THROWS_AS(etcd::watcher(options("ok", "bad/id"), counting), keyplace::error);
    CHECK(connects == 0);
    try {
        etcd::watcher w(options("ok", "w"), [] { return std::shared_ptr<etcd::kv_store>{}; });
        FAIL("a connector without a store was accepted");
    } catch (const keyplace::error& e) {
        CHECK(std::string(e.what()) == "etcd watcher: the connector gave no kv_store");
    }
}

TEST_CASE("etcd watcher over memory: restarts from its cache file while etcd is down, routes with it, then catches "
          "up and never goes back",
          "[etcd-memory]") {
    const std::string cluster = "m-cache";
    const temp_dir dir;
    const std::string cache = dir.file("snapshot.cache");
    auto store = std::make_shared<etcd::memory_store>();
    const snapshot second = snap(cluster, 2);
    must_publish(*store, snap(cluster, 1));
    must_publish(*store, second);
    adopt_and_persist(store, cluster, cache, 2);
    for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
        CHECK(entry.path().filename() == "snapshot.cache");  // the temporary file was renamed over it
    }

    // The process restarts while etcd is down: it routes with epoch 2 before etcd answers once.
    store->set_down(true);
    cache_recorder rec;
    auto o = options(cluster, "restarted");
    rec.attach_cache(o, cache);
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(w->local() != nullptr);  // at construction, not eventually
    CHECK(w->wait_for_snapshot(0ms));
    const auto reader_snapshot = w->local()->current();
    CHECK(reader_snapshot->epoch() == 2);
    CHECK(reader_snapshot->fingerprint() == second.fingerprint());
    for (const char* key : {"user:42", "user:7", "cart:9"}) {
        CHECK(reader_snapshot->owner(key).id == second.owner(key).id);
    }
    CHECK(w->stats().restored_epoch == 2);
    CHECK(w->stats().epoch == 2);
    CHECK(w->stats().adopted == 0);
    CHECK(rec.restored == std::vector<std::uint64_t>{2});

    // etcd returns with a rolled-back current (epoch 1, as a restore from an old backup would):
    // refused, epoch 2 stays.
    const std::uint64_t refusals_before = rec.refusal_count();
    store->set_down(false);
    point(*store, cluster, 1, snap(cluster, 1).fingerprint());
    REQUIRE(eventually([&] { return rec.refusal_count() > refusals_before; }));
    CHECK(rec.refusal_at(refusals_before).first == etcd::refusal::stale_epoch);
    CHECK(w->stats().epoch == 2);
    // Then a newer epoch: adopted and written to the file.
    const snapshot third = snap(cluster, 3);
    point(*store, cluster, 2, second.fingerprint());
    must_publish(*store, third);
    REQUIRE(eventually([&] { return w->stats().epoch == 3 && w->stats().cache_writes >= 1; }));
    CHECK(rec.increasing());
    // stats() shows epoch 3 before on_adopt has run: wait for the callback, then check it alone ran.
    CHECK(eventually([&] { return !rec.adopted().empty(); }));
    CHECK(rec.adopted() == std::vector<std::uint64_t>{3});

    // A third start reads epoch 3 from the file.
    cache_recorder again;
    auto o3 = options(cluster, "third");
    again.attach_cache(o3, cache);
    store->set_down(true);
    const auto w3 = watcher_on(store, std::move(o3));
    REQUIRE(w3->local() != nullptr);
    CHECK(w3->local()->current()->fingerprint() == third.fingerprint());
    CHECK(w3->stats().restored_epoch == 3);
}

TEST_CASE("etcd watcher over memory: a first start without a cache file is no error, and the file is written after "
          "the first adoption",
          "[etcd-memory]") {
    const std::string cluster = "m-cache-first";
    const temp_dir dir;
    const std::string cache = dir.file("first.cache");
    auto store = std::make_shared<etcd::memory_store>();
    cache_recorder rec;
    auto o = options(cluster, "first");
    rec.attach_cache(o, cache);
    const auto w = watcher_on(store, std::move(o));
    CHECK(w->local() == nullptr);
    CHECK(w->stats().restored_epoch == 0);
    CHECK(rec.refusal_count() == 0);
    CHECK_FALSE(std::filesystem::exists(cache));
    must_publish(*store, snap(cluster, 4));
    REQUIRE(eventually([&] { return w->stats().cache_writes == 1; }));
    const std::string text = slurp(cache);
    CHECK(text.rfind("keyplace-watcher-cache 1 stated=" + snap(cluster, 4).fingerprint().hex() + " length=", 0) == 0);
    // What follows the header is the document as etcd holds it.
    error_info err;
    const auto held = store->get(etcd::snapshot_key(cluster, 4), err);
    REQUIRE(held);
    CHECK(text.substr(text.find('\n') + 1) == held->value);
}

TEST_CASE("etcd watcher over memory: a corrupt, truncated, foreign, mislabelled or unreadable cache file is refused "
          "with its reason and left as it is, and the watcher waits for etcd",
          "[etcd-memory]") {
    const std::string cluster = "m-cache-bad";
    const temp_dir dir;
    const std::string good_file = dir.file("good.cache");
    auto store = std::make_shared<etcd::memory_store>();
    must_publish(*store, snap(cluster, 2));
    adopt_and_persist(store, cluster, good_file, 2);
    const std::string good = slurp(good_file);
    const auto eol = good.find('\n');
    REQUIRE(eol != std::string::npos);

    // A byte of the document changed (a digit of an epoch or a weight: still JSON).
    std::string flipped = good;
    const auto digit = flipped.find_first_of("0123456789", eol + 1);
    REQUIRE(digit != std::string::npos);
    flipped[digit] = flipped[digit] == '9' ? '8' : static_cast<char>(flipped[digit] + 1);
    std::string other_cluster_file = dir.file("other.cache");
    {
        auto other_store = std::make_shared<etcd::memory_store>();
        must_publish(*other_store, snap("m-cache-other", 2));
        adopt_and_persist(other_store, "m-cache-other", other_cluster_file, 2);
    }
    struct bad_case {
        std::string name;
        std::string bytes;  // empty: the path is a directory
        etcd::refusal why;
        std::string says;
    };
    const std::vector<bad_case> cases = {
        {"corrupt", flipped, etcd::refusal::malformed, "does not match its checksum"},
        {"truncated", good.substr(0, good.size() - 10), etcd::refusal::malformed, "truncated or extended"},
        {"extended", good + "{}", etcd::refusal::malformed, "truncated or extended"},
        {"not-a-cache", "{\"epoch\":1}\n", etcd::refusal::malformed, "not a keyplace watcher cache"},
        {"no-newline", "keyplace-watcher-cache 1", etcd::refusal::malformed, "not a keyplace watcher cache"},
        {"version", "keyplace-watcher-cache 7" + good.substr(good.find(' ', 24), eol - good.find(' ', 24)) + "\n" +
                        good.substr(eol + 1),
         etcd::refusal::malformed, "format version '7'"},
        {"header", "keyplace-watcher-cache 1 stated=zz length=1 xxh3-128=00\nx", etcd::refusal::malformed,
         "a malformed header"},
        {"foreign", slurp(other_cluster_file), etcd::refusal::wrong_cluster, "of cluster 'm-cache-other', not 'm-cache-bad'"},
        {"directory", "", etcd::refusal::other, "not a regular file"},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const std::string path = dir.file(c.name + ".cache");
        if (c.bytes.empty()) {
            std::filesystem::create_directories(path);
        } else {
            spit(path, c.bytes);
        }
        auto down = std::make_shared<etcd::memory_store>();
        down->set_down(true);
        cache_recorder rec;
        auto o = options(cluster, "bad-" + c.name);
        rec.attach_cache(o, path);
        auto w = watcher_on(down, std::move(o));
        CHECK(w->local() == nullptr);
        CHECK(w->stats().restored_epoch == 0);
        REQUIRE(rec.refusal_count() == 1);
        CHECK(rec.refusal_at(0).first == c.why);
        const std::string message = rec.refusal_at(0).second;
        CHECK(message.find(c.says) != std::string::npos);
        CHECK(message.rfind("cache '" + path + "': ", 0) == 0);
        CHECK(message.size() < 600);  // a quoted first line is bounded
        CHECK(w->last_refusal() == message);
        if (!c.bytes.empty()) {
            CHECK(slurp(path) == c.bytes);  // left as it is
        }
        // It waits for etcd: once etcd answers it adopts, and (a regular file) overwrites the file.
        down->set_down(false);
        must_publish(*down, snap(cluster, 3));
        REQUIRE(eventually([&] { return w->stats().epoch == 3; }));
        if (!c.bytes.empty()) {
            REQUIRE(eventually([&] { return w->stats().cache_writes == 1; }));
            w.reset();
            cache_recorder after;
            auto o2 = options(cluster, "after-" + c.name);
            after.attach_cache(o2, path);
            auto down2 = std::make_shared<etcd::memory_store>();
            down2->set_down(true);
            const auto w2 = watcher_on(down2, std::move(o2));
            CHECK(w2->stats().restored_epoch == 3);
        } else {
            // The write is tried after the adoption is visible: wait for it.
            CHECK(eventually([&] { return w->stats().cache_failures >= 1; }));
        }
    }
}

TEST_CASE("etcd watcher over memory: a cache file that cannot be written is reported and the snapshot serves all "
          "the same",
          "[etcd-memory]") {
    const std::string cluster = "m-cache-unwritable";
    const temp_dir dir;
    const std::string cache = dir.file("no-such-dir/x.cache");
    auto store = std::make_shared<etcd::memory_store>();
    must_publish(*store, snap(cluster, 1));
    cache_recorder rec;
    auto o = options(cluster, "unwritable");
    rec.attach_cache(o, cache);
    const auto w = watcher_on(store, std::move(o));
    REQUIRE(w->wait_for_snapshot(10s));
    REQUIRE(eventually([&] { return rec.cache_error_count() == 1; }));
    CHECK(w->stats().cache_failures == 1);
    CHECK(w->stats().cache_writes == 0);
    {
        const std::lock_guard lock(rec.mu);
        CHECK(rec.cache_errors[0].find("cannot create '" + cache + ".tmp." + std::to_string(::getpid()) +
                                       "': No such file or directory") != std::string::npos);
    }
    CHECK(w->local()->current()->epoch() == 1);
    CHECK(rec.refusal_count() == 0);
}

TEST_CASE("etcd watcher over memory: a cache file whose epoch etcd also holds with another placement is kept, and "
          "etcd's is refused as a split brain",
          "[etcd-memory]") {
    const std::string cluster = "m-cache-split";
    const temp_dir dir;
    const std::string cache = dir.file("split.cache");
    {
        auto first = std::make_shared<etcd::memory_store>();
        must_publish(*first, snap(cluster, 5, "a"));
        adopt_and_persist(first, cluster, cache, 5);
    }
    auto other = std::make_shared<etcd::memory_store>();
    must_publish(*other, snap(cluster, 5, "b"));
    cache_recorder rec;
    auto o = options(cluster, "split");
    rec.attach_cache(o, cache);
    const auto w = watcher_on(other, std::move(o));
    REQUIRE(w->stats().restored_epoch == 5);
    REQUIRE(eventually([&] { return rec.refusal_count() >= 1; }));
    CHECK(rec.refusal_at(0).first == etcd::refusal::fingerprint_mismatch);
    CHECK(w->local()->current()->fingerprint() == snap(cluster, 5, "a").fingerprint());
}
