// keyplace — which node owns a key. Snapshot documents as JSON (doc/snapshots.md, "JSON"): the writer,
// the strict reader and the loader that builds the snapshot and checks its stated digests.
//
// Optional component: the only keyplace header that needs nlohmann/json (3.x). Nothing else in
// keyplace includes it; a program that includes it links nlohmann_json::nlohmann_json itself,
// or links keyplace::compiled (config.hpp, KEYPLACE_COMPILED), where this header declares the
// functions below and includes no nlohmann header.
#ifndef KEYPLACE_FLEET_JSON_HPP_INCLUDED
#define KEYPLACE_FLEET_JSON_HPP_INCLUDED

#include <keyplace/config.hpp>
#include <keyplace/error.hpp>
#include <keyplace/node.hpp>
#include <keyplace/failure_domain.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/version.hpp>

#if KEYPLACE_DETAIL_DEFINE
#include <nlohmann/json.hpp>
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The largest snapshot document the reader accepts, in bytes (64 MiB).
inline constexpr std::size_t max_document_size = std::size_t{64} << 20;

/// The document of a description (doc/snapshots.md, "JSON"): pretty, 2-space indent, a trailing newline;
/// fields in the documented order; every parameter the description lists; the digests it
/// states; tokens, slots and location parts only when not empty. Weights are the shortest
/// decimal that reads back as the same double (2.0 stays 2.0). Strings are UTF-8: a byte that
/// is not valid UTF-8 is written as U+FFFD (the document then states another id, which its
/// fingerprint refuses on load). A NaN or infinite weight is written as null, which no reader
/// accepts: write only what validates (a snapshot's describe()).
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto write_description_json(const snapshot_description& d) -> std::string;
/// The document of a snapshot: its describe(), with every parameter and both digests.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto write_snapshot_json(const snapshot& s) -> std::string;
/// Reads a snapshot document, strictly (doc/snapshots.md, "JSON"): every error's message starts with the
/// JSON path of the offending value ("nodes[3].weight: -1 is not > 0"). Fails on: invalid
/// JSON, a key repeated in an object, a format of another major, a missing or mistyped field,
/// an unknown field in a keyplace.snapshot/1 document, an integer outside its range, a cluster,
/// epoch or parent_epoch the build would refuse (invalid_document); an unknown strategy,
/// contract or parameter (unknown_strategy); a weight not > 0 or not finite (invalid_weight);
/// an unknown state (invalid_state); an empty, over-long or repeated id (empty_id, id_too_long,
/// duplicate_id); an id, location part or override's node outside the name grammar
/// (invalid_name; check_name), a cluster outside it (invalid_document); a text longer than
/// max_document_size or holding a NUL byte (invalid_document); an unknown spread
/// (invalid_argument); a reversed slot range (invalid_slot_range). Never throws.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto read_description_json(std::string_view text, error_info& err)
    -> std::optional<snapshot_description>;
/// read_description_json, then snapshot::try_build, which checks the stated fingerprint and
/// probe digest (fingerprint_mismatch). A build error keeps its code and where(), its message
/// prefixed by that path ("nodes: no node owns keys now ...", "nodes[2]: node 'c': ...").
/// Never throws.
[[nodiscard]] KEYPLACE_DETAIL_INLINE auto try_load_snapshot_json(std::string_view text, error_info& err)
    -> std::optional<snapshot>;

/// try_load_snapshot_json, reporting through detail::raise (a keyplace::error, or KEYPLACE_ON_ERROR).
[[nodiscard]] inline auto load_snapshot_json(std::string_view text) -> snapshot {
    error_info err;
    auto s = try_load_snapshot_json(text, err);
    if (!s) {
        detail::raise(err);
    }
    return std::move(*s);
}

// The definitions: here in a header-only build; in keyplace::compiled's source where
// KEYPLACE_COMPILED is defined (config.hpp).
#if KEYPLACE_DETAIL_DEFINE

namespace detail::jsonio {

// ---- The parsed document: a plain tree, built by a SAX handler over nlohmann's parser.
//
// nlohmann's own DOM keeps the last of two equal keys and turns a number too large for 64 bits
// into a double without its text, so the reader builds its own tree: every object keeps its keys
// in document order (a repeated key is an error, found while parsing), and a number that is not
// an integer keeps its token, which error messages show as it was written.

struct member;

struct value {
    enum class kind : std::uint8_t { null, boolean, negative, whole, fraction, string, array, object };
    kind type = kind::null;
    bool flag = false;          // boolean
    std::int64_t negative = 0;  // an integer below 0
    std::uint64_t whole = 0;    // an integer from 0 to 2^64-1
    double fraction = 0;        // any other number: its value...
    std::string text{};         // ...and its token; a string's bytes
    // No default member initializers: member is incomplete here, and clang would instantiate
    // std::vector<member>'s destructor for one.
    std::vector<value> items;
    std::vector<member> members;
};

struct member {
    std::string key;
    value item;
};

/// Containers nest at most this deep (a snapshot document needs 4): deeper input is refused
/// while parsing, so nothing recurses on hostile depth.
inline constexpr std::size_t max_depth = 64;

inline auto shown_path(std::string path) -> std::string { return path.empty() ? std::string("$") : path; }

/// A number's token as an error message shows it: at most 64 bytes.
inline auto shown_token(std::string_view token) -> std::string {
    return token.size() > 64 ? std::string(token.substr(0, 64)) + "..." : std::string(token);
}

/// Builds the tree. Refuses, besides nlohmann's syntax errors: a key repeated in one object
/// (nlohmann would keep the last one silently), nesting deeper than max_depth, and numbers
/// beyond double's range (nlohmann's out_of_range 406). Every error names the path being read.
class tree_builder {
public:
    using binary_t = nlohmann::json::binary_t;

