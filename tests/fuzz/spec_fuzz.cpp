// Fuzz target: keyplace-cli's input parsers (cli/spec.hpp) — node SPECs inline and as
// @FILE, in each strategy family's entry syntax (ID[=WEIGHT][@LOCATION], ketama servers,
// Cassandra ID=TOKEN;...@DC/RACK, chosen tokens, Redis slot ranges) — and key lines.
//
// Input: one byte choosing the parser, one flag byte, then the SPEC (or the key bytes).
// Invariants:
//  - a parser returns or throws cli_error with exit status 2 (inline) or 1 (a node file) and a message without control
//    bytes (user text goes through quote()); nothing else escapes;
//  - what a parser accepts, written back in its canonical form, parses to the same values;
//  - the inline SPEC and the same entries in a node file (one a line) agree: both fail or both
//    give the same values;
//  - a token entry's member is what parse_node reads from the entry without its tokens;
//  - the key reader splits exactly, across blocks: the keys joined by '\n' (plus a final '\n' if the input had one)
//    are the input.
#include "fuzz_support.hpp"

#include "spec.hpp"
#include "stream.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

using keyplace_fuzz::input;
namespace cli = keyplace_cli;

auto same_weight(double a, double b) -> bool { return a == b || (std::isnan(a) && std::isnan(b)); }

auto same_node(const keyplace::node& a, const keyplace::node& b) -> bool {
    return a.id == b.id && same_weight(a.weight, b.weight) && a.where == b.where;
}

auto same(const std::vector<keyplace::node>& a, const std::vector<keyplace::node>& b) -> bool {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same_node(a[i], b[i])) {
            return false;
        }
    }
    return true;
}

auto same(const std::vector<keyplace::compat::ketama_server>& a, const std::vector<keyplace::compat::ketama_server>& b)
    -> bool {
    return a == b;
}

auto same(const std::vector<keyplace::compat::cassandra_endpoint>& a,
          const std::vector<keyplace::compat::cassandra_endpoint>& b) -> bool {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].id != b[i].id || a[i].tokens != b[i].tokens || a[i].dc != b[i].dc || a[i].rack != b[i].rack) {
            return false;
        }
    }
    return true;
}

auto same(const std::vector<keyplace::token_holder>& a, const std::vector<keyplace::token_holder>& b) -> bool {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same_node(a[i].member, b[i].member) || a[i].tokens != b[i].tokens) {
            return false;
        }
    }
    return true;
}

auto same(const cli::redis_spec& a, const cli::redis_spec& b) -> bool {
    if (!same(a.nodes, b.nodes) || a.explicit_ranges != b.explicit_ranges || a.ranges.size() != b.ranges.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.ranges.size(); ++i) {
        if (a.ranges[i].first != b.ranges[i].first || a.ranges[i].last != b.ranges[i].last ||
            a.ranges[i].node_id != b.ranges[i].node_id) {
            return false;
        }
    }
    return true;
}

// ---- canonical forms: what a parser accepted, written as an entry it reads back -------------

auto location_text(const keyplace::location& w) -> std::string {
    if (w.region.empty() && w.zone.empty() && w.rack.empty()) {
        return "";
    }
    std::string out = "@" + w.region;
    if (!w.zone.empty() || !w.rack.empty()) {
        out += "/" + w.zone;
    }
    if (!w.rack.empty()) {
        out += "/" + w.rack;
    }
    return out;
}

auto node_text(const keyplace::node& n) -> std::string {
    return n.id + (n.weight == 1.0 ? "" : "=" + cli::shortest(n.weight)) + location_text(n.where);
}

template <class T>
auto joined(const std::vector<T>& items, char sep) -> std::string {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += (i == 0 ? "" : std::string(1, sep)) + std::to_string(items[i]);
    }
    return out;
}

auto canonical(const std::vector<keyplace::node>& nodes) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto& n : nodes) {
        out.push_back(node_text(n));
    }
    return out;
}

auto canonical(const std::vector<keyplace::compat::ketama_server>& servers) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto& s : servers) {
        out.push_back(s.address + (s.weight == 1 ? "" : "=" + std::to_string(s.weight)));
    }
    return out;
}

