// keyplace-cli: see keyplace_cli.hpp and the README.
#include "descriptors.hpp"
#include "run.hpp"

#include <cstdio>
#include <iostream>
#include <string_view>
#include <vector>

#if defined(_WIN32)
#include <io.h>
#define KEYPLACE_CLI_ISATTY(fd) _isatty(fd)
#else
#include <unistd.h>
#define KEYPLACE_CLI_ISATTY(fd) isatty(fd)
#endif

auto main(int argc, char** argv) -> int {
    // Before anything opens a file or socket: a closed stdout fails at its first write.
    if (!keyplace_cli::hold_standard_descriptors().held) {
        std::fputs("keyplace-cli: cannot open /dev/null to hold a closed standard descriptor\n", stderr);
        return 1;
    }
    std::ios::sync_with_stdio(false);
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    keyplace_cli::stream_options options;
    // Progress is for a person watching: only when stderr is a terminal.
    if (KEYPLACE_CLI_ISATTY(2) != 0) {
        options.progress = keyplace_cli::progress_mode::terminal;
    }
    return keyplace_cli::run(args, std::cin, std::cout, std::cerr, options);
}