    value root{};
    failure problem{};  // why parsing stopped

    auto null() -> bool { return put(value{}); }
    auto boolean(bool b) -> bool {
        value v;
        v.type = value::kind::boolean;
        v.flag = b;
        return put(std::move(v));
    }
    auto number_integer(std::int64_t n) -> bool {
        value v;
        v.type = n < 0 ? value::kind::negative : value::kind::whole;
        v.negative = n;
        v.whole = n < 0 ? 0 : static_cast<std::uint64_t>(n);
        return put(std::move(v));
    }
    auto number_unsigned(std::uint64_t n) -> bool {
        value v;
        v.type = value::kind::whole;
        v.whole = n;
        return put(std::move(v));
    }
    auto number_float(double d, const std::string& token) -> bool {
        value v;
        v.type = value::kind::fraction;
        v.fraction = d;
        v.text = token;
        return put(std::move(v));
    }
    auto string(std::string& s) -> bool {
        value v;
        v.type = value::kind::string;
        v.text = std::move(s);
        return put(std::move(v));
    }
    auto binary(binary_t&) -> bool { return refuse("binary values are not JSON"); }  // never from text
    auto start_object(std::size_t) -> bool { return open(value::kind::object); }
    auto start_array(std::size_t) -> bool { return open(value::kind::array); }
    auto end_object() -> bool { return close(); }
    auto end_array() -> bool { return close(); }
    auto key(std::string& k) -> bool {
        value& obj = *stack_.back();
        bool repeated = false;
        if (keys_.back()) {
            repeated = !keys_.back()->insert(k).second;
        } else {
            for (const auto& m : obj.members) {
                repeated = repeated || m.key == k;
            }
            if (!repeated && obj.members.size() >= 16) {  // many keys: a set from here on
                keys_.back() = std::make_unique<std::set<std::string, std::less<>>>();
                for (const auto& m : obj.members) {
                    keys_.back()->insert(m.key);
                }
                keys_.back()->insert(k);
            }
        }
        if (repeated) {
            std::string p = where(false);
            append_key(p, k);
            problem = fail(fleet_errc::invalid_document,
                           p + ": the key appears twice in one object (JSON readers disagree on which one counts)");
            return false;
        }
        obj.members.push_back({std::move(k), value{}});
        pending_ = true;
        return true;
    }
    auto parse_error(std::size_t position, const std::string& last_token, const nlohmann::json::exception& ex) -> bool {
        const std::string p = shown_path(where(true));
        std::string what = ex.what();
        if (const auto close_bracket = what.find("] "); what.rfind("[json.exception.", 0) == 0 &&
                                                        close_bracket != std::string::npos) {
            what.erase(0, close_bracket + 2);
        }
        if (ex.id == 406) {  // a number beyond double's range: 1e999 is a valid JSON number
            problem = at_weight() ? fail(errc::invalid_weight, p + ": " + shown_token(last_token) + " is not finite")
                                    : fail(fleet_errc::invalid_document, p + ": " + shown_token(last_token) +
                                                                       " is outside the range of a double");
            return false;
        }
        constexpr std::string_view parse_prefix = "parse error at ";
        std::string location;
        if (what.rfind(parse_prefix, 0) == 0) {
            const auto colon = what.find(": ");
            if (colon != std::string::npos) {
                location = " (" + what.substr(parse_prefix.size(), colon - parse_prefix.size()) + ")";
                what.erase(0, colon + 2);
            }
        }
        // nlohmann quotes the whole token it was reading, however long: show at most 64 bytes.
        // Its own tail ("; expected end of input") is the last one and short and printable; a
        // match inside the token itself (which may hold "'; expected ") is not kept.
        if (const auto read = what.find("; last read: '"); read != std::string::npos) {
            const auto expected = what.rfind("'; expected ");
            std::string tail = expected == std::string::npos || expected < read ? "" : what.substr(expected + 1);
            if (tail.size() > 64 || std::any_of(tail.begin(), tail.end(), [](char c) { return c < 0x20 || c > 0x7e; })) {
                tail.clear();
            }
            what.erase(read);
            what += "; last read: " + quote(last_token) + tail;
        }
        problem = fail(fleet_errc::invalid_document, p + ": invalid JSON at byte " + std::to_string(position) + location +
                                                 ": " + what);
        return false;
    }

private:
    auto refuse(const std::string& why) -> bool {
        problem = fail(fleet_errc::invalid_document, shown_path(where(true)) + ": " + why);
        return false;
    }
    /// The slot the next value goes to.
    auto slot() -> value& {
        if (stack_.empty()) {
            return root;
        }
        value& top = *stack_.back();
        if (top.type == value::kind::array) {
            top.items.emplace_back();
            return top.items.back();
        }
        return top.members.back().item;
    }
    auto put(value v) -> bool {
        slot() = std::move(v);
        pending_ = false;
        return true;
    }
    auto open(value::kind k) -> bool {
        if (stack_.size() >= max_depth) {
            return refuse("nested deeper than " + std::to_string(max_depth) + " levels");
        }
        value& v = slot();
        v.type = k;
        stack_.push_back(&v);  // stays valid: its parent does not grow until it is closed
        keys_.emplace_back();
        pending_ = false;
        return true;
    }
    auto close() -> bool {
        stack_.pop_back();
        keys_.pop_back();
        pending_ = false;
        return true;
    }
    /// The path of the open containers; with_next, also of the value being read in the innermost.
    [[nodiscard]] auto where(bool with_next) const -> std::string {
        std::string p;
        for (std::size_t i = 0; i < stack_.size(); ++i) {
            const value& v = *stack_[i];
            const bool innermost = i + 1 == stack_.size();
            if (v.type == value::kind::array) {
                if (!innermost) {
                    p += "[" + std::to_string(v.items.size() - 1) + "]";
                } else if (with_next) {
                    p += "[" + std::to_string(v.items.size()) + "]";
                }
            } else if (!v.members.empty() && (!innermost || (with_next && pending_))) {
                append_key(p, v.members.back().key);
            }
        }
        return p;
    }
    /// Whether the value being read is nodes[i].weight of the document.
    [[nodiscard]] auto at_weight() const -> bool {
        return stack_.size() == 3 && pending_ && stack_[0]->type == value::kind::object &&
               stack_[0]->members.back().key == "nodes" && stack_[1]->type == value::kind::array &&
               stack_[2]->type == value::kind::object && stack_[2]->members.back().key == "weight";
    }

