// keyplace-cli's man page (roff) and bash completion, generated from the command table: the
// commands, their options, the strategies with theirs and the hash functions come from the
// registry, so a new command or option needs no edit here. The prose sections (NAME,
// DESCRIPTION, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES) are written below.
#include "commands.hpp"

#include <keyplace/failure_domain.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyplace_cli {
namespace manual {

// ---- roff ---------------------------------------------------------------------------------------

/// Text for a roff line: backslashes and hyphens escaped (an option's "-" is a minus sign, so it
/// copies as one), and a line that would start with a control character protected.
auto roff(std::string_view text) -> std::string {
    std::string out;
    for (const char c : text) {
        if (c == '\\') {
            out += "\\e";
        } else if (c == '-') {
            out += "\\-";
        } else {
            out += c;
        }
    }
    if (!out.empty() && (out.front() == '.' || out.front() == '\'')) {
        out.insert(0, "\\&");
    }
    return out;
}

/// A tagged paragraph: the tag in bold, the text under it.
auto item(std::string_view tag, std::string_view text) -> std::string {
    return ".TP\n.B " + roff(tag) + "\n" + roff(text) + "\n";
}

/// One option: its term in bold, its help with its default.
auto option_item(const std::pair<std::string, std::string>& row) -> std::string {
    return item(row.first, row.second);
}

constexpr std::string_view description =
    "keyplace-cli answers the questions an operator asks of a placement: which node owns each key\n"
    "(locate), how a membership change moves keys against the least it must move (diff), how evenly\n"
    "nodes share the hash space and a set of keys (stats), and what a key hashes to (hash). Every\n"
    "strategy of the keyplace library is available under the same options, and each answers as\n"
    "the system it reproduces does (Envoy, libmemcached, Redis Cluster, Cassandra, go-mpchash).\n"
    ".PP\n"
    "The snapshot commands write and read versioned snapshot documents (JSON) that fix a\n"
    "placement, with digests that prove two programs place keys alike; shadow and plan compare two\n"
    "of them. The etcd commands publish snapshots to etcd and follow them as a client does.\n"
    "allocate and the redis commands plan tokens and slots as Cassandra and redis\\-cli do.\n"
    ".PP\n"
    "Keys are read from standard input, one per line: the bytes between newlines, not trimmed; an\n"
    "empty line is the empty key. Output is written only when every input line was valid, so a\n"
    "failed run prints nothing on standard output and one line on standard error. Progress is shown\n"
    "on standard error when it is a terminal and the command runs longer than about a second,\n"
    "with an estimate of the time left where the total is known; \\fB\\-\\-quiet\\fR turns it off.\n"
    ".PP\n"
    "A node list (SPEC) is comma\\-separated \\fIID\\fR[\\fB=\\fIWEIGHT\\fR][\\fB@\\fIREGION\\fR[\\fB/"
    "\\fIZONE\\fR[\\fB/\\fIRACK\\fR]]], or \\fB@\\fIPATH\\fR naming a file of such entries; some strategies\n"
    "read other entries, given under STRATEGIES.\n";

constexpr std::string_view exit_status =
    ".TP\n.B 0\nSuccess.\n"
    ".TP\n.B 1\nBad input data (standard input, a key file, a node file, a snapshot document), a\n"
    "membership the library refuses in a file, a failed write, or too little memory.\n"
    ".TP\n.B 2\nBad arguments: an unknown command or option, a value out of range, an inline SPEC the\n"
    "library refuses, or a command whose optional component this build lacks.\n"
    ".TP\n.B 3\n\\fBetcd status\\fR: two clients report one epoch with different fingerprints.\n";

constexpr std::string_view environment =
    ".TP\n.B KEYPLACE_ETCD_PASSWORD\nThe etcd password of \\fB\\-\\-user\\fR \\fINAME\\fR when neither the "
    "option\nnor \\fB\\-\\-password\\-file\\fR gives one.\n"
    ".TP\n.B TMPDIR\nWhere output past 4 MiB is held until every input line was valid (default /tmp).\n";

constexpr std::string_view files =
    ".TP\n.BI @ PATH\nA node file: one SPEC entry per line; blank lines and lines starting with # are\n"
    "skipped.\n"
    ".TP\n.I snapshot.json\nA snapshot document, as \\fBsnapshot create\\fR and \\fBsnapshot next\\fR write "
    "it:\nthe strategy, its nodes with their states and addresses, overrides, and the digests that\n"
    "\\fBsnapshot verify\\fR checks.\n";

/// (what it does, the command line) pairs: each command line runs as written.
constexpr std::pair<std::string_view, std::string_view> examples[] = {
    {"Which of three caches owns a key, under a consistent-hash ring:",
     "printf 'user:42\\n' | keyplace-cli locate --strategy ring --nodes cache-a,cache-b,cache-c"},
    {"Three copies of each key in distinct zones, the nodes read from a file:",
     "keyplace-cli locate --strategy ring --nodes @nodes.txt --copies 3 --spread zone --keys keys.txt"},
    {"How many keys adding a fourth node moves, against the least it must:",
     "keyplace-cli diff --strategy maglev --nodes-before a,b,c --nodes-after a,b,c,d"},
    {"Each node's share of a million keys:", "keyplace-cli stats --strategy rendezvous --nodes a,b,c --key-count 1000000"},
    {"A snapshot of a cluster, its successor with a joining node, and the ranges that move:",
     "keyplace-cli snapshot create --strategy ring --nodes a,b,c --cluster cache > s1.json\n"
     "keyplace-cli snapshot next s1.json --add d > s2.json\n"
     "keyplace-cli plan s1.json s2.json"},
    {"Publish it to etcd for the clients that follow the cluster:",
     "keyplace-cli etcd publish s2.json --endpoints http://127.0.0.1:2379 --cluster cache"},
};

auto page() -> std::string {
    std::string out =
        ".\\\" Generated by keyplace-cli help --roff from the command table: do not edit.\n"
        ".TH KEYPLACE\\-CLI 1 \"\" \"keyplace\" \"User Commands\"\n"
        ".SH NAME\n"
        "keyplace\\-cli \\- which node owns a key: locate keys, measure balance and movement, manage "
        "placement snapshots\n"
        ".SH SYNOPSIS\n"
        ".B keyplace\\-cli\n.I COMMAND\n.RI [ OPTIONS ]\n.br\n"
        ".B keyplace\\-cli\n.I COMMAND\n.B \\-\\-help\n.br\n"
        ".B keyplace\\-cli \\-\\-version\n"
        ".SH DESCRIPTION\n";
    out += description;
    out += ".SH COMMANDS\n";
    for_each_entry(commands{}, [&]<class C>(std::type_identity<C>) {
        const std::string synopsis = command_synopsis<C>();
        out += ".TP\n.B " + roff(synopsis.substr(synopsis.find(' ') + 1)) + "\n" + roff(C::help) + ".\n";
        out += ".RS\n";
        for (const auto& row : option_rows(C::options())) {
            out += option_item(row);
        }
        out += ".RE\n";
    });
    out += ".SH STRATEGIES\n"
           "Each strategy takes the options listed with it (\\fBlocate\\fR also those that shape its copies).\n";
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        out += item(E::name, std::string(E::help) + ".");
        std::vector<std::pair<std::string, std::string>> rows;
        if constexpr (requires { E::spec_help; }) {
            rows.emplace_back("SPEC", std::string(E::spec_help));
        }
        for_each_option<E>(strategy_use::locate, [&](const auto& o) { rows.emplace_back(term(o.spec), o.describe()); });
        if (!rows.empty()) {
            out += ".RS\n";
            for (const auto& row : rows) {
                out += option_item(row);
            }
            out += ".RE\n";
        }
    });
    out += ".SH HASH FUNCTIONS\n";
    for_each_entry(hash_functions{}, [&]<class H>(std::type_identity<H>) { out += item(H::name, H::help); });
    out += ".SH EXIT STATUS\n";
    out += exit_status;
    out += ".SH ENVIRONMENT\n";
    out += environment;
    out += ".SH FILES\n";
    out += files;
    out += ".SH EXAMPLES\n";
    for (const auto& [what, line] : examples) {
        out += roff(what) + "\n.PP\n.RS\n.nf\n";
        std::size_t start = 0;
        while (start <= line.size()) {
            const auto end = std::min(line.find('\n', start), line.size());
            out += roff(line.substr(start, end - start)) + "\n";
            start = end + 1;
        }
        out += ".fi\n.RE\n.PP\n";
    }
    out += ".SH SEE ALSO\n"
           "doc/cli.md (the manual, with worked sessions) and doc/rollout.md (changing a fleet's\n"
           "placement, step by step) in the keyplace sources.\n";
    return out;
}

