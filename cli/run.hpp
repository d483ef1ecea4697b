// keyplace-cli's entry point, declared without the commands: run() is compiled once, in
// run.cpp (the keyplace_cli_run library), and main.cpp, the tests and the fuzz target link it,
// so the commands are instantiated over every strategy in one translation unit, not in each.
#ifndef KEYPLACE_CLI_RUN_HPP_INCLUDED
#define KEYPLACE_CLI_RUN_HPP_INCLUDED

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string_view>

namespace keyplace_cli {

/// How a command reports progress on stderr: not at all; as one status line rewritten in
/// place once the command has run about a second, erased when it ends (stderr a terminal);
/// or as a line per step from the start and one at the end (tests, logs).
enum class progress_mode { off, terminal, lines };

/// How run() streams: the progress mode, and the knobs tests turn down to exercise several
/// blocks and the temporary file with a few lines.
struct stream_options {
    progress_mode progress = progress_mode::off;
    std::size_t block_lines = std::size_t{1} << 16;  ///< keys read and answered at a time
    std::size_t held_bytes = std::size_t{1} << 22;   ///< output held in memory before the file
};

/// Runs keyplace-cli with args (without the program name). Writes to out only on success;
/// on failure, one "keyplace-cli: ..." line to err and the exit status. options: how commands
/// that read keys stream and show progress (main: a status line when stderr is a terminal).
/// Never throws.
auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err,
         const stream_options& options = {}) -> int;

}  // namespace keyplace_cli

#endif