    std::vector<value*> stack_{};
    std::vector<std::unique_ptr<std::set<std::string, std::less<>>>> keys_{};  // per open container
    bool pending_ = false;  // the innermost object has read a key and not yet its value
};

// ---- The reader: the tree to a snapshot_description, field by field.

/// A path into the document, built on the stack; spelled out only for an error message.
struct path {
    const path* up = nullptr;
    std::string_view key{};
    std::size_t index = 0;
    bool is_index = false;

    [[nodiscard]] auto operator/(std::string_view k) const -> path { return {this, k, 0, false}; }
    [[nodiscard]] auto operator[](std::size_t i) const -> path { return {this, {}, i, true}; }
    [[nodiscard]] auto text() const -> std::string {
        std::string p = up != nullptr ? up->text_inner() : std::string();
        add(p);
        return shown_path(std::move(p));
    }

private:
    [[nodiscard]] auto text_inner() const -> std::string {
        std::string p = up != nullptr ? up->text_inner() : std::string();
        add(p);
        return p;
    }
    void add(std::string& p) const {
        if (is_index) {
            p += "[" + std::to_string(index) + "]";
        } else if (up != nullptr) {
            append_key(p, key);
        }
    }
};

/// A failure at a path: code is an errc or a fleet_errc.
template <class Code>
auto bad(Code code, const path& at, const std::string& what) -> failure {
    std::string where = at.text();
    return fail(code, where + ": " + what).at(std::move(where));
}

/// A value as an error message shows it: bounded whatever the input.
inline auto shown(const value& v) -> std::string {
    switch (v.type) {
        case value::kind::null: return "null";
        case value::kind::boolean: return v.flag ? "true" : "false";
        case value::kind::negative: return std::to_string(v.negative);
        case value::kind::whole: return std::to_string(v.whole);
        case value::kind::fraction: return shown_token(v.text);
        case value::kind::string: return quote(v.text);
        case value::kind::array: return "an array";
        case value::kind::object: return "an object";
    }
    return "?";
}

inline auto find(const value& obj, std::string_view key) -> const value* {
    for (const auto& m : obj.members) {
        if (m.key == key) {
            return &m.item;
        }
    }
    return nullptr;
}

inline auto range_text(std::uint64_t n) -> std::string {
    return n == std::numeric_limits<std::uint64_t>::max()   ? std::string("2^64-1")
           : n == std::numeric_limits<std::uint32_t>::max() ? std::string("2^32-1")
                                                            : std::to_string(n);
}

inline auto join(std::span<const std::string_view> names) -> std::string {
    std::string out;
    for (const auto n : names) {
        out += (out.empty() ? "" : ", ") + std::string(n);
    }
    return out;
}

/// Reads a description from the tree. strict: refuse fields this format does not define.
class reader {
public:
    auto document(const value& doc, snapshot_description& d) -> failure {
        const path top{};
        if (doc.type != value::kind::object) {
            return bad(fleet_errc::invalid_document, top, shown(doc) + " is not an object");
        }
        if (auto f = format(doc, top / "format", d.format)) {
            return f;
        }
        static constexpr std::string_view fields[] = {"format",      "cluster",     "epoch", "parent_epoch",
                                                      "strategy",    "replication", "nodes", "overrides",
                                                      "fingerprint", "probe",       "metadata"};
        if (auto f = known(doc, top, fields, "a snapshot document")) {
            return f;
        }
        if (auto f = text(doc, top / "cluster", true, d.cluster)) {
            return f;
        }
        if (auto f = whole(doc, top / "epoch", true, 1, d.epoch)) {
            return f;
        }
        d.parent_epoch = 0;
        if (auto f = whole(doc, top / "parent_epoch", false, 0, d.parent_epoch)) {
            return f;
        }
        if (auto f = checked(check_header(d))) {  // the builder's check of the header
            return f;
        }
        if (auto f = strategy(doc, top / "strategy", d.strategy)) {
            return f;
        }
        if (auto f = replication(doc, top / "replication", d.replication)) {
            return f;
        }
        if (auto f = nodes(doc, top / "nodes", d.nodes)) {
            return f;
        }

        if (auto f = overrides(doc, top / "overrides", d.overrides)) {
            return f;
        }
        if (auto f = digest(doc, top / "fingerprint", d.fingerprint)) {
            return f;
        }
        if (auto f = digest(doc, top / "probe", d.probe)) {
            return f;
        }
        if (auto f = metadata(doc, top / "metadata", d.metadata)) {
            return f;
        }
        // The document's shape is right; now what it means: the checks the snapshot builder
        // makes too, written once (strategy_table.hpp).
        if (auto f = checked(check_strategy(d.strategy))) {
            return f;
        }
        for (std::size_t i = 0; i < d.nodes.size(); ++i) {
            if (auto f = checked(check_node_data(*find_strategy(d.strategy.name), d.nodes[i], i))) {
                return f;
            }
        }
        return {};
    }

private:
    // Forward compatibility (doc/snapshots.md, "JSON"). A document of format keyplace.snapshot/1 (minor
    // 0) may hold only the fields this library defines: an unknown one is refused, so a typo
    // ("wieght") is an error, never a silent default. A document that declares a newer minor
    // (keyplace.snapshot/1.1, ...) was written for a library that knows more fields. A minor
    // only adds fields that do not change placement (what does needs a new major or a strategy
    // parameter), and the stated fingerprint proves the placement, so this reader ignores them.
    // Strategy parameters are never ignored: an unknown one is unknown_strategy at any minor.
    bool strict_ = true;