auto canonical(const std::vector<keyplace::compat::cassandra_endpoint>& endpoints) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto& e : endpoints) {
        out.push_back(e.id + "=" + joined(e.tokens, ';') + "@" + e.dc + "/" + e.rack);
    }
    return out;
}

auto canonical(const std::vector<keyplace::token_holder>& holders) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto& h : holders) {
        const auto& n = h.member;
        out.push_back(n.id + "=" + joined(h.tokens, ';') + location_text(n.where));
    }
    return out;
}

auto canonical(const cli::redis_spec& r) -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const auto& n : r.nodes) {
        std::string e = n.id;
        if (r.explicit_ranges) {
            e += "=";
            bool first = true;
            for (const auto& range : r.ranges) {
                if (range.node_id == n.id) {
                    e += (first ? "" : ";") + std::to_string(range.first) + "-" + std::to_string(range.last);
                    first = false;
                }
            }
        }
        out.push_back(e);
    }
    return out;
}

auto comma_joined(const std::vector<std::string>& entries) -> std::string {
    std::string out;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        out += (i == 0 ? "" : ",") + entries[i];
    }
    return out;
}

// ---- running a parser ---------------------------------------------------------------------------

/// The parser's value, or nothing when it refused the SPEC (checking how it refused).
template <class Parse>
auto attempt(Parse&& parse, const std::string& spec) -> std::optional<decltype(parse(spec))> {
    try {
        return parse(spec);
    } catch (const cli::cli_error& e) {
        const std::string what = e.what();
        // 2 for an inline SPEC (the command line), 1 for a node file's lines.
        KEYPLACE_FUZZ_CHECK(e.status == cli::exit_bad_input || e.status == cli::exit_usage);
        KEYPLACE_FUZZ_CHECK(e.output.empty());
        KEYPLACE_FUZZ_CHECK(!what.empty());
        KEYPLACE_FUZZ_CHECK_MSG(!keyplace_fuzz::has_control(what), cli::quote(what));
        return std::nullopt;
    }
}

/// Writes lines to this process's node file and returns its SPEC, "@path".
auto node_file(const std::string& content) -> std::string {
    const std::string path = keyplace_fuzz::scratch_path("nodes.txt");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    return "@" + path;
}

/// Whether the entries of an inline SPEC read the same from a node file, one a line: none is
/// empty, holds a newline, or begins with what the file reader skips or trims.
auto file_equivalent(std::string_view spec) -> bool {
    for (const auto entry : cli::split(spec, ',')) {
        if (entry.empty() || entry.find('\n') != std::string_view::npos) {
            return false;
        }
        const char first = entry.front();
        const char last = entry.back();
        if (first == ' ' || first == '\t' || first == '\r' || first == '#' || last == ' ' || last == '\t' ||
            last == '\r') {
            return false;
        }
    }
    return true;
}

/// Whether a value holds two entries with one id (the library refuses those; the canonical
/// Redis form cannot tell their ranges apart).
template <class T>
auto repeats_an_id(const T&) -> bool {
    return false;
}
auto repeats_an_id(const cli::redis_spec& r) -> bool {
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (r.nodes[i].id == r.nodes[j].id) {
                return true;
            }
        }
    }
    return false;
}

/// The canonical form of what a parser accepted reads back as the same value. Values only a node
/// file can spell (a ',' or a newline in a field, an empty Redis id, a first entry that reads as
/// @PATH) have no inline form and are skipped.
template <class Parse, class Value>
void check_round_trip(Parse&& parse, const Value& value) {
    const auto entries = canonical(value);
    for (const auto& e : entries) {
        if (e.empty() || e.find(',') != std::string::npos || e.find('\n') != std::string::npos) {
            return;
        }
    }
    const std::string spec = comma_joined(entries);
    if (spec.empty() || spec.front() == '@' || repeats_an_id(value)) {
        return;
    }
    const auto again = attempt(parse, spec);
    KEYPLACE_FUZZ_CHECK_MSG(again && same(*again, value), cli::quote(spec));
}

