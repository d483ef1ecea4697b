// keyplace-cli's command table: every command's name, help and options (the entries of
// hash, hot-keys, locate, diff and stats here; the others' in their family's header), the usage and help
// generated from them, and execute(), which run() (run.cpp) wraps. Each command's run is
// declared here and defined in its family's source (hash.cpp, locate.cpp, diff.cpp, stats.cpp,
// planning.cpp, snapshot.cpp, etcd.cpp), so the families compile apart and in parallel.
#ifndef KEYPLACE_CLI_COMMANDS_HPP_INCLUDED
#define KEYPLACE_CLI_COMMANDS_HPP_INCLUDED

#include "args.hpp"
#include "bounded_commands.hpp"
#include "components.hpp"
#include "etcd_commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "planning_commands.hpp"
#include "registry.hpp"
#include "snapshot_commands.hpp"
#include "spec.hpp"
#include "stream.hpp"

#include <keyplace/version.hpp>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <istream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyplace_cli {

// ---- the command table ------------------------------------------------------------------------
// A command has name, help, the strategy options it takes (strategy_use), options(), a tuple
// of pointers to its own options, and run(args, stdin) returning what it prints (or run_live,
// given run()'s streams); a command of an optional component names it (needs).

struct hash_command {
    static constexpr std::string_view name = "hash";
    static constexpr std::string_view help = "each line's hash under F";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() { return std::tuple{&function_option, &input_keys_option, &json_flag, &quiet_flag}; }
    static constexpr bool keys_replace_stdin = true;
    /// Streams as locate does.
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string;
};

struct hot_keys_command {
    static constexpr std::string_view name = "hot-keys";
    static constexpr std::string_view help = "the most requested keys of a key stream, each count with its bounds";
    static constexpr strategy_use strategy_options = strategy_use::none;
    static constexpr auto options() {
        return std::tuple{&top_option, &candidates_option, &sketch_width_option, &sketch_depth_option,
                          &input_keys_option, &json_flag, &quiet_flag};
    }
    static constexpr bool keys_replace_stdin = true;
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string;
};

struct locate_command {
    static constexpr std::string_view name = "locate";
    static constexpr std::string_view help = "each key's owner or, with --copies, its copies";
    static constexpr strategy_use strategy_options = strategy_use::locate;
    static constexpr auto options() {
        return std::tuple{&strategy_option,     &nodes_option, &input_keys_option, &prehashed_flag,
                          &copies_n_option,     &spread_option,    &shortfall_option,  &json_flag,
                          &quiet_flag,          &snapshot_option,  &write_set_flag,    &load_factor_option,
                          &spread_reads_option, &salt_option};
    }
    static constexpr bool keys_replace_stdin = true;
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string;
};

struct diff_command {
    static constexpr std::string_view name = "diff";
    static constexpr std::string_view help = "what a membership change moves, against the least it must";
    static constexpr strategy_use strategy_options = strategy_use::build;
    static constexpr auto options() {
        return std::tuple{&strategy_option, &nodes_before_option, &nodes_after_option, &key_file_option,
                          &prehashed_keys_flag, &json_flag, &quiet_flag};
    }
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string;
};

struct stats_command {
    static constexpr std::string_view name = "stats";
    static constexpr std::string_view help = "each node's share of the hash space and of N keys (or of a key file's)";
    static constexpr strategy_use strategy_options = strategy_use::build;
    static constexpr auto options() {
        return std::tuple{&strategy_option,     &nodes_option, &key_count_option, &stats_key_file_option,
                          &prehashed_keys_flag, &json_flag,    &quiet_flag};
    }
    static auto run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string;
};

/// Every command, built or not: one whose component this build lacks is listed and, run, says so.
using commands = entry_list<hash_command, hot_keys_command, locate_command, diff_command, stats_command, allocate_command,
                            redis_create_command, redis_rebalance_command, snapshot_create_command,
                            snapshot_next_command, snapshot_verify_command, snapshot_diff_command, snapshot_ramp_command,
                            snapshot_rollback_command,
                            shadow_command,
                            plan_command, what_if_command, metrics_command, advise_command, etcd_publish_command, etcd_current_command, etcd_watch_command,
                            etcd_ramp_command, etcd_status_command, contact_command, shard_command>;

