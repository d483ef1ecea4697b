// Built as its own program (tests/CMakeLists.txt) with KEYPLACE_ASSERT defined to a handler that
// prints the failed condition and exits 3: a query's precondition (a node index below size()) is
// checked, not read past the end (ctest checks the output). The argument picks the query.
#include <cstdio>
#include <cstdlib>
#include <string_view>

[[noreturn]] void keyplace_test_assert(const char* condition) {
    std::printf("precondition: %s\n", condition);
    std::fflush(stdout);
    std::exit(3);
}
#define KEYPLACE_ASSERT(cond) ((cond) ? (void)0 : keyplace_test_assert(#cond))

#include <keyplace/bounded_load.hpp>
#include <keyplace/memento.hpp>
#include <keyplace/partitions.hpp>
#include <keyplace/rendezvous.hpp>
#include <keyplace/ring.hpp>

int main(int argc, char** argv) {
    const std::string_view which = argc > 1 ? argv[1] : "draw";
    const keyplace::node_index past{2};  // one past the end of two nodes
    if (which == "draw") {
        const auto r = keyplace::rendezvous::build({{"a"}, {"b"}});
        std::printf("draw 1: %s\n", r.draw(42, 1) != 0 ? "drawn" : "zero");
        (void)r.draw(42, r.size());  // one past the end: the handler exits
    } else if (which == "partitions.slots" || which == "partitions.holds") {
        const auto p = keyplace::partitions::build({{"a"}, {"b"}}, {.partitions = 4});
        std::printf("slots 1: %u\n", p.slots(keyplace::node_index{1}));
        (void)(which == "partitions.slots" ? p.slots(past) != 0 : p.holds(past));  // the handler exits
    } else if (which == "load") {
        const auto t = keyplace::load_tracker<keyplace::ring>::build(keyplace::ring::build({{"a"}, {"b"}}));
        std::printf("load 1: %llu\n", static_cast<unsigned long long>(t.load(keyplace::node_index{1})));
        (void)t.load(past);
    } else if (which == "cap") {
        const auto c = keyplace::load_caps::build(keyplace::ring::build({{"a"}, {"b"}}), {.load_factor = 1.25});
        std::printf("cap 1: %llu\n", static_cast<unsigned long long>(c.cap(keyplace::node_index{1}, 8)));
        (void)c.cap(past, 8);
    } else if (which == "bucket_of") {
        const auto m = keyplace::memento::build({{"a"}, {"b"}});
        std::printf("bucket_of 1: %u\n", m.bucket_of(keyplace::node_index{1}));
        (void)m.bucket_of(past);
    }
    std::printf("not reached\n");
    return 0;
}
