// keyplace-cli's run() (see run.hpp): the command table's dispatch, usage and help. Each
// command's body is compiled in its family's source (commands.hpp says which).
#include "run.hpp"

#include "keyplace_cli.hpp"

#include <exception>
#include <istream>
#include <new>
#include <ostream>
#include <string>

namespace keyplace_cli {

auto run(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err,
         const stream_options& options) -> int {
    const auto fail = [&](int status, std::string_view what) {
        // One line of bounded length, whatever threw (quote() bounds what the CLI echoes, not
        // what the library's messages repeat).
        constexpr std::size_t limit = 1024;
        std::string line(what.substr(0, limit));
        for (auto& c : line) {
            c = c == '\n' || c == '\r' ? ' ' : c;
        }
        if (what.size() > limit) {
            line += "... (" + std::to_string(what.size()) + " bytes)";
        }
        err << "keyplace-cli: " << line << '\n';
        err.flush();
        return status;
    };
    std::string result;
    try {
        result = execute(args, in, {&out, &err, options});
    } catch (const cli_error& e) {
        if (!e.output.empty()) {
            out << e.output;
            out.flush();
        }
        return fail(e.status, e.what());
    } catch (const keyplace::error& e) {
        return fail(exit_bad_input, e.what());
    } catch (const std::bad_alloc&) {
        return fail(exit_bad_input, "out of memory (fewer keys, nodes, points or table entries need less)");
    } catch (const std::exception& e) {
        return fail(exit_bad_input, e.what());
    } catch (...) {
        return fail(exit_bad_input, "failed: an unknown exception");
    }
    out << result;
    out.flush();
    if (!out) {
        return fail(exit_bad_input, "cannot write the output");
    }
    return exit_ok;
}

}  // namespace keyplace_cli
