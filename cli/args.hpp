// keyplace-cli arguments: exit statuses and failures, "--name value" parsing, and typed
// options whose values are checked in one place, each kind with one message form.
#ifndef KEYPLACE_CLI_ARGS_HPP_INCLUDED
#define KEYPLACE_CLI_ARGS_HPP_INCLUDED

#include <keyplace/detail/utf8.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace keyplace_cli {

/// Exit statuses: 0 success, 1 bad input data (stdin, files, a membership the library refuses
/// in a node file) or a failed write or allocation, 2 bad arguments (options, inline SPECs and
/// a membership the library refuses in them).
inline constexpr int exit_ok = 0;
inline constexpr int exit_bad_input = 1;
inline constexpr int exit_usage = 2;

/// A failure with the exit status it maps to and one line for stderr, and what to print on
/// stdout before it (empty for every failure but a report that ends in a verdict: etcd status).
struct cli_error : std::runtime_error {
    int status;
    std::string output;
    cli_error(int s, const std::string& what, std::string out = {})
        : std::runtime_error(what), status(s), output(std::move(out)) {}
};

/// The OS's reason for the last failed call ("Is a directory"), from errno.
inline auto os_error() -> std::string {
    return errno != 0 ? std::generic_category().message(errno) : "read error";
}

[[noreturn]] inline void usage_error(const std::string& what) {
    throw cli_error(exit_usage, what);
}
[[noreturn]] inline void input_error(const std::string& what) {
    throw cli_error(exit_bad_input, what);
}

using keyplace::detail::utf8_sequence;

/// The most bytes of one user-supplied value a message repeats.
inline constexpr std::size_t quote_limit = 64;

/// A user-supplied string for a message: in single quotes; control bytes, DEL, quotes,
/// backslashes and bytes that are not UTF-8 as \xNN, so a message stays one line of text
/// whatever the input; past quote_limit bytes cut, with "..." and the value's length.
inline auto quote(std::string_view s) -> std::string {
    constexpr char hex[] = "0123456789abcdef";
    std::string out = "'";
    std::size_t i = 0;
    while (i < s.size() && i < quote_limit) {
        const auto u = static_cast<unsigned char>(s[i]);
        const auto n = utf8_sequence(s, i);
        if (n > 1) {
            if (i + n > quote_limit) {
                break;  // not half a character
            }
            out += s.substr(i, n);
            i += n;
        } else if (n == 0 || u < 0x20 || u == 0x7f || u == '\'' || u == '\\') {
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 0xf];
            ++i;
        } else {
            out += s[i++];
        }
    }
    out += "'";
    if (i < s.size()) {
        out += "... (" + std::to_string(s.size()) + " bytes)";
    }
    return out;
}

/// A whole-string unsigned decimal, or nothing (no sign, no spaces, no overflow).
template <class U>
auto parse_unsigned(std::string_view s) -> std::optional<U> {
    if (s.empty() || s.front() < '0' || s.front() > '9') {
        return std::nullopt;
    }
    U v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

/// A whole-string decimal number ("0.5", "1e3", "-2"), or nothing: no leading space or '+', no
/// hexadecimal, nothing after it.
inline auto parse_decimal(std::string_view s) -> std::optional<double> {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

/// The index of the first item equal to an earlier one, or nothing.
template <class T>
auto first_repeat(std::span<const T> items) -> std::optional<std::size_t> {
    for (std::size_t i = 1; i < items.size(); ++i) {
        if (std::find(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(i), items[i]) !=
            items.begin() + static_cast<std::ptrdiff_t>(i)) {
            return i;
        }
    }
    return std::nullopt;
}

/// A whole-string signed decimal 64-bit integer, or nothing.
inline auto parse_signed(std::string_view s) -> std::optional<std::int64_t> {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) {
        return std::nullopt;
    }
    return v;
}

/// Splits s at sep (an empty s gives one empty part).
inline auto split(std::string_view s, char sep) -> std::vector<std::string_view> {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const auto at = s.find(sep, start);
        parts.push_back(s.substr(start, at - start));
        if (at == std::string_view::npos) {
            return parts;
        }
        start = at + 1;
    }
}

