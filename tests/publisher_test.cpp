// Tests of publisher.hpp: every refusal (its code, a message naming both values, nothing
// published, the counters), the same snapshot again, a description that does not build,
// readers (a publish seen by the next get(), release(), moves), and a stress test of readers
// on other threads while the main thread publishes successive epochs.
#include "keyplace_catch.hpp"
#include "support.hpp"

#include <keyplace/fleet/publisher.hpp>
#include <keyplace/fleet/snapshot.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using keyplace::digest128;
using keyplace::errc;
using keyplace::error_info;
using keyplace::node_state;
using keyplace::publish_counts;
using keyplace::publish_result;
using keyplace::publisher;
using keyplace::snapshot;
using keyplace::snapshot_description;
using keyplace::snapshot_node;

namespace {

auto description(std::uint64_t epoch, std::vector<snapshot_node> nodes, std::string cluster = "cache-eu-1")
    -> snapshot_description {
    snapshot_description d;
    d.cluster = std::move(cluster);
    d.epoch = epoch;
    d.parent_epoch = epoch - 1;
    d.strategy = {.name = "ring", .params = {{"vnodes", std::uint64_t{4}}}};
    d.nodes = std::move(nodes);
    return d;
}

auto active(std::initializer_list<const char*> ids) -> std::vector<snapshot_node> {
    std::vector<snapshot_node> out;
    for (const char* id : ids) {
        out.push_back({.id = id});
    }
    return out;
}

auto built(const snapshot_description& d) -> std::shared_ptr<const snapshot> {
    return std::make_shared<const snapshot>(snapshot::build(d));
}

// A refusal publishes nothing: the publisher still serves `was`, and a reader that had it
// still gets the same object.
void check_untouched(const publisher& p, publisher::reader& r, const std::shared_ptr<const snapshot>& was) {
    CHECK(p.current() == was);
    CHECK(p.epoch() == was->epoch());
    CHECK(&r.get() == was.get());
}

// try_publish and publish both refuse next with code (two refusals counted), and the message
// names every fragment.
void check_refused(publisher& p, const std::shared_ptr<const snapshot>& next, errc code,
                   const std::vector<std::string>& fragments) {
    error_info err;
    CHECK_FALSE(p.try_publish(next, err).has_value());
    CHECK(err == code);
    for (const auto& f : fragments) {
        CHECK_THAT(err.message(), Catch::Matchers::Contains(f));
    }
    try {
        (void)p.publish(next);
        FAIL("publish did not throw");
    } catch (const keyplace::error& e) {
        CHECK(e.code() == code);
        CHECK(e.what() == err.message());
    }
}

}  // namespace

TEST_CASE("publisher: a null first snapshot is refused", "[publisher]") {
    keyplace_test::expect_error([] { return publisher(nullptr).epoch(); }, errc::invalid_argument,
                                "the first snapshot is null");
}

TEST_CASE("publisher: a newer epoch is published and counted", "[publisher]") {
    const auto first = built(description(7, active({"a", "b", "c"})));
    publisher p(first);
    CHECK(p.current() == first);
    CHECK(p.epoch() == 7);
    CHECK(p.counts() == publish_counts{});

    const auto next = built(first->successor());  // epoch 8, same nodes
    CHECK(p.publish(next) == publish_result::published);
    CHECK(p.current() == next);
    CHECK(p.epoch() == 8);

    // An epoch may be skipped: newer is enough.
    auto d = next->successor();
    d.epoch = 12;
    d.nodes.push_back({.id = "d"});
    const auto later = built(d);
    error_info err;
    CHECK(p.try_publish(later, err) == publish_result::published);
    CHECK_FALSE(err);
    CHECK(p.current() == later);
    CHECK(p.epoch() == 12);
    CHECK(p.counts() == publish_counts{.published = 2});
}