    auto format(const value& doc, const path& at, std::string& out) -> failure {
        if (auto f = text(doc, at, true, out)) {
            return f;
        }
        const auto minor = snapshot_format_minor(out);  // the builder's own test of the format
        if (!minor) {
            return bad(fleet_errc::invalid_document, at, quote(out) + " is not a format this library reads (" +
                                                       std::string(snapshot_format) + " or " +
                                                       std::string(snapshot_format) + ".<minor>)");
        }
        strict_ = minor->find_first_not_of('0') == std::string_view::npos;
        return {};
    }

    auto known(const value& obj, const path& at, std::span<const std::string_view> fields, std::string_view what)
        -> failure {
        if (!strict_) {
            return {};
        }
        for (const auto& m : obj.members) {
            bool ok = false;
            for (const auto f : fields) {
                ok = ok || f == m.key;
            }
            if (!ok) {
                return bad(fleet_errc::invalid_document, at / m.key,
                           "unknown field: " + std::string(what) + " of format " + std::string(snapshot_format) +
                               " holds only " + join(fields));
            }
        }
        return {};
    }

    /// The object at obj[key]: nullptr when it is absent and optional.
    auto object(const value& obj, const path& at, bool required, const value*& out) -> failure {
        out = find(obj, at.key);
        if (out == nullptr) {
            return required ? bad(fleet_errc::invalid_document, at, "missing") : failure{};
        }
        if (out->type != value::kind::object) {
            return bad(fleet_errc::invalid_document, at, shown(*out) + " is not an object");
        }
        return {};
    }

    auto text(const value& obj, const path& at, bool required, std::string& out) -> failure {
        const value* v = find(obj, at.key);
        if (v == nullptr) {
            return required ? bad(fleet_errc::invalid_document, at, "missing") : failure{};
        }
        if (v->type != value::kind::string) {
            return bad(fleet_errc::invalid_document, at, shown(*v) + " is not a string");
        }
        out = v->text;
        return {};
    }