/// A command's positional arguments become its options, in order: "verify F" is "verify --file F".
template <class C>
auto with_positionals(std::span<const std::string_view> args, std::vector<std::string>& storage)
    -> std::vector<std::string_view> {
    std::vector<std::string_view> out;
    std::vector<option_spec> slots;
    if constexpr (requires { C::positionals; }) {
        for_each_in(C::positionals, [&](const auto& o) { slots.push_back(o.spec); });
    }
    std::vector<option_spec> valued;
    for_each_in(C::options(), [&](const auto& o) {
        if (!o.spec.value.empty()) {
            valued.push_back(o.spec);
        }
    });
    storage.reserve(args.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg.substr(0, 2) == "--" || arg == "-h") {
            out.push_back(arg);
            const bool takes_value =
                arg.find('=') == std::string_view::npos &&
                std::any_of(valued.begin(), valued.end(), [&](const option_spec& s) { return arg.substr(2) == s.name; });
            if (takes_value && i + 1 < args.size()) {
                out.push_back(args[++i]);
            }
        } else if (next < slots.size()) {
            storage.push_back("--" + std::string(slots[next++].name) + "=" + std::string(arg));
            out.push_back(storage.back());
        } else {
            out.push_back(arg);  // parsed_args reports it
        }
    }
    return out;
}

inline constexpr choice_option<commands> command_choice{{"", "COMMAND", ""}, "command"};

// ---- usage and help -----------------------------------------------------------------------------

inline constexpr std::string_view input_notes =
    "Keys are read from stdin, one per line: the bytes between newlines, not trimmed; an empty\n"
    "line is the empty key. SPEC: comma-separated ID[=WEIGHT][@REGION[/ZONE[/RACK]]], or @PATH\n"
    "to a file with one such entry per line (blank lines and lines starting with # are\n"
    "skipped); some strategies read other entries (see COMMAND --help). Output is written only\n"
    "when every input line was valid. Exit status: 0 ok, 1 bad input, 2 bad arguments"
    ", 3 etcd status: two clients report one epoch with different fingerprints"
    ".\n";

/// "--name VALUE" ("--name" for a flag).
inline auto term(const option_spec& s) -> std::string {
    return "--" + std::string(s.name) + (s.value.empty() ? "" : " " + std::string(s.value));
}

/// The term, in brackets if the option is optional.
inline auto synopsis(const option_spec& s) -> std::string {
    return s.required ? term(s) : "[" + term(s) + "]";
}

template <class Options>
auto synopsis_of(const Options& options) -> std::string {
    std::string out;
    for_each_in(options, [&](const auto& o) { out += (out.empty() ? "" : " ") + synopsis(o.spec); });
    return out;
}

template <class C>
auto command_synopsis() -> std::string {
    return "keyplace-cli " + std::string(C::name) + " " + synopsis_of(C::options()) +
           (C::strategy_options == strategy_use::none ? "" : " [strategy options]");
}

/// One row per option: its term and its help with its default.
template <class Options>
auto option_rows(const Options& options) -> std::vector<std::pair<std::string, std::string>> {
    std::vector<std::pair<std::string, std::string>> rows;
    for_each_in(options, [&](const auto& o) { rows.emplace_back(term(o.spec), o.describe()); });
    return rows;
}

/// The strategies, each with its help, its SPEC form and, with details, its options.
inline auto strategy_section(strategy_use use, bool details) -> std::string {
    std::string out = "strategies (--strategy S):\n";
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        std::string line(E::name);
        std::vector<std::pair<std::string, std::string>> options;
        for_each_option<E>(use, [&](const auto& o) {
            line += " " + synopsis(o.spec);
            options.emplace_back(term(o.spec), o.describe());
        });
        out += help_rows({{details ? std::string(E::name) : line, std::string(E::help)}}, "  ");
        if (details) {
            if constexpr (requires { E::spec_help; }) {
                options.insert(options.begin(), {"SPEC", std::string(E::spec_help)});
            }
            out += help_rows(options, "    ");
        }
    });
    return out;
}

