// keyplace-cli's progress line (stream.hpp) on its own: the painter thread draws while the
// command's thread counts keys and changes steps. Built in every test build and by the tsan
// preset, which builds no other part of keyplace-cli: this is the CLI's one thread.
#include "stream.hpp"

#include "../../tests/keyplace_catch.hpp"

#include <chrono>
#include <cstddef>
#include <sstream>
#include <string>
#include <thread>

namespace progress_test {

/// The lines a terminal progress drew: each starts with "\r\x1b[K" (erase the line).
auto drawn(const std::string& out) -> std::size_t {
    std::size_t n = 0;
    for (auto at = out.find("\r\x1b[Kkeyplace-cli: "); at != std::string::npos;
         at = out.find("\r\x1b[Kkeyplace-cli: ", at + 1)) {
        ++n;
    }
    return n;
}

}  // namespace progress_test

TEST_CASE("cli progress: the painter thread draws while two steps count keys, and erases its line at the end",
          "[cli][progress][threads]") {
    std::ostringstream err;
    {
        keyplace_cli::progress shown(err, keyplace_cli::progress_mode::terminal, "stats");
        shown.step("building");
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1600);
        bool second = false;
        while (std::chrono::steady_clock::now() < until) {
            shown.advance(1000);
            if (!second && std::chrono::steady_clock::now() + std::chrono::milliseconds(700) > until) {
                shown.step("placing the keys", 100'000'000);  // a known total: the line gains an estimate
                second = true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        shown.finish();
    }
    const std::string out = err.str();
    // Whatever the scheduling: nothing but progress lines, and if one was drawn, it was erased last.
    if (!out.empty()) {
        CHECK(out.rfind("\r\x1b[Kkeyplace-cli: stats: ", 0) == 0);
        CHECK(out.size() >= 4);
        CHECK(out.substr(out.size() - 4) == "\r\x1b[K");
        CHECK(out.find('\n') == std::string::npos);
    }
    CHECK(progress_test::drawn(out) <= 4);  // one at about 1 s, then every 500 ms
}

TEST_CASE("cli progress: lines mode writes one line per step and count, from the command's thread only",
          "[cli][progress]") {
    std::ostringstream err;
    keyplace_cli::progress shown(err, keyplace_cli::progress_mode::lines, "diff");
    shown.step("building --nodes-before");
    shown.advance(5);
    shown.finish();
    const std::string out = err.str();
    CHECK(out.rfind("keyplace-cli: diff: building --nodes-before\nkeyplace-cli: diff: building --nodes-before, 5 keys\n"
                    "keyplace-cli: diff: done in ",
                    0) == 0);
}