TEST_CASE("publisher: every refusal names both values and publishes nothing", "[publisher]") {
    const auto base = built(description(17, active({"a", "b", "c"})));
    publisher p(base);
    auto r = p.make_reader();
    CHECK(&r.get() == base.get());

    SECTION("another cluster") {
        check_refused(p, built(description(18, active({"a", "b", "c"}), "cache-us-2")), errc::wrong_cluster,
                      {"'cache-us-2'", "'cache-eu-1'"});
        check_untouched(p, r, base);
        CHECK(p.counts() == publish_counts{.wrong_cluster = 2});
    }
    SECTION("an older epoch") {
        check_refused(p, built(description(12, active({"a", "b", "c"}))), errc::stale_epoch,
                      {"epoch 12", "current epoch 17"});
        check_untouched(p, r, base);
        CHECK(p.counts() == publish_counts{.stale_epoch = 2});
    }
    SECTION("the same epoch with another fingerprint") {
        const auto other = built(description(17, active({"a", "b", "d"})));
        REQUIRE(other->fingerprint() != base->fingerprint());
        check_refused(p, other, errc::split_brain,
                      {"epoch 17", other->fingerprint().hex(), base->fingerprint().hex()});
        check_untouched(p, r, base);
        CHECK(p.counts() == publish_counts{.split_brain = 2});
    }
    SECTION("a tombstone that returns") {
        auto d = base->successor();  // 18: c has left
        d.nodes[2].state = node_state::left;
        const auto gone = built(d);
        CHECK(p.publish(gone) == publish_result::published);
        CHECK(&r.get() == gone.get());

        auto back = gone->successor();  // 19: c returns
        back.nodes[2].state = node_state::joining;
        check_refused(p, built(back), errc::invalid_state, {"node 'c'", "left at epoch 18", "return as joining"});
        check_untouched(p, r, gone);
        CHECK(p.counts() == publish_counts{.published = 1, .invalid_state = 2});
    }
    SECTION("a null snapshot") {
        check_refused(p, nullptr, errc::invalid_argument, {"the snapshot is null"});
        check_untouched(p, r, base);
        CHECK(p.counts() == publish_counts{.invalid_snapshot = 2});
    }
}

TEST_CASE("errors: the fleet layer's codes are in their own category, errc's old names still compare",
          "[publisher][errors]") {
    using keyplace::fleet_errc;
    const auto base = built(description(17, active({"a", "b", "c"})));
    publisher p(base);
    error_info err;
    CHECK_FALSE(p.try_publish(built(description(12, active({"a", "b", "c"}))), err));
    CHECK(err == fleet_errc::stale_epoch);
    CHECK_FALSE(err == fleet_errc::wrong_cluster);
    CHECK(err.code() == errc::stale_epoch);  // the deprecated name, kept until 0.3
    CHECK(err.error_code() == fleet_errc::stale_epoch);
    CHECK(err.error_code() != errc::stale_epoch);  // another category
    CHECK(std::string(err.error_code().category().name()) == "keyplace.fleet");
    CHECK(err.error_code().message() == "stale snapshot epoch");
    CHECK(keyplace::fleet_code(err) == fleet_errc::stale_epoch);

    // A strategy's refusal stays in the core category, even inside a snapshot build.
    auto weightless = description(18, active({"a", "b", "c"}));
    weightless.nodes[1].weight = -1.0;
    const auto refused = snapshot::try_build(weightless, err);
    REQUIRE_FALSE(refused);
    CHECK(err == errc::invalid_weight);
    CHECK(std::string(err.error_code().category().name()) == "keyplace");
    CHECK_FALSE(keyplace::fleet_code(err));

    // The exception carries the category, and info() gives it back.
    auto no_epoch = description(0, active({"a"}));
    try {
        (void)snapshot::build(no_epoch);
        FAIL("epoch 0 was built");
    } catch (const keyplace::error& e) {
        CHECK(e.code() == errc::invalid_document);
        CHECK(e.error_code() == fleet_errc::invalid_document);
        CHECK(e.info() == fleet_errc::invalid_document);
        CHECK(e.info().message() == e.what());
    }

    // Every fleet code has its message (errc's old name gives the same during the window).
    for (const auto c : {fleet_errc::stale_epoch, fleet_errc::wrong_cluster, fleet_errc::split_brain,
                         fleet_errc::fingerprint_mismatch, fleet_errc::invalid_document, fleet_errc::unknown_strategy,
                         fleet_errc::no_owner, fleet_errc::invalid_state, fleet_errc::unavailable,
                         fleet_errc::invalid_override}) {
        const auto ec = make_error_code(c);
        CHECK(ec.message() != "unknown keyplace error");
        CHECK(std::string(ec.category().name()) == "keyplace.fleet");
    }
}

TEST_CASE("publisher: the same epoch with the same fingerprint is unchanged", "[publisher]") {
    const auto d = description(3, active({"a", "b", "c"}));
    const auto first = built(d);
    publisher p(first);
    auto r = p.make_reader();
    CHECK(&r.get() == first.get());

    const auto again = built(d);  // another object, the same snapshot
    REQUIRE(again->fingerprint() == first->fingerprint());
    CHECK(p.publish(again) == publish_result::unchanged);
    error_info err;
    CHECK(p.try_publish(first, err) == publish_result::unchanged);
    CHECK_FALSE(err);
    CHECK(p.current() == first);  // nothing published: the first object stays
    CHECK(p.epoch() == 3);
    CHECK(&r.get() == first.get());
    CHECK(p.counts() == publish_counts{.unchanged = 2});
}