inline auto hash_section() -> std::string {
    std::vector<std::pair<std::string, std::string>> rows;
    for_each_entry(hash_functions{}, [&]<class H>(std::type_identity<H>) {
        rows.emplace_back(std::string(H::name), std::string(H::help));
    });
    return "hash functions (hash --function F):\n" + help_rows(rows, "  ");
}

/// keyplace-cli --help.
inline auto usage() -> std::string {
    std::string out =
        "usage: keyplace-cli COMMAND [OPTIONS]\n"
        "       keyplace-cli COMMAND --help   a command's options, and those of each strategy\n"
        "       keyplace-cli --version\n\ncommands:\n";
    for_each_entry(commands{}, [&]<class C>(std::type_identity<C>) {
        out += "  " + command_synopsis<C>().substr(command_synopsis<C>().find(' ') + 1) + "\n      " +
               std::string(C::help) + "\n";
    });
    return out + "\n" + strategy_section(strategy_use::locate, false) + "\n" + hash_section() + "\n" +
           std::string(input_notes);
}

/// keyplace-cli COMMAND --help.
template <class C>
auto command_help() -> std::string {
    std::string out = "usage: " + command_synopsis<C>() + "\n" + std::string(C::help) + "\n\noptions:\n" +
                      help_rows(option_rows(C::options()), "  ");
    if constexpr (std::is_same_v<C, hash_command>) {
        out += "\n" + hash_section();
    } else if constexpr (C::strategy_options != strategy_use::none) {
        out += "\n" + strategy_section(C::strategy_options, true);
    }
    return out + "\n" + std::string(input_notes);
}

inline auto version_line() -> std::string {
    const auto v = keyplace::version;
    return "keyplace-cli " + std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch) +
           " (placement contract " + std::to_string(v.contract) + ")\n";
}

// ---- running ------------------------------------------------------------------------------------

/// The two-word command families: their first word and the subcommands it takes.
inline auto subcommands_of(std::string_view first) -> std::string_view {
    if (first == "snapshot") {
        return "create, next, verify or diff";
    }
    if (first == "etcd") {
        return "publish, current, watch or status";
    }
    if (first == "redis") {
        return "create or rebalance";
    }
    return "";
}

/// keyplace-cli FAMILY --help ("snapshot --help"): the synopsis and help of each subcommand.
inline auto family_help(std::string_view family) -> std::string {
    std::string out = "usage: keyplace-cli " + std::string(family) + " SUBCOMMAND [OPTIONS]\n\nsubcommands:\n";
    for_each_entry(commands{}, [&]<class C>(std::type_identity<C>) {
        if (C::name.substr(0, family.size() + 1) == std::string(family) + " ") {
            out += "  " + command_synopsis<C>().substr(command_synopsis<C>().find(' ') + 1) + "\n      " +
                   std::string(C::help) + "\n";
        }
    });
    return out + "\nkeyplace-cli " + std::string(family) + " SUBCOMMAND --help: a subcommand's options.\n";
}

/// Whether an argument asks for help: --help, or -h.
inline auto is_help(std::string_view arg) -> bool {
    return arg == "--help" || arg == "-h";
}

/// C's run with its parsed arguments: run_live with run()'s streams where C writes as it goes.
template <class C>
auto run_parsed(const parsed_args& a, std::istream& stdin_stream, live_streams live) -> std::string {
    // --keys FILE instead of stdin, for a command that reads its keys from stdin.
    std::ifstream key_file;
    std::string source;
    if constexpr (requires { C::keys_replace_stdin; }) {
        if (const auto path = a.get(input_keys_option.spec)) {
            key_file.open(*path, std::ios::binary);
            if (!key_file) {
                input_error("cannot read key file " + quote(*path) + ": " + os_error());
            }
            source = "key file " + quote(*path);
            live.input = source;
        }
    }
    std::istream& in = key_file.is_open() ? static_cast<std::istream&>(key_file) : stdin_stream;
    if constexpr (requires { &C::run_live; }) {
        if (live.out != nullptr && live.err != nullptr) {
            return C::run_live(a, in, live);
        }
        std::ostringstream out;
        std::ostringstream err;
        const std::string tail = C::run_live(a, in, live_streams{&out, &err, live.stream, live.input});
        return out.str() + tail;
    } else {
        return C::run(a, in);
    }
}

