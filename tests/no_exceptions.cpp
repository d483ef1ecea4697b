// Built with -fno-exceptions (tests/CMakeLists.txt): every public header compiles, the try_
// forms report through error_info, and a throwing form reaches KEYPLACE_ON_ERROR, which here
// prints the failure and exits 3 (ctest checks both lines of output).
#include <cstdio>
#include <cstdlib>

[[noreturn]] void keyplace_test_on_error(int code, const char* message) {
    std::printf("handler: code %d: %s\n", code, message);
    std::fflush(stdout);
    std::exit(3);
}
#define KEYPLACE_ON_ERROR keyplace_test_on_error

#include <keyplace/keyplace.hpp>

#include <span>
#include <vector>

int main() {
    const std::vector<keyplace::node> nodes{{"a"}, {"b"}};
    keyplace::error_info err;
    const auto ring = keyplace::ring::try_build(nodes, {.vnodes = 0}, err);
    std::printf("try_build: %s: code %d: %s\n", ring ? "built" : "refused", static_cast<int>(err.code()),
                err.message().c_str());
    const auto ok = keyplace::maglev::build(nodes, {.table_size = 7});
    std::printf("maglev: %zu nodes\n", ok.size());
    (void)keyplace::maglev::build(nodes, {.table_size = 8});  // not prime: the handler exits
    std::printf("not reached\n");
    return 0;
}
