// Fuzz target: keyplace-cli's argument handling, in-process (keyplace_cli::run on string
// streams), every command but etcd's (compiled in where the etcd component is, but an input
// naming them is skipped: the harness opens no network connection).
//
// Input: the arguments, each ended by a NUL, then a second NUL; then the first file's bytes up to
// "\0\0", the second file's up to "\0\0"; the rest is stdin. An argument may name the files as
// FILE and FILE2 (replaced by their paths: node files, key files, snapshot documents).
//
// Skipped inputs (the harness's bounds, not the CLI's): more than 32 arguments; an argument that
// could name a file outside the scratch files (starting with '/' or '~', holding "..", "@/" or
// "=/"); and any number, in an argument or a file, that would make one execution slow or large
// (see bounded()): the CLI's handling of huge sizes is a known open item (issue 18, items 1 and 7).
//
// Invariants (doc/cli.md, "keyplace-cli"):
//  - run() returns (nothing escapes it) with status 0, 1 or 2;
//  - status 0: nothing on stderr; stdout empty or ending in a newline; with --json (given as a
//    flag) and not --help, stdout is one valid JSON value (one line, or snapshot create's
//    indented document);
//  - status 1 or 2: nothing on stdout, exactly one line on stderr, "keyplace-cli: ...".
//  - and what issue 18 asked of the CLI: no control byte in the stderr line (user text quoted,
//    item 9), the line at most 4 KiB (echoed values cut, item 11), JSON strings valid UTF-8
//    (item 12).
#include "fuzz_support.hpp"

#include "args.hpp"
#include "run.hpp"

#if KEYPLACE_FUZZ_JSON
#include <nlohmann/json.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using keyplace_fuzz::input;

/// Whether an argument could name a file other than the scratch files.
auto names_outside(std::string_view a) -> bool {
    return a.empty() ? false
                     : a.front() == '/' || a.front() == '~' || a.find("..") != std::string_view::npos ||
                           a.find("@/") != std::string_view::npos || a.find("=/") != std::string_view::npos;
}

/// The bounds on numbers: every maximal word of [0-9A-Za-z.+_-] that reads entirely as a finite
/// decimal, and is not a port, is a number, of magnitude max(|v|, 1/|v|). Magnitudes up to 64 are free; at most two
/// numbers may be larger, each at most 70000 and together at most 2^21 (ring points, table slots,
/// key counts, weight ratios). Words with letters (ids, hex digests) are not numbers.
struct number_budget {
    int big = 0;
    double product = 1;

    auto admit(std::string_view text) -> bool {
        std::size_t i = 0;
        const auto word_char = [](char c) {
            return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                   c == '+' || c == '_' || c == '-';
        };
        while (i < text.size()) {
            if (!word_char(text[i])) {
                ++i;
                continue;
            }
            std::size_t j = i;
            while (j < text.size() && word_char(text[j])) {
                ++j;
            }
            const std::string word(text.substr(i, j - i));
            // A port (host:port) sizes nothing; a JSON value ("vnodes":100000) does.
            const bool port = i >= 2 && text[i - 1] == ':' && word_char(text[i - 2]);
            i = j;
            if (port) {
                continue;
            }
            const char c = word.front();
            if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+') || word.find_first_of("xXpP") != std::string::npos) {
                continue;
            }
            char* end = nullptr;
            const double v = std::strtod(word.c_str(), &end);
            if (end != word.c_str() + word.size() || !std::isfinite(v) || v == 0) {
                continue;
            }
            const double mag = std::max(std::fabs(v), 1 / std::fabs(v));
            if (mag <= 64) {
                continue;
            }
            product *= mag;
            if (++big > 2 || mag > 70000 || product > 2097152.0) {
                return false;
            }
        }
        return true;
    }
};

/// Whether an argument "--name=value" is an option whose number sizes nothing (a seed, an
/// epoch, a rate, a threshold, an output limit); "--name=" alone asks the same of "--name VALUE".
auto free_number(std::string_view a) -> bool {
    static constexpr std::string_view names[] = {"--seed=",          "--epoch=",     "--parent-epoch=",
                                                 "--created-ms=",    "--threshold=", "--sample-per-million=",
                                                 "--max-ranges="};
    for (const auto n : names) {
        if (a.substr(0, n.size()) == n) {
            return true;
        }
    }
    return false;
}

/// Flags, which take no value: a "--json" right after any other "--name" (without '=') may be
/// that option's value instead.
auto is_flag(std::string_view a) -> bool {
    return a == "--json" || a == "--prehashed" || a == "--write-set" || a == "--use-empty-masters";
}

