// Built as its own program (tests/CMakeLists.txt) with KEYPLACE_ASSERT defined to a handler that
// prints the failed condition and exits 3: a query's precondition (a node index below size()) is
// checked, not read past the end (ctest checks the output). The argument names the query.
#include <cstdio>
#include <cstdlib>
#include <string_view>

[[noreturn]] void keyplace_test_assert(const char* condition) {
    std::printf("precondition: %s\n", condition);
    std::fflush(stdout);
    std::exit(3);
}
#define KEYPLACE_ASSERT(cond) ((cond) ? (void)0 : keyplace_test_assert(#cond))

#include <keyplace/partitions.hpp>
#include <keyplace/rendezvous.hpp>

int main(int argc, char** argv) {
    const std::string_view query = argc > 1 ? argv[1] : "draw";
    if (query == "draw") {
        const auto r = keyplace::rendezvous::build({{"a"}, {"b"}});
        std::printf("draw 1: %s\n", r.draw(42, 1) != 0 ? "drawn" : "zero");
        (void)r.draw(42, r.size());  // one past the end: the handler exits
    } else if (query == "partitions.slots" || query == "partitions.holds") {
        const auto p = keyplace::partitions::build({{"a"}, {"b"}}, {.partitions = 4});
        const keyplace::node_index last{1};
        const keyplace::node_index past{static_cast<std::uint32_t>(p.size())};
        std::printf("slots 1: %u\n", p.slots(last));
        (void)(query == "partitions.slots" ? p.slots(past) != 0 : p.holds(past));  // the handler exits
    }
    std::printf("not reached\n");
    return 0;
}