    static auto whole_value(const value& v, const path& at, std::uint64_t lo, std::uint64_t hi, std::uint64_t& out)
        -> failure {
        if (v.type != value::kind::whole || v.whole < lo || v.whole > hi) {
            return bad(fleet_errc::invalid_document, at, shown(v) + " is not a whole number from " + std::to_string(lo) +
                                                       " to " + range_text(hi));
        }
        out = v.whole;
        return {};
    }

    template <class T>
    auto whole(const value& obj, const path& at, bool required, std::uint64_t lo, T& out) -> failure {
        const value* v = find(obj, at.key);
        if (v == nullptr) {
            return required ? bad(fleet_errc::invalid_document, at, "missing") : failure{};
        }
        std::uint64_t n = 0;
        if (auto f = whole_value(*v, at, lo, std::numeric_limits<T>::max(), n)) {
            return f;
        }
        out = static_cast<T>(n);
        return {};
    }

    auto digest(const value& obj, const path& at, std::optional<digest128>& out) -> failure {
        std::string hex;
        const bool present = find(obj, at.key) != nullptr;
        if (auto f = text(obj, at, false, hex)) {
            return f;
        }
        out.reset();
        if (present) {
            out = digest128::from_hex(hex);
            if (!out) {
                return bad(fleet_errc::invalid_document, at, quote(hex) + " is not 32 hex digits");
            }
        }
        return {};
    }

    auto strategy(const value& doc, const path& at, strategy_spec& out) -> failure {
        const value* s = nullptr;
        if (auto f = object(doc, at, true, s)) {
            return f;
        }
        static constexpr std::string_view fields[] = {"name", "contract", "params"};
        if (auto f = known(*s, at, fields, "a strategy")) {
            return f;
        }
        if (auto f = text(*s, at / "name", true, out.name)) {
            return f;
        }
        if (auto f = whole(*s, at / "contract", true, 0, out.contract)) {
            return f;
        }
        out.params.clear();
        const value* params = nullptr;
        if (auto f = object(*s, at / "params", false, params)) {
            return f;
        }
        if (params == nullptr) {
            return {};
        }
        const path pat = at / "params";
        for (const auto& m : params->members) {
            const path p = pat / m.key;
            strategy_param value_of;
            if (m.item.type == value::kind::whole) {
                value_of = m.item.whole;
            } else if (m.item.type == value::kind::string) {
                value_of = m.item.text;
            } else if (m.item.type == value::kind::array) {
                std::vector<std::uint64_t> items;
                items.reserve(m.item.items.size());
                for (std::size_t i = 0; i < m.item.items.size(); ++i) {
                    const value& v = m.item.items[i];
                    if (v.type != value::kind::whole) {
                        return bad(fleet_errc::invalid_document, p[i], shown(v) + " is not a whole number from 0 to 2^64-1");
                    }
                    items.push_back(v.whole);
                }
                value_of = std::move(items);
            } else {
                return bad(fleet_errc::invalid_document, p,
                           shown(m.item) + " is not a whole number from 0 to 2^64-1, a name or a list of numbers");
            }
            out.params.emplace(m.key, std::move(value_of));
        }
        return {};
    }

    /// A semantic check's failure as the reader reports it: its location, then its message.
    static auto checked(failure f) -> failure {
        if (f && !f.where().empty()) {
            const std::string path = f.where();
            return error_access::prefixed(std::move(f), path + ": ");
        }
        return f;
    }

    auto replication(const value& doc, const path& at, replication_spec& out) -> failure {
        out = {};
        const value* r = nullptr;
        if (auto f = object(doc, at, false, r)) {
            return f;
        }
        if (r == nullptr) {
            return {};
        }
        static constexpr std::string_view fields[] = {"count", "spread", "on_shortfall"};
        if (auto f = known(*r, at, fields, "replication")) {
            return f;
        }
        if (auto f = whole(*r, at / "count", false, 0, out.count)) {
            return f;
        }
        std::string spread;
        if (auto f = text(*r, at / "spread", false, spread)) {
            return f;
        }
        if (find(*r, "spread") != nullptr) {
            const auto level = parse_failure_domain(spread);
            if (!level) {
                return bad(errc::invalid_argument, at / "spread", quote(spread) + " is not node, rack, zone or region");
            }
            out.spread = *level;
        }
        std::string rule;
        if (auto f = text(*r, at / "on_shortfall", false, rule)) {
            return f;
        }
        if (find(*r, "on_shortfall") != nullptr) {
            const auto parsed = parse_shortfall(rule);
            if (!parsed) {
                return bad(errc::invalid_argument, at / "on_shortfall", quote(rule) + " is not fail or relax");
            }
            out.on_shortfall = *parsed;
        }
        return {};
    }