TEST_CASE("publisher: a description is built, then published", "[publisher]") {
    const auto first = built(description(1, active({"a", "b", "c"})));
    publisher p(first);
    auto r = p.make_reader();
    (void)r.get();

    SECTION("a stated fingerprint other than the computed one") {
        auto d = first->successor();
        d.nodes.push_back({.id = "d"});
        const digest128 wrong{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
        d.fingerprint = wrong;
        error_info err;
        CHECK_FALSE(p.try_publish(d, err).has_value());
        CHECK(err == errc::fingerprint_mismatch);
        CHECK_THAT(err.message(), Catch::Matchers::Contains(wrong.hex()));
        check_untouched(p, r, first);
        CHECK(p.counts() == publish_counts{.invalid_snapshot = 1});

        d.fingerprint.reset();
        d.fingerprint = snapshot::build(d).fingerprint();  // the right one
        CHECK(p.try_publish(d, err) == publish_result::published);
        CHECK_FALSE(err);
        CHECK(p.epoch() == 2);
        CHECK(r.get().epoch() == 2);
        CHECK(r.get().find("d") != nullptr);
        CHECK(p.counts() == publish_counts{.published = 1, .invalid_snapshot = 1});
    }
    SECTION("a description that builds but may not follow") {
        error_info err;
        CHECK_FALSE(p.try_publish(description(1, active({"x", "y"})), err).has_value());
        CHECK(err == errc::split_brain);
        check_untouched(p, r, first);
        CHECK(p.counts() == publish_counts{.split_brain = 1});
    }
}

TEST_CASE("publisher: a reader sees a publish from its next get, and release drops its pin", "[publisher]") {
    publisher p(built(description(1, active({"a", "b", "c"}))));
    auto r = p.make_reader();
    const snapshot& s1 = r.get();
    CHECK(s1.epoch() == 1);
    CHECK(&r.get() == &s1);  // nothing published: the same object

    CHECK(p.publish(built(p.current()->successor())) == publish_result::published);
    const std::weak_ptr<const snapshot> second_alive = p.current();
    CHECK(r.get().epoch() == 2);

    SECTION("an idle reader pins its snapshot until release") {
        CHECK(p.publish(built(p.current()->successor())) == publish_result::published);  // epoch 3
        CHECK_FALSE(second_alive.expired());  // the publisher let go of epoch 2; the reader pins it
        r.release();
        CHECK(second_alive.expired());
        CHECK(r.get().epoch() == 3);  // get() after release takes the current one
        r.release();
        r.release();  // twice is fine
        CHECK(r.get().epoch() == 3);
    }
    SECTION("moves") {
        auto moved = std::move(r);
        CHECK(moved.get().epoch() == 2);
        CHECK(r.get().epoch() == 2);  // NOLINT(bugprone-use-after-move): a moved-from reader still works
        publisher::reader assigned = p.make_reader();
        assigned = std::move(moved);
        CHECK(p.publish(built(p.current()->successor())) == publish_result::published);
        CHECK(assigned.get().epoch() == 3);
        CHECK(moved.get().epoch() == 3);  // NOLINT(bugprone-use-after-move)
    }
}

namespace {

// Counts the snapshots alive, so the stress test can see that none leaks.
struct counted_delete {
    std::atomic<int>* live;
    void operator()(const snapshot* s) const noexcept {
        delete s;
        live->fetch_sub(1, std::memory_order_relaxed);
    }
};

// 10^4 publishes in every build, ThreadSanitizer's included (the acceptance figure). Every
// snapshot build computes the 4096-key probe digest: about 0.2 ms here, 1.4 ms under
// ThreadSanitizer, so the prebuilding on two threads costs about 7 s there.
constexpr std::uint64_t stress_epochs = 10'000;

// Epoch e of the stress cluster: 3 to 6 of the ids node-0 ... node-7, a different set each epoch.
auto stress_description(std::uint64_t e) -> snapshot_description {
    std::vector<snapshot_node> nodes;
    for (std::uint64_t i = 0; i < 3 + e % 4; ++i) {
        nodes.push_back({.id = "node-" + std::to_string((e + 3 * i) % 8)});
    }
    return description(e, std::move(nodes), "stress");
}

struct reader_log {
    std::uint64_t reads = 0;
    std::uint64_t verified = 0;
    std::uint64_t epochs_seen = 0;  // distinct epochs
    std::uint64_t failures = 0;
    std::string first_failure;
    std::uint64_t final_epoch = 0;

    void fail(std::string what) {
        if (failures++ == 0) {
            first_failure = std::move(what);
        }
    }
};

}  // namespace

TEST_CASE("publisher: readers on 4 threads while the main thread publishes successive epochs",
          "[publisher][stress]") {
    constexpr std::size_t reader_count = 4;
    const std::uint64_t last = stress_epochs;
    std::atomic<int> live{0};

    // Prebuilt, on two threads, before any reader starts: table[e] is epoch e (1 ... last).
    std::vector<std::shared_ptr<const snapshot>> table(last + 1);
    {
        std::vector<std::thread> builders;
        for (std::uint64_t b = 0; b < 2; ++b) {
            builders.emplace_back([&, b] {
                for (std::uint64_t e = 1 + b; e <= last; e += 2) {
                    table[e] = std::shared_ptr<const snapshot>(new snapshot(snapshot::build(stress_description(e))),
                                                               counted_delete{&live});
                    live.fetch_add(1, std::memory_order_relaxed);
                }
            });
        }
        for (auto& t : builders) {
            t.join();
        }
    }
    // What readers compare with: read-only from here on.
    std::vector<digest128> fingerprints(last + 1);
    for (std::uint64_t e = 1; e <= last; ++e) {
        REQUIRE(table[e]->epoch() == e);
        fingerprints[e] = table[e]->fingerprint();
        if (e > 1) {
            REQUIRE(fingerprints[e] != fingerprints[e - 1]);
        }
    }
    REQUIRE(live.load() == static_cast<int>(last));
    const std::weak_ptr<const snapshot> first_alive = table[1];

    std::vector<reader_log> logs(reader_count);
    {
        publisher p(std::move(table[1]));
        std::atomic<std::uint64_t> published{1};  // the last epoch whose publish() returned
        std::atomic<bool> done{false};
        std::atomic<std::size_t> started{0};

        std::vector<std::thread> readers;
        for (std::size_t t = 0; t < reader_count; ++t) {
            readers.emplace_back([&, t] {
                reader_log& log = logs[t];
                auto r = p.make_reader();
                std::uint64_t seen = 0;
                started.fetch_add(1);
                while (!done.load(std::memory_order_acquire)) {
                    const std::uint64_t promised = published.load(std::memory_order_acquire);
                    const snapshot& s = r.get();
                    const std::uint64_t e = s.epoch();
                    ++log.reads;
                    if (e < seen) {
                        log.fail("epoch went back from " + std::to_string(seen) + " to " + std::to_string(e));
                    }
                    if (e < promised) {
                        log.fail("read after publish: got epoch " + std::to_string(e) + " after publish(" +
                                 std::to_string(promised) + ") returned");
                    }
                    if (e == 0 || e > last) {
                        log.fail("epoch " + std::to_string(e) + " was never published");
                    } else if (s.fingerprint() != fingerprints[e] || s.cluster() != "stress") {
                        log.fail("epoch " + std::to_string(e) + " is not the snapshot built for it");
                    }
                    if (log.reads % 64 == 0) {
                        ++log.verified;
                        if (!s.verify()) {
                            log.fail("epoch " + std::to_string(e) + ": verify() failed");
                        }
                    }
                    log.epochs_seen += e != seen ? 1 : 0;
                    seen = e;
                    if (t == 0 && log.reads % 1024 == 0) {
                        r.release();  // an idle thread; the next get() takes the current snapshot
                    }
                    if (log.reads % 32 == 0) {
                        std::this_thread::yield();  // 5 threads on 2 cores: interleave with the publishes
                    }
                }
                log.final_epoch = r.get().epoch();
            });
        }
        while (started.load() < reader_count) {
            std::this_thread::yield();
        }
        std::uint64_t not_published = 0;
        error_info err;
        for (std::uint64_t e = 2; e <= last; ++e) {
            // The publisher and the readers own it now. (try_: nothing may throw while readers run.)
            not_published += p.try_publish(std::move(table[e]), err) == publish_result::published ? 0 : 1;
            published.store(e, std::memory_order_release);
            std::this_thread::yield();
        }
        done.store(true, std::memory_order_release);
        for (auto& t : readers) {
            t.join();
        }
        CHECK(not_published == 0);
        CHECK(p.epoch() == last);
        CHECK(p.counts() == publish_counts{.published = last - 1});
        // Every reader is gone and every table entry was handed over: only the current one lives.
        CHECK(live.load() == 1);
        CHECK(first_alive.expired());
    }
    CHECK(live.load() == 0);  // the publisher released the last one

    for (std::size_t t = 0; t < reader_count; ++t) {
        INFO("reader " << t << ": " << logs[t].reads << " reads, " << logs[t].verified << " verified, "
                       << logs[t].epochs_seen << " epochs seen; first failure: " << logs[t].first_failure);
        CHECK(logs[t].failures == 0);
        CHECK(logs[t].final_epoch == last);
        CHECK(logs[t].verified > 0);
    }
    // The readers ran between the publishes (not all before or after them).
    std::uint64_t switches = 0;
    for (const auto& log : logs) {
        switches += log.epochs_seen;
    }
    CHECK(switches > reader_count);
}