template <class Parse>
void check_parser(Parse&& parse, std::string_view text, bool as_file) {
    if (as_file) {
        // The text is a node file as a user writes it: comments, blank lines, spaces.
        const auto from_file = attempt(parse, node_file(std::string(text)));
        if (from_file) {
            check_round_trip(parse, *from_file);
        }
        return;
    }
    if (!text.empty() && text.front() == '@') {
        return;  // a path: the file form above reads only the scratch file
    }
    const std::string spec(text);
    const auto inline_value = attempt(parse, spec);
    if (file_equivalent(spec)) {
        std::string lines;
        for (const auto entry : cli::split(spec, ',')) {
            lines += std::string(entry) + "\n";
        }
        const auto from_file = attempt(parse, node_file(lines));
        KEYPLACE_FUZZ_CHECK(inline_value.has_value() == from_file.has_value());
        KEYPLACE_FUZZ_CHECK(!inline_value || same(*inline_value, *from_file));
    }
    if (inline_value) {
        check_round_trip(parse, *inline_value);
    }
}

void check_token_members(const std::string& spec) {
    if (spec.empty() || spec.front() == '@') {
        return;
    }
    const auto holders = attempt([](const std::string& s) { return cli::parse_entries(s, cli::parse_token_node); }, spec);
    if (!holders) {
        return;
    }
    std::vector<keyplace::node> members;
    for (const auto& h : *holders) {
        members.push_back(h.member);
    }
    // The same entries without "=TOKENS": the members as parse_node reads them.
    std::vector<std::string> plain;
    for (const auto entry : cli::split(spec, ',')) {
        const auto at = entry.find('@');
        const auto head = entry.substr(0, at);
        plain.push_back(std::string(head.substr(0, head.find('='))) +
                        (at == std::string_view::npos ? "" : std::string(entry.substr(at))));
    }
    const auto nodes = attempt(cli::parse_spec, comma_joined(plain));
    KEYPLACE_FUZZ_CHECK(nodes && same(*nodes, members));
}

/// The CLI's key reader, with blocks of 1 to 4 lines so the fuzzer crosses block and buffer
/// edges: keys joined by '\n' (plus a final '\n' if the input had one) are the input.
void check_read_keys(std::string_view data, std::size_t block_lines) {
    std::istringstream in{std::string(data)};
    cli::key_reader reader(in, block_lines);
    std::string joined_keys;
    std::size_t count = 0;
    while (reader.next()) {
        KEYPLACE_FUZZ_CHECK(reader.first_line() == count + 1);
        KEYPLACE_FUZZ_CHECK(!reader.keys().empty() && reader.keys().size() <= block_lines);
        for (const auto key : reader.keys()) {
            joined_keys += (count++ == 0 ? "" : "\n");
            joined_keys += key;
        }
    }
    if (!data.empty() && data.back() == '\n') {
        joined_keys += '\n';
    }
    KEYPLACE_FUZZ_CHECK(joined_keys == data);
    KEYPLACE_FUZZ_CHECK(data.empty() == (count == 0));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    const std::uint8_t mode = in.byte();
    const bool as_file = in.flag();
    const std::string text(in.rest());
    switch (mode % 7) {
        case 0:
            check_parser(cli::parse_spec, text, as_file);
            break;
        case 1:
            check_parser(cli::ketama_servers, text, as_file);
            break;
        case 2:
            check_parser([](const std::string& s) { return cli::parse_entries(s, cli::parse_cassandra_node); }, text,
                         as_file);
            break;
        case 3:
            check_parser([](const std::string& s) { return cli::parse_entries(s, cli::parse_token_node); }, text,
                         as_file);
            if (!as_file) {
                check_token_members(text);
            }
            break;
        case 4:
            check_parser(cli::parse_redis_spec, text, as_file);
            break;
        case 5:
            // An entry alone, as --add gives it.
            (void)attempt([](const std::string& s) { return cli::parse_node(s, "--add"); }, text);
            break;
        default:
            check_read_keys(text, 1 + (mode / 7) % 4);
            break;
    }
    return 0;
}