/// The edit distance between a and b (optimal string alignment: an insertion, a deletion, a
/// substitution or a swap of two adjacent bytes counts one).
inline auto edit_distance(std::string_view a, std::string_view b) -> std::size_t {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) {
        d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j) {
        d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

/// The name a mistyped one most likely meant: the closest of names, if it is at most a quarter
/// of the given name's length away (at least one edit); the first of equals.
inline auto closest_name(std::string_view given, std::span<const std::string_view> names)
    -> std::optional<std::string_view> {
    const std::size_t limit = std::max<std::size_t>(1, given.size() / 4);
    std::optional<std::string_view> best;
    std::size_t best_distance = limit + 1;
    for (const auto n : names) {
        const auto d = edit_distance(given, n);
        if (d < best_distance && n != given) {
            best = n;
            best_distance = d;
        }
    }
    return best;
}

/// " (did you mean 'X'?)" for the closest of names (each with prefix), or "".
inline auto did_you_mean(std::string_view given, std::span<const std::string_view> names,
                         std::string_view prefix = "") -> std::string {
    const auto best = closest_name(given, names);
    return best ? " (did you mean " + quote(std::string(prefix) + std::string(*best)) + "?)" : "";
}

/// How an option is spelled and described: its name without "--", its value's placeholder in
/// usage (empty: a flag, which takes no value), one line of help, and whether it must be given.
struct option_spec {
    std::string_view name;
    std::string_view value;
    std::string_view help;
    bool required = false;
};

/// An option's old spelling, which still works until deprecated_until with one line on stderr,
/// and its name now. One name per concept across the commands: --copies (how many copies),
/// --snapshot FILE (one snapshot document), --before/--after FILE (two of them),
/// --nodes-before/--nodes-after SPEC (two node lists).
struct deprecated_spelling {
    std::string_view old_name;
    std::string_view new_name;
};
inline constexpr deprecated_spelling deprecated_spellings[] = {
    {"replicas", "copies"},   {"replication", "copies"},  {"file", "snapshot"},
    {"before", "nodes-before"}, {"after", "nodes-after"},
};
/// The release that drops the old spellings.
inline constexpr std::string_view deprecated_until = "0.3.0";

/// args with each old spelling of an option replaced by its name now, where the command takes
/// the new name and not the old one (plan's --before is a file, diff's is now --nodes-before).
/// storage holds rewritten arguments; notes receives one line per replacement.
inline auto respell(std::span<const std::string_view> args, std::span<const option_spec> known,
                    std::vector<std::string>& storage, std::vector<std::string>& notes)
    -> std::vector<std::string_view> {
    const auto knows = [&](std::string_view name) {
        return std::any_of(known.begin(), known.end(), [&](const option_spec& k) { return k.name == name; });
    };
    std::vector<std::string_view> out;
    storage.reserve(storage.size() + args.size());  // views into storage stay valid
    for (const auto arg : args) {
        std::string_view name;
        if (arg.substr(0, 2) == "--") {
            name = arg.substr(2);
            name = name.substr(0, name.find('='));
        }
        const deprecated_spelling* hit = nullptr;
        for (const auto& d : deprecated_spellings) {
            hit = !name.empty() && d.old_name == name && !knows(d.old_name) && knows(d.new_name) ? &d : hit;
        }
        if (hit == nullptr) {
            out.push_back(arg);
            continue;
        }
        storage.push_back("--" + std::string(hit->new_name) + std::string(arg.substr(2 + name.size())));
        out.emplace_back(storage.back());
        notes.push_back("--" + std::string(hit->old_name) + " is deprecated and will be removed in " +
                        std::string(deprecated_until) + "; use --" + std::string(hit->new_name));
    }
    return out;
}

/// The options of one command line: "--name value", "--name=value" or "--flag", each at most
/// once, every name one of the known specs (several specs may share a name).
class parsed_args {
public:
    /// Throws usage errors naming the argument. "--help" (or "-h") ends parsing: help() is then
    /// true and the rest is not looked at.
    parsed_args(std::span<const std::string_view> args, std::span<const option_spec> known) {
        for (std::size_t i = 0; i < args.size(); ++i) {
            const std::string_view a = args[i];
            if (a == "--help" || a == "-h") {
                help_ = true;
                return;
            }
            if (a.substr(0, 2) != "--") {
                usage_error("unexpected argument " + quote(a));
            }
            std::string name(a.substr(2));
            std::optional<std::string> value;
            if (const auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name.resize(eq);
            }
            const option_spec* spec = nullptr;
            for (const auto& k : known) {
                spec = k.name == name ? &k : spec;
            }
            if (spec == nullptr) {
                std::vector<std::string_view> names;
                for (const auto& k : known) {
                    names.push_back(k.name);
                }
                usage_error("unknown option " + quote("--" + name) + did_you_mean(name, names, "--"));
            }
            if (find(name) != nullptr) {
                usage_error("option --" + name + " given twice");
            }
            const bool valued = !spec->value.empty();
            if (valued && !value) {
                if (i + 1 == args.size()) {
                    usage_error("option --" + name + " needs a value");
                }
                value = std::string(args[++i]);
            } else if (!valued && value) {
                usage_error("option --" + name + " takes no value");
            }
            given_.emplace_back(std::move(name), value.value_or(""));
        }
    }

    [[nodiscard]] auto help() const noexcept -> bool { return help_; }
    [[nodiscard]] auto has(const option_spec& spec) const -> bool { return find(spec.name) != nullptr; }
    /// The value given for spec, or nothing; a usage error if spec is required and absent.
    [[nodiscard]] auto get(const option_spec& spec) const -> std::optional<std::string> {
        if (const auto* v = find(spec.name)) {
            return *v;
        }
        if (spec.required) {
            usage_error("missing required option --" + std::string(spec.name));
        }
        return std::nullopt;
    }
    /// The value of a required option.
    [[nodiscard]] auto value(const option_spec& spec) const -> std::string {
        auto v = get(spec);
        if (!v) {
            usage_error("missing required option --" + std::string(spec.name));
        }
        return *v;
    }
    /// The names given, in command-line order.
    [[nodiscard]] auto names() const -> std::vector<std::string_view> {
        std::vector<std::string_view> out;
        for (const auto& g : given_) {
            out.push_back(g.first);
        }
        return out;
    }

private:
    [[nodiscard]] auto find(std::string_view name) const -> const std::string* {
        for (const auto& g : given_) {
            if (g.first == name) {
                return &g.second;
            }
        }
        return nullptr;
    }

    std::vector<std::pair<std::string, std::string>> given_;
    bool help_ = false;
};

/// An option's help line: its help, then its default if it has one.
inline auto with_default(std::string_view help, const std::string& fallback) -> std::string {
    return std::string(help) + (fallback.empty() ? "" : " (default " + fallback + ")");
}

/// --NAME N: a whole number from min to max; fallback when absent, if it has one.
template <class T>
struct number_option {
    option_spec spec;
    std::optional<T> fallback{};
    T min = 0;
    T max = std::numeric_limits<T>::max();

    [[nodiscard]] auto parse(std::string_view v) const -> T {
        const auto n = parse_unsigned<T>(v);
        if (!n || *n < min || *n > max) {
            const bool open = std::uint64_t{max} == std::numeric_limits<std::uint64_t>::max();
            usage_error("--" + std::string(spec.name) + " " + quote(v) + " is not " +
                        (open && min == 0   ? "an unsigned integer"
                         : open && min == 1 ? "a positive integer"
                                            : "an integer from " + std::to_string(min) + " to " + std::to_string(max)));
        }
        return *n;
    }
    /// The value given, or nothing.
    [[nodiscard]] auto find(const parsed_args& a) const -> std::optional<T> {
        const auto v = a.get(spec);
        return v ? std::optional<T>(parse(*v)) : std::nullopt;
    }
    /// The value given, else the fallback (which the option must have).
    [[nodiscard]] auto get(const parsed_args& a) const -> T {
        const auto v = find(a);
        return v ? *v : fallback.value();
    }
    /// The default as it would be given, or "" without one.
    [[nodiscard]] auto default_text() const -> std::string { return fallback ? std::to_string(*fallback) : ""; }
    /// The help line: the help and the default.
    [[nodiscard]] auto describe() const -> std::string { return with_default(spec.help, default_text()); }
};

/// A flag, or an option whose value its command interprets (--nodes SPEC, --keys FILE).
struct plain_option {
    option_spec spec;
    std::string_view fallback{};  ///< the default, for help only

    [[nodiscard]] auto default_text() const -> std::string { return std::string(fallback); }
    [[nodiscard]] auto describe() const -> std::string { return with_default(spec.help, default_text()); }
};

}  // namespace keyplace_cli

#endif