// ---- bash completion ----------------------------------------------------------------------------

/// Words joined by spaces.
auto words(const std::vector<std::string>& w) -> std::string {
    std::string out;
    for (const auto& s : w) {
        out += (out.empty() ? "" : " ") + s;
    }
    return out;
}

/// The option names a command takes, with --help, and which of them take a file.
struct command_words {
    std::vector<std::string> options;
    std::vector<std::string> file_options;
    std::vector<std::string> valued;
    bool positional_files = false;
};

template <class C>
auto words_of() -> command_words {
    command_words w;
    std::set<std::string> seen;
    const auto add = [&](const option_spec& s) {
        const std::string name = "--" + std::string(s.name);
        if (!seen.insert(name).second) {
            return;
        }
        w.options.push_back(name);
        if (!s.value.empty()) {
            w.valued.push_back(name);
            if (s.value.find("FILE") != std::string_view::npos || s.value == "SPEC") {
                w.file_options.push_back(name);  // a SPEC may be @PATH
            }
        }
    };
    for_each_in(C::options(), [&](const auto& o) { add(o.spec); });
    if (C::strategy_options != strategy_use::none) {
        for (const auto& s : all_strategy_options(C::strategy_options)) {
            add(s);
        }
    }
    w.options.emplace_back("--help");
    if constexpr (requires { C::positionals; }) {
        w.positional_files = true;
    }
    return w;
}

