// keyplace-cli: see keyplace_cli.hpp and the README.
#include "keyplace_cli.hpp"

#include <iostream>
#include <string_view>
#include <vector>

auto main(int argc, char** argv) -> int {
    std::ios::sync_with_stdio(false);
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    return keyplace_cli::run(args, std::cin, std::cout, std::cerr);
}
