// Built as its own program (tests/CMakeLists.txt) with KEYPLACE_ASSERT defined to a handler that
// prints the failed condition and exits 3: a query's precondition (rendezvous::draw's node index
// below size()) is checked, not read past the end (ctest checks the output).
#include <cstdio>
#include <cstdlib>

[[noreturn]] void keyplace_test_assert(const char* condition) {
    std::printf("precondition: %s\n", condition);
    std::fflush(stdout);
    std::exit(3);
}
#define KEYPLACE_ASSERT(cond) ((cond) ? (void)0 : keyplace_test_assert(#cond))

#include <keyplace/rendezvous.hpp>

int main() {
    const auto r = keyplace::rendezvous::build({{"a"}, {"b"}});
    std::printf("draw 1: %s\n", r.draw(42, 1) != 0 ? "drawn" : "zero");
    (void)r.draw(42, r.size());  // one past the end: the handler exits
    std::printf("not reached\n");
    return 0;
}