/// The values an option's name takes wherever it is a choice.
auto value_words() -> std::map<std::string, std::set<std::string>> {
    std::map<std::string, std::set<std::string>> out;
    for (const auto n : entry_names(strategies{})) {
        out["--strategy"].emplace(n);
    }
    for (const auto n : entry_names(hash_functions{})) {
        out["--function"].emplace(n);
    }
    for (const auto level : {keyplace::failure_domain::node, keyplace::failure_domain::rack,
                             keyplace::failure_domain::zone, keyplace::failure_domain::region}) {
        out["--spread"].emplace(keyplace::to_string(level));
    }
    for (const auto rule : {keyplace::shortfall::fail, keyplace::shortfall::relax}) {
        out["--on-shortfall"].emplace(keyplace::to_string(rule));
    }
    for_each_entry(strategies{}, [&]<class E>(std::type_identity<E>) {
        for_each_option<E>(strategy_use::locate, [&](const auto& o) {
            if constexpr (std::is_same_v<std::remove_cvref_t<decltype(o)>, param_option>) {
                if (o.param->kind == keyplace::param_kind::name) {
                    for (const auto n : o.param->names) {
                        out["--" + std::string(o.spec.name)].emplace(n);
                    }
                }
            }
        });
    });
    return out;
}

auto completion() -> std::string {
    std::vector<std::string> firsts;
    std::map<std::string, std::vector<std::string>> subcommands;
    std::string cases;
    for_each_entry(commands{}, [&]<class C>(std::type_identity<C>) {
        const std::string name(C::name);
        const auto space = name.find(' ');
        const std::string first = name.substr(0, space);
        if (std::find(firsts.begin(), firsts.end(), first) == firsts.end()) {
            firsts.push_back(first);
        }
        if (space != std::string::npos) {
            subcommands[first].push_back(name.substr(space + 1));
        }
        const auto w = words_of<C>();
        cases += "        '" + name + "')\n            options='" + words(w.options) + "'\n";
        cases += "            valued='" + words(w.valued) + "'\n";
        cases += "            files='" + words(w.file_options) + "'\n";
        cases += std::string("            positional=") + (w.positional_files ? "1" : "0") + " ;;\n";
    });
    firsts.emplace_back("help");
    std::string family_cases;
    for (const auto& [first, subs] : subcommands) {
        family_cases += "            " + first + ") COMPREPLY=($(compgen -W '" + words(subs) + "' -- \"$cur\")) ;;\n";
    }
    std::string value_cases;
    for (const auto& [option, values] : value_words()) {
        value_cases += "        " + option + ") COMPREPLY=($(compgen -W '" +
                       words(std::vector<std::string>(values.begin(), values.end())) + "' -- \"$cur\")); return ;;\n";
    }
    std::string families;
    for (const auto& [first, subs] : subcommands) {
        families += (families.empty() ? "" : "|") + first;
    }
    return "# bash completion for keyplace-cli. Generated by keyplace-cli help --bash-completion from the\n"
           "# command table: do not edit.\n"
           "_keyplace_cli() {\n"
           "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
           "    local command=${COMP_WORDS[1]} first=2\n"
           "    COMPREPLY=()\n"
           "    if ((COMP_CWORD == 1)); then\n"
           "        COMPREPLY=($(compgen -W '" + words(firsts) + " --help --version' -- \"$cur\"))\n"
           "        return\n"
           "    fi\n"
           "    case $command in\n"
           "    " + families + ")\n"
           "        if ((COMP_CWORD == 2)); then\n"
           "            case $command in\n" + family_cases +
           "            esac\n"
           "            return\n"
           "        fi\n"
           "        command=\"$command ${COMP_WORDS[2]}\"\n"
           "        first=3 ;;\n"
           "    help)\n"
           "        COMPREPLY=($(compgen -W '" + words(firsts) + "' -- \"$cur\"))\n"
           "        return ;;\n"
           "    esac\n"
           "    local options='' valued='' files='' positional=0\n"
           "    case $command in\n" + cases +
           "        *) return ;;\n"
           "    esac\n"
           "    if ((COMP_CWORD > first)) && [[ \" $valued \" == *\" $prev \"* ]]; then\n"
           "        case $prev in\n" + value_cases +
           "        esac\n"
           "        if [[ \" $files \" == *\" $prev \"* ]]; then\n"
           "            COMPREPLY=($(compgen -f -- \"${cur#@}\"))\n"
           "            [[ $cur == @* ]] && COMPREPLY=(\"${COMPREPLY[@]/#/@}\")\n"
           "        fi\n"
           "        return\n"
           "    fi\n"
           "    if [[ $cur == -* ]] || ((positional == 0)); then\n"
           "        COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
           "    else\n"
           "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
           "    fi\n"
           "}\n"
           "complete -o filenames -F _keyplace_cli keyplace-cli\n";
}

}  // namespace manual

auto man_page() -> std::string {
    return manual::page();
}

auto bash_completion() -> std::string {
    return manual::completion();
}

}  // namespace keyplace_cli