    auto nodes(const value& doc, const path& at, std::vector<snapshot_node>& out) -> failure {
        const value* list = find(doc, at.key);
        if (list == nullptr) {
            return bad(fleet_errc::invalid_document, at, "missing");
        }
        if (list->type != value::kind::array) {
            return bad(fleet_errc::invalid_document, at, shown(*list) + " is not an array");
        }
        out.clear();
        out.reserve(list->items.size());
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            const path p = at[i];
            const value& n = list->items[i];
            if (n.type != value::kind::object) {
                return bad(fleet_errc::invalid_document, p, shown(n) + " is not an object");
            }
            snapshot_node node_out;
            if (auto f = node(n, p, node_out)) {
                return f;
            }
            out.push_back(std::move(node_out));
        }
        std::vector<std::uint32_t> order;
        return checked(check_unique_ids(out, order));
    }

    auto node(const value& n, const path& at, snapshot_node& out) -> failure {
        static constexpr std::string_view fields[] = {"id",     "address", "weight",     "state", "region", "zone",
                                                      "rack",   "tokens",  "slots",      "partitions", "points"};
        if (auto f = known(n, at, fields, "a node")) {
            return f;
        }
        if (auto f = text(n, at / "id", true, out.id)) {
            return f;
        }
        if (auto f = check_name(name_kind::node_id, out.id)) {
            return bad(f.code(), at / "id", f.message());
        }
        if (auto f = text(n, at / "address", false, out.address)) {
            return f;
        }
        if (const value* w = find(n, "weight")) {
            if (auto f = weight(*w, at / "weight", out.weight)) {
                return f;
            }
        }
        if (find(n, "state") != nullptr) {
            std::string state;
            if (auto f = text(n, at / "state", true, state)) {
                return f;
            }
            const auto s = parse_node_state(state);
            if (!s) {
                return bad(fleet_errc::invalid_state, at / "state",
                           quote(state) + " is not " + std::string(node_state_names));
            }
            out.state = *s;
        }
        if (auto f = text(n, at / "region", false, out.where.region)) {
            return f;
        }
        if (auto f = text(n, at / "zone", false, out.where.zone)) {
            return f;
        }
        if (auto f = text(n, at / "rack", false, out.where.rack)) {
            return f;
        }
        for (const auto& [part, value] : {std::pair{"region", &out.where.region}, std::pair{"zone", &out.where.zone},
                                          std::pair{"rack", &out.where.rack}}) {
            if (auto f = detail::check_name_as(name_kind::location_part, part, *value)) {
                return bad(f.code(), at / part, f.message());
            }
        }
        if (auto f = integers(n, at / "tokens", out.tokens)) {
            return f;
        }
        if (auto f = slots(n, at / "slots", out.slots)) {
            return f;
        }
        if (auto f = partition_spans(n, at / "partitions", out.partitions)) {
            return f;
        }
        return integers(n, at / "points", out.points);
    }

    static auto weight(const value& w, const path& at, double& out) -> failure {
        switch (w.type) {
            case value::kind::whole: out = static_cast<double>(w.whole); break;
            case value::kind::negative: out = static_cast<double>(w.negative); break;
            case value::kind::fraction: out = w.fraction; break;
            default: return bad(fleet_errc::invalid_document, at, shown(w) + " is not a number");
        }
        // JSON cannot spell NaN or an infinity; a number beyond double's range was refused by
        // the parser (tree_builder), so only the sign is left to check.
        if (!(out > 0.0)) {
            return bad(errc::invalid_weight, at, shown(w) + " is not > 0");
        }
        return {};
    }

    static auto list(const value& n, const path& at, const value*& out) -> failure {
        out = find(n, at.key);
        if (out != nullptr && out->type != value::kind::array) {
            return bad(fleet_errc::invalid_document, at, shown(*out) + " is not an array");
        }
        return {};
    }

    /// An array of whole numbers in T's range: Cassandra tokens (signed) or chosen points (unsigned).
    template <class T>
    static auto integers(const value& n, const path& at, std::vector<T>& out) -> failure {
        const value* t = nullptr;
        if (auto f = list(n, at, t)) {
            return f;
        }
        if (t == nullptr) {
            return {};
        }
        out.reserve(t->items.size());
        constexpr bool is_signed = std::is_signed_v<T>;
        constexpr auto top = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
        for (std::size_t i = 0; i < t->items.size(); ++i) {
            const value& v = t->items[i];
            if (is_signed && v.type == value::kind::negative) {
                out.push_back(static_cast<T>(v.negative));
            } else if (v.type == value::kind::whole && v.whole <= top) {
                out.push_back(static_cast<T>(v.whole));
            } else {
                return bad(fleet_errc::invalid_document, at[i],
                           shown(v) + (is_signed ? " is not a whole number from -2^63 to 2^63-1"
                                                 : " is not a whole number from 0 to 2^64-1"));
            }
        }
        return {};
    }