auto json_requested(const std::vector<std::string>& args) -> bool {
    bool json = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--help" || args[i] == "-h" || args[i] == "help") {
            return false;
        }
        if (args[i] == "--json") {
            const bool valued_before = i > 0 && args[i - 1].rfind("--", 0) == 0 &&
                                       args[i - 1].find('=') == std::string::npos && !is_flag(args[i - 1]);
            if (valued_before) {
                return false;  // perhaps a value: cannot tell without the command's table
            }
            json = true;
        }
    }
    return json;
}

void write_file(const std::string& path, std::string_view bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void replace_all(std::string& s, std::string_view from, const std::string& to) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
    }
}

void check_json(const std::string& out) {
#if KEYPLACE_FUZZ_JSON
    KEYPLACE_FUZZ_CHECK(!out.empty() && out.back() == '\n');
    KEYPLACE_FUZZ_CHECK_MSG(nlohmann::json::accept(out), keyplace_cli::quote(out.substr(0, 400)));
#else
    (void)out;
#endif
}

}  // namespace

/// Whether err holds nothing but deprecation lines ("keyplace-cli: --OLD is deprecated ...").
auto only_deprecations(std::string_view err) -> bool {
    while (!err.empty()) {
        const auto end = err.find('\n');
        if (end == std::string_view::npos) {
            return false;
        }
        const auto line = err.substr(0, end);
        if (line.rfind("keyplace-cli: --", 0) != 0 ||
            line.find(" is deprecated and will be removed in ") == std::string_view::npos) {
            return false;
        }
        err.remove_prefix(end + 1);
    }
    return true;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    std::vector<std::string> args;
    for (std::string_view a = in.until('\0'); !a.empty(); a = in.until('\0')) {
        args.emplace_back(a);
        if (args.size() > 32 || names_outside(a)) {
            return -1;  // not added to the corpus
        }
    }
    if (!args.empty() && args.front() == "etcd") {
        return -1;  // no network from the harness
    }
    const std::string_view rest = in.rest();
    const auto section = [](std::string_view& r) {
        const auto end = r.find(std::string_view("\0\0", 2));
        const auto s = r.substr(0, end);
        r = end == std::string_view::npos ? std::string_view() : r.substr(end + 2);
        return s;
    };
    std::string_view r = rest;
    const std::string_view file1 = section(r);
    const std::string_view file2 = section(r);
    const std::string_view stdin_bytes = r;

    number_budget budget;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (free_number(args[i])) {
            continue;
        }
        if (i > 0 && free_number(args[i - 1] + "=")) {
            continue;  // the value of such an option
        }
        if (!budget.admit(args[i])) {
            return -1;
        }
    }
    if (!budget.admit(file1) || !budget.admit(file2)) {
        return -1;
    }
    const bool json = json_requested(args);

    const std::string path1 = keyplace_fuzz::scratch_path("file-1");
    const std::string path2 = keyplace_fuzz::scratch_path("file-2");
    write_file(path1, file1);
    write_file(path2, file2);
    for (auto& a : args) {
        replace_all(a, "FILE2", path2);
        replace_all(a, "FILE", path1);
    }
    const std::vector<std::string_view> views(args.begin(), args.end());

    std::istringstream cin{std::string(stdin_bytes)};
    std::ostringstream cout;
    std::ostringstream cerr;
    int status = -1;
    try {
        status = keyplace_cli::run(views, cin, cout, cerr);
    } catch (const std::exception& e) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "run() threw", e.what());
    } catch (...) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "run() threw", "not a std::exception");
    }
    const std::string out = cout.str();
    const std::string err = cerr.str();
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "status %d, %zu bytes out: %s", status, out.size(), err.empty() ? "\n" : err.c_str());
    }
    KEYPLACE_FUZZ_CHECK(status == 0 || status == 1 || status == 2);
    if (status == 0) {
        // Nothing on stderr but a deprecation line for each old spelling given.
        KEYPLACE_FUZZ_CHECK_MSG(only_deprecations(err), keyplace_cli::quote(err.substr(0, 400)));
        KEYPLACE_FUZZ_CHECK(out.empty() || out.back() == '\n');
        if (json) {
            check_json(out);
        }
        return 0;
    }
    KEYPLACE_FUZZ_CHECK_MSG(out.empty(), keyplace_cli::quote(out.substr(0, 400)));
    KEYPLACE_FUZZ_CHECK_MSG(std::count(err.begin(), err.end(), '\n') == 1 && err.back() == '\n',
                            keyplace_cli::quote(err.substr(0, 400)));
    KEYPLACE_FUZZ_CHECK(err.rfind("keyplace-cli: ", 0) == 0);
    KEYPLACE_FUZZ_CHECK_MSG(!keyplace_fuzz::has_control(std::string_view(err).substr(0, err.size() - 1)),
                            keyplace_cli::quote(err.substr(0, 400)));
    KEYPLACE_FUZZ_CHECK(err.size() <= 4096);
    return 0;
}