/// The man page (roff) and the bash completion script, generated from the command table
/// (manual.cpp): what "keyplace-cli help --roff" and "help --bash-completion" print, and what
/// cli/keyplace-cli.1 and cli/keyplace-cli.bash hold.
auto man_page() -> std::string;
auto bash_completion() -> std::string;

/// What command C prints for its arguments (those after its name); throws on any failure.
template <class C>
auto run_command(std::span<const std::string_view> args, std::istream& in, live_streams live = {}) -> std::string {
    // --help anywhere after the command wins over everything else on the line.
    if (std::any_of(args.begin(), args.end(), is_help)) {
        return command_help<C>();
    }
    if constexpr (requires { C::needs; }) {
        if constexpr (!is_built(C::needs)) {
            usage_error(not_built_message(C::needs));
        }
    }
    std::vector<option_spec> known{{"help", "", "this help"}};
    for_each_in(C::options(), [&](const auto& o) { known.push_back(o.spec); });
    const auto strategy = all_strategy_options(C::strategy_options);
    known.insert(known.end(), strategy.begin(), strategy.end());
    std::vector<std::string> respelled;
    std::vector<std::string> notes;
    const auto current = respell(args, known, respelled, notes);
    if (live.err != nullptr) {
        for (const auto& n : notes) {
            *live.err << "keyplace-cli: " << n << '\n';
        }
    }
    std::vector<std::string> storage;
    const auto rest = with_positionals<C>(current, storage);
    const parsed_args a(rest, known);
    if constexpr (requires { C::needs; }) {
        if constexpr (!is_built(C::needs)) {
            return std::string();  // refused above
        } else {
            return run_parsed<C>(a, in, live);
        }
    } else {
        return run_parsed<C>(a, in, live);
    }
}

/// What a command line prints on success; throws on any failure.
inline auto execute(std::span<const std::string_view> args, std::istream& in, live_streams live = {})
    -> std::string {
    if (args.empty()) {
        usage_error("no command given; try 'keyplace-cli --help'");
    }
    const std::string_view first = args.front();
    if (first == "help" && args.size() == 2 && (args[1] == "--roff" || args[1] == "--bash-completion")) {
        // Hidden: the generated man page and completion script (cli/CMakeLists.txt checks the
        // committed ones against them).
        return args[1] == "--roff" ? man_page() : bash_completion();
    }
    if (is_help(first) || first == "help") {
        // "help COMMAND [SUBCOMMAND]" is "COMMAND [SUBCOMMAND] --help".
        if (first == "help" && args.size() > 1) {
            std::vector<std::string_view> asked(args.begin() + 1, args.end());
            asked.emplace_back("--help");
            return execute(asked, in, live);
        }
        return usage();
    }
    if (first == "--version") {
        if (args.size() > 1) {
            usage_error("unexpected argument " + quote(args[1]));
        }
        return version_line();
    }
    // A two-word command ("snapshot create") is named by its first two arguments.
    std::string name(first);
    std::size_t words = 1;
    if (const auto subcommands = subcommands_of(first); !subcommands.empty()) {  // also one argument
        if (args.size() < 2 || args[1].substr(0, 2) == "--" || is_help(args[1])) {
            if (std::any_of(args.begin(), args.end(), is_help)) {
                return family_help(first);
            }
            usage_error(std::string(first) + " needs a subcommand: " + std::string(subcommands));
        }
        name += " " + std::string(args[1]);
        words = 2;
    }
    return visit_entry(commands{}, command_choice.parse(name), [&]<class C>(std::type_identity<C>) {
        return run_command<C>(args.subspan(words), in, live);
    });
}

}  // namespace keyplace_cli

#endif