    /// An array of spans [first, last], or with `ranked` also [first, last, rank] (rank 0 when
    /// left out), each value within its top and first <= last (else `reversed`); add(v) takes
    /// each span's three values.
    template <class Add>
    static auto spans(const value& n, const path& at, const std::uint64_t (&top)[3], bool ranked, errc reversed,
                      Add&& add) -> failure {
        const value* s = nullptr;
        if (auto f = list(n, at, s)) {
            return f;
        }
        if (s == nullptr) {
            return {};
        }
        for (std::size_t i = 0; i < s->items.size(); ++i) {
            const value& span = s->items[i];
            if (span.type != value::kind::array || span.items.size() < 2 || span.items.size() > (ranked ? 3U : 2U)) {
                return bad(fleet_errc::invalid_document, at[i],
                           shown(span) + (ranked ? " is not [first, last] or [first, last, rank]"
                                                 : " is not a pair [first, last]"));
            }
            std::uint64_t v[3] = {0, 0, 0};
            for (std::size_t k = 0; k < span.items.size(); ++k) {
                if (auto f = whole_value(span.items[k], at[i][k], 0, top[k], v[k])) {
                    return f;
                }
            }
            if (v[0] > v[1]) {
                return bad(reversed, at[i], "[" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + "] is reversed");
            }
            add(v);
        }
        return {};
    }

    static auto slots(const value& n, const path& at, std::vector<slot_span>& out) -> failure {
        constexpr std::uint64_t top = compat::redis_slot_count - 1;
        return spans(n, at, {top, top, 0}, false, errc::invalid_slot_range, [&](const std::uint64_t(&v)[3]) {
            out.push_back({static_cast<std::uint16_t>(v[0]), static_cast<std::uint16_t>(v[1])});
        });
    }

    static auto partition_spans(const value& n, const path& at, std::vector<partition_span>& out) -> failure {
        return spans(n, at, {max_partitions - 1, max_partitions - 1, max_partition_replicas - 1}, true,
                     errc::invalid_partition_table, [&](const std::uint64_t(&v)[3]) {
                         out.push_back({static_cast<std::uint32_t>(v[0]), static_cast<std::uint32_t>(v[1]),
                                        static_cast<std::uint32_t>(v[2])});
                     });
    }

    /// [{"key": K, "node": ID}, ...]; the build checks the keys and nodes.
    auto overrides(const value& doc, const path& at, std::vector<key_override>& out) -> failure {
        out.clear();
        const value* list = find(doc, at.key);
        if (list == nullptr) {
            return {};
        }
        if (list->type != value::kind::array) {
            return bad(fleet_errc::invalid_document, at, shown(*list) + " is not an array");
        }
        if (list->items.size() > max_overrides) {
            return bad(fleet_errc::invalid_override, at, std::to_string(list->items.size()) +
                                                       " overrides; a snapshot holds at most " +
                                                       std::to_string(max_overrides));
        }
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            const path p = at[i];
            const value& o = list->items[i];
            if (o.type != value::kind::object) {
                return bad(fleet_errc::invalid_document, p, shown(o) + " is not an object");
            }
            static constexpr std::string_view fields[] = {"key", "node"};
            if (auto f = known(o, p, fields, "an override")) {
                return f;
            }
            key_override entry;
            if (auto f = text(o, p / "key", true, entry.key)) {
                return f;
            }
            if (auto f = text(o, p / "node", true, entry.node)) {
                return f;
            }
            if (auto f = check_name(name_kind::node_id, entry.node)) {
                return bad(f.code(), p / "node", f.message());
            }
            out.push_back(std::move(entry));
        }
        return checked(check_unique_override_keys(out));
    }

    auto metadata(const value& doc, const path& at, snapshot_metadata& out) -> failure {
        out = {};
        const value* m = nullptr;
        if (auto f = object(doc, at, false, m)) {
            return f;
        }
        if (m == nullptr) {
            return {};
        }
        static constexpr std::string_view fields[] = {"created_ms", "author", "reason"};
        if (auto f = known(*m, at, fields, "metadata")) {
            return f;
        }
        if (auto f = whole(*m, at / "created_ms", false, 0, out.created_ms)) {
            return f;
        }
        if (auto f = text(*m, at / "author", false, out.author)) {
            return f;
        }
        return text(*m, at / "reason", false, out.reason);
    }
};

/// Parses and reads; err is set on failure. The whole text is the document: nlohmann's lexer
/// takes a NUL byte for the end of its input, so one is refused here, wherever it is.
inline auto read(std::string_view text, snapshot_description& d) -> failure {
    if (text.size() > max_document_size) {
        return fail(fleet_errc::invalid_document, "$: the document is " + std::to_string(text.size()) +
                                                " bytes, above the limit of " + std::to_string(max_document_size));
    }
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        return fail(fleet_errc::invalid_document, "$: invalid JSON at byte " + std::to_string(nul + 1) + ": a NUL byte");
    }
    tree_builder tree;
    const bool parsed = nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &tree);
    if (!parsed) {
        return tree.problem ? tree.problem : fail(fleet_errc::invalid_document, "$: invalid JSON");
    }
    return reader{}.document(tree.root, d);
}

template <class F>
auto guarded(error_info& err, F&& f) -> decltype(f()) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(_CPPUNWIND)
    try {
        return f();
    } catch (const std::bad_alloc&) {  // the document is not at fault: say what ran out
        err = fail(errc::out_of_memory, "$: out of memory reading the document or building its placement");
        return std::nullopt;
    } catch (const std::exception& e) {  // anything nlohmann might still throw
        err = fail(fleet_errc::invalid_document, std::string("$: ") + e.what());
        return std::nullopt;
    }
#else
    (void)err;
    return f();
#endif
}

}  // namespace detail::jsonio

KEYPLACE_DETAIL_INLINE auto write_description_json(const snapshot_description& d) -> std::string {
    using nlohmann::ordered_json;
    ordered_json doc = ordered_json::object();
    doc["format"] = d.format;
    doc["cluster"] = d.cluster;
    doc["epoch"] = d.epoch;
    doc["parent_epoch"] = d.parent_epoch;
    ordered_json params = ordered_json::object();
    for (const auto& [name, value] : d.strategy.params) {
        std::visit([&, &pname = name](const auto& v) { params[pname] = v; }, value);
    }
    doc["strategy"] = {{"name", d.strategy.name}, {"contract", d.strategy.contract}, {"params", std::move(params)}};
    doc["replication"] = {{"count", d.replication.count}, {"spread", std::string(to_string(d.replication.spread))}};
    if (d.replication.on_shortfall == shortfall::relax) {  // written only when not the default
        doc["replication"]["on_shortfall"] = "relax";
    }
    ordered_json nodes = ordered_json::array();
    for (const auto& n : d.nodes) {
        ordered_json j = ordered_json::object();
        j["id"] = n.id;
        j["address"] = n.address;
        j["weight"] = n.weight;  // a double: dumped as the shortest round-trip decimal
        j["state"] = std::string(to_string(n.state));
        if (!n.where.region.empty()) {
            j["region"] = n.where.region;
        }
        if (!n.where.zone.empty()) {
            j["zone"] = n.where.zone;
        }
        if (!n.where.rack.empty()) {
            j["rack"] = n.where.rack;
        }
        if (!n.tokens.empty()) {
            j["tokens"] = n.tokens;
        }
        if (!n.slots.empty()) {
            ordered_json spans = ordered_json::array();
            for (const auto& s : n.slots) {
                spans.push_back({s.first, s.last});
            }
            j["slots"] = std::move(spans);
        }
        if (!n.points.empty()) {
            j["points"] = n.points;
        }
        if (!n.partitions.empty()) {
            ordered_json spans = ordered_json::array();
            for (const auto& s : n.partitions) {
                spans.push_back(s.rank == 0 ? ordered_json{s.first, s.last} : ordered_json{s.first, s.last, s.rank});
            }
            j["partitions"] = std::move(spans);
        }
        nodes.push_back(std::move(j));
    }
    doc["nodes"] = std::move(nodes);
    if (!d.overrides.empty()) {
        ordered_json list = ordered_json::array();
        for (const auto& o : d.overrides) {
            list.push_back({{"key", o.key}, {"node", o.node}});
        }
        doc["overrides"] = std::move(list);
    }
    if (d.fingerprint) {
        doc["fingerprint"] = d.fingerprint->hex();
    }
    if (d.probe) {
        doc["probe"] = d.probe->hex();
    }
    doc["metadata"] = {
        {"created_ms", d.metadata.created_ms}, {"author", d.metadata.author}, {"reason", d.metadata.reason}};
    return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

KEYPLACE_DETAIL_INLINE auto write_snapshot_json(const snapshot& s) -> std::string {
    return write_description_json(s.describe());
}

KEYPLACE_DETAIL_INLINE auto read_description_json(std::string_view text, error_info& err)
    -> std::optional<snapshot_description> {
    return detail::jsonio::guarded(err, [&]() -> std::optional<snapshot_description> {
        snapshot_description d;
        return detail::report(detail::jsonio::read(text, d), std::move(d), err);
    });
}

KEYPLACE_DETAIL_INLINE auto try_load_snapshot_json(std::string_view text, error_info& err) -> std::optional<snapshot> {
    return detail::jsonio::guarded(err, [&]() -> std::optional<snapshot> {
        auto d = read_description_json(text, err);
        if (!d) {
            return std::nullopt;
        }
        auto s = snapshot::try_build(*d, err);
        if (!s) {  // where() is the path; a check that knew none concerns the whole document
            const std::string path = err.where().empty() ? std::string("$") : err.where();
            err = detail::error_access::prefixed(std::move(err), path + ": ");
        }
        return s;
    });
}

#endif  // KEYPLACE_DETAIL_DEFINE

KEYPLACE_NAMESPACE_END

#endif
