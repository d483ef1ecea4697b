// keyplace-cli snapshot commands' bodies: snapshot create / next / verify / diff, locate
// --snapshot, shadow and plan. They read and write snapshot documents, so they need
// keyplace/fleet/json.hpp (nlohmann_json); snapshot.cpp and locate.cpp include this.
#ifndef KEYPLACE_CLI_SNAPSHOT_IMPL_HPP_INCLUDED
#define KEYPLACE_CLI_SNAPSHOT_IMPL_HPP_INCLUDED

#include "args.hpp"
#include "bounded_commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "planning_commands.hpp"
#include "registry.hpp"
#include "snapshot_commands.hpp"
#include "spec.hpp"
#include "stream.hpp"

#include <keyplace/fleet/contact.hpp>
#include <keyplace/fleet/json.hpp>
#include <keyplace/fleet/metrics.hpp>
#include <keyplace/fleet/ramp.hpp>
#include <keyplace/fleet/rollback.hpp>
#include <keyplace/fleet/shadow.hpp>
#include <keyplace/fleet/shuffle_shard.hpp>
#include <keyplace/fleet/snapshot.hpp>
#include <keyplace/fleet/transfer_plan.hpp>
#include <keyplace/fleet/what_if.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <istream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace keyplace_cli {

/// A snapshot document read from a file: parsed strictly, its stated digests verified.
inline auto load_snapshot_file(const std::string& path) -> std::shared_ptr<const keyplace::snapshot> {
    const std::string text = read_file(path, "snapshot", keyplace::max_document_size);
    keyplace::error_info err;
    auto s = keyplace::try_load_snapshot_json(text, err);
    if (!s && err.code() == keyplace::errc::out_of_memory) {
        throw std::bad_alloc();  // reported as every command's out of memory is
    }
    if (!s) {
        input_error(quote(path) + ": " + err.message());
    }
    return std::make_shared<const keyplace::snapshot>(std::move(*s));
}

/// ID=VALUE,... as a map; names the option in errors.
inline auto id_values(const parsed_args& a, const option_spec& spec) -> std::map<std::string, std::string> {
    std::map<std::string, std::string> out;
    const auto v = a.get(spec);
    if (!v) {
        return out;
    }
    for (const auto item : split(*v, ',')) {
        const auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0) {
            usage_error("--" + std::string(spec.name) + " entry " + quote(item) + " is not ID=VALUE");
        }
        if (!out.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1))).second) {
            usage_error("--" + std::string(spec.name) + " names " + quote(item.substr(0, eq)) + " twice");
        }
    }
    return out;
}

/// The snapshot nodes of E's SPEC: the members as its row reads them (tokens, slots or points).
template <class E>
auto snapshot_nodes(const std::string& spec) -> std::vector<keyplace::snapshot_node> {
    if constexpr (requires { E::row; }) {
        return spec_nodes(E::row, spec);
    } else {  // no snapshot holds it: the plain members, for the snapshot to refuse by name
        return spec_nodes(keyplace::strategy_table[0], spec);
    }
}

/// --states ID=STATE,...: each named node's new state; a name that is not a node is an error.
inline void apply_states(const parsed_args& a, std::vector<keyplace::snapshot_node>& nodes, std::string_view where) {
    auto states = id_values(a, states_option.spec);
    for (auto& n : nodes) {
        if (const auto s = states.find(n.id); s != states.end()) {
            const auto state = keyplace::parse_node_state(s->second);
            if (!state) {
                usage_error("--states: " + quote(s->second) + " of node " + quote(n.id) +
                            " is not " + std::string(keyplace::node_state_names));
            }
            n.state = *state;
            states.erase(s);
        }
    }
    if (!states.empty()) {
        usage_error("--states names " + quote(states.begin()->first) + ", which is not in " + std::string(where));
    }
}

/// The document of a description, with --reason, --author and --created-ms as its metadata; with
/// before, a successor that before's publisher would adopt (keyplace::check_successor: no node
/// left in before returns).
inline auto built_document(const parsed_args& a, keyplace::snapshot_description& d,
                           const keyplace::snapshot* before = nullptr) -> std::string {
    d.metadata.reason = a.get(reason_option.spec).value_or("");
    d.metadata.author = a.get(author_option.spec).value_or("");
    d.metadata.created_ms = created_option.find(a).value_or(0);
    keyplace::error_info err;
    const auto s = keyplace::snapshot::try_build(d, err);
    if (!s) {
        throw keyplace::error(err);  // bad input, or bad arguments when every SPEC was inline
    }
    if (before != nullptr) {
        if ((err = keyplace::check_successor(*before, *s))) {
            throw keyplace::error(err);
        }
    }
    return keyplace::write_snapshot_json(*s);
}

/// --drop-override KEY,... then --override KEY=ID,... (split at the last '=': a key may hold one;
/// a key or id holds no ','). An override of a key already overridden replaces it.
inline void apply_overrides(const parsed_args& a, std::vector<keyplace::key_override>& overrides) {
    if (const auto drop = a.get(drop_override_option.spec)) {
        for (const auto key : split(*drop, ',')) {
            const auto it = std::find_if(overrides.begin(), overrides.end(),
                                         [&](const keyplace::key_override& o) { return o.key == key; });
            if (it == overrides.end()) {
                usage_error("--drop-override: key " + quote(key) + " has no override in the snapshot");
            }
            overrides.erase(it);
        }
    }
    if (const auto add = a.get(override_option.spec)) {
        for (const auto item : split(*add, ',')) {
            const auto eq = item.rfind('=');
            if (eq == std::string_view::npos) {
                usage_error("--override entry " + quote(item) + " is not KEY=ID");
            }
            const std::string key(item.substr(0, eq));
            const std::string id(item.substr(eq + 1));
            const auto it = std::find_if(overrides.begin(), overrides.end(),
                                         [&](const keyplace::key_override& o) { return o.key == key; });
            if (it != overrides.end()) {
                it->node = id;
            } else {
                overrides.push_back({key, id});
            }
        }
    }
}

/// --addresses ID=ADDRESS,...: where to connect to each node named (never hashed); every ID must
/// be one of nodes (named in messages as `where`).
inline void apply_addresses(const parsed_args& a, std::vector<keyplace::snapshot_node>& nodes, std::string_view where) {
    auto addresses = id_values(a, addresses_option.spec);
    for (auto& n : nodes) {
        if (const auto ad = addresses.find(n.id); ad != addresses.end()) {
            n.address = ad->second;
            addresses.erase(ad);
        }
    }
    if (!addresses.empty()) {
        usage_error("--addresses names " + quote(addresses.begin()->first) + ", which is not in " + std::string(where));
    }
}

template <class E>
auto snapshot_create(const parsed_args& a) -> std::string {
    keyplace::snapshot_description d;
    d.cluster = a.value(cluster_option.spec);
    d.epoch = epoch_option.get(a);
    d.parent_epoch = parent_epoch_option.find(a).value_or(d.epoch - 1);
    d.strategy.name = std::string(E::name);
    // The options given, and each implicit default (the partitions contract) as new documents state it.
    d.strategy.params = given_params<E>(a, copies_from::caller);  // --copies, below
    d.nodes = snapshot_nodes<E>(a.value(nodes_option.spec));
    apply_states(a, d.nodes, "--nodes");
    apply_addresses(a, d.nodes, "--nodes");
    if (const auto copies = copies_option.find(a)) {
        const auto spread = a.get(copies_spread_option.spec).value_or(std::string(copies_spread_option.fallback));
        const auto level = keyplace::parse_failure_domain(spread);
        if (!level) {
            usage_error("--spread " + quote(spread) + " is not node, rack, zone or region");
        }
        const auto rule = a.get(copies_shortfall_option.spec).value_or(std::string(copies_shortfall_option.fallback));
        const auto shortfall = keyplace::parse_shortfall(rule);
        if (!shortfall) {
            usage_error("--on-shortfall " + quote(rule) + " is not fail or relax");
        }
        d.replication = {*copies, *level, *shortfall};
        if constexpr (requires { E::row; }) {
            // A parameter the copies set (a partition table's replicas): the table holds them, spread as asked.
            for (const auto& p : E::row.params) {
                if (p.from_copies) {
                    d.strategy.params[std::string(p.name)] =
                        p.kind == keyplace::param_kind::name ? keyplace::strategy_param{spread}
                                                             : keyplace::strategy_param{std::uint64_t{*copies}};
                }
            }
        }
    } else if (a.has(copies_shortfall_option.spec)) {
        usage_error("--on-shortfall needs --copies");
    }
    apply_overrides(a, d.overrides);
    return built_document(a, d);
}

/// snapshot next: the successor of a snapshot (epoch + 1; a partition table carried as pending()
/// left it), with nodes added and states changed.
inline auto snapshot_next(const parsed_args& a) -> std::string {
    const auto before = load_snapshot_file(a.value(file_option.spec));
    std::vector<std::pair<std::string, double>> weights;
    for (const auto& [id, w] : id_values(a, new_weights_option.spec)) {
        weights.emplace_back(id, decimal_of(new_weights_option.spec.name, w));
    }
    keyplace::error_info err;
    auto next = before->try_successor(weights, err);
    if (!next) {
        usage_error("--weights: " + err.message());
    }
    auto d = std::move(*next);
    if (a.has(complete_flag.spec)) {
        if (!before->in_transition()) {
            input_error("--complete: epoch " + std::to_string(before->epoch()) + " of cluster " +
                        quote(before->cluster()) + " is not in transition (no joining or leaving node)");
        }
        keyplace::detail::complete_states(d.nodes);
    }
    if (const auto add = a.get(add_nodes_option.spec)) {
        const auto* row = keyplace::find_strategy(d.strategy.name);  // a loaded snapshot's: in the table
        if (row == nullptr) {
            usage_error("--add: strategy " + quote(d.strategy.name) + " has no SPEC form here");
        }
        for (auto& n : spec_nodes(*row, *add, spec_scope::added_nodes)) {
            n.state = keyplace::node_state::joining;
            d.nodes.push_back(std::move(n));
        }
    }
    apply_states(a, d.nodes, "the snapshot or --add");
    apply_addresses(a, d.nodes, "the snapshot or --add");
    apply_overrides(a, d.overrides);
    return built_document(a, d, before.get());
}

inline auto state_counts(const keyplace::snapshot& s) -> std::map<std::string, std::size_t> {
    std::map<std::string, std::size_t> out;
    for (const auto& n : s.nodes()) {
        ++out[std::string(keyplace::to_string(n.state))];
    }
    return out;
}

inline auto snapshot_verify(const parsed_args& a) -> std::string {
    const auto s = load_snapshot_file(a.value(file_option.spec));
    if (!s->verify()) {
        input_error("the snapshot's fingerprint does not match its built placement");
    }
    const auto counts = state_counts(*s);
    if (a.has(json_flag.spec)) {
        json_writer w;
        w.begin_object().member("cluster", s->cluster()).member("epoch", s->epoch());
        w.member("parent_epoch", s->parent_epoch()).member("strategy", s->strategy().name);
        w.member("nodes", s->nodes().size()).key("states").begin_object();
        for (const auto& [state, n] : counts) {
            w.member(state, n);
        }
        w.end_object().member("in_transition", s->in_transition()).member("fingerprint", s->fingerprint().hex());
        w.member("probe", s->probe_digest().hex()).end_object();
        return std::move(w).str() + "\n";
    }
    std::string states;
    for (const auto& [state, n] : counts) {
        states += (states.empty() ? "" : ", ") + std::to_string(n) + " " + state;
    }
    return "ok: cluster " + s->cluster() + ", epoch " + std::to_string(s->epoch()) + " (parent " +
           std::to_string(s->parent_epoch()) + "), strategy " + s->strategy().name + "\n" +
           "nodes        " + std::to_string(s->nodes().size()) + " (" + states + ")" +
           (s->in_transition() ? ", in transition" : "") + "\n" + "fingerprint  " + s->fingerprint().hex() + "\n" +
           "probe        " + s->probe_digest().hex() + "\n";
}

/// A JSON object (without a trailing newline) with one more member, name: value (JSON text), and
/// a newline.
inline auto with_member(std::string object, std::string_view name, const std::string& value) -> std::string {
    object.pop_back();  // the closing brace
    return object + "," + json_string(name) + ":" + value + "}\n";
}

/// How a movement was measured, for its report's header line.
inline auto movement_basis(bool exact) -> std::string {
    return exact ? "exact, over the whole hash space"
                 : "sampled, " + std::to_string(keyplace::analysis_sample_size) + " keys";
}
inline auto movement_basis(const keyplace::movement_report& m) -> std::string { return movement_basis(m.exact); }

/// The text that introduces what a transition epoch prepares, or "" for a stable one.
inline auto transition_note(const keyplace::snapshot& after) -> std::string {
    if (!after.in_transition()) {
        return "";
    }
    return "\nepoch " + std::to_string(after.epoch()) +
           " is a transition: the above is what changes now (a joining node owns nothing until it is "
           "active, a leaving node owns until it has left). Completing it (keyplace-cli snapshot next --complete) "
           "moves, from its current to its pending placement:\n";
}

inline auto snapshot_diff(const parsed_args& a) -> std::string {
    const auto before = load_snapshot_file(a.value(before_file_option.spec));
    const auto after = load_snapshot_file(a.value(after_file_option.spec));
    const auto m = keyplace::detail::snapshot_movement(*before, *after);
    const auto plan = keyplace::plan_transfer(*before, *after);
    const std::string basis = movement_basis(m);
    const bool json = a.has(json_flag.spec);
    std::string movement = render_movement(before->strategy().name + " -> " + after->strategy().name,
                                           before->current().size(), after->current().size(), basis, m, json);
    // A transition epoch moves nothing to its joining nodes yet: say what completing it moves.
    std::string prepared;
    if (after->in_transition()) {
        const auto t = keyplace::transition_movement(*after);
        prepared = render_movement(after->strategy().name, after->current().size(), after->pending().size(),
                                   movement_basis(t), t, json);
    }
    if (json) {
        movement.pop_back();  // the newline
        if (!prepared.empty()) {
            prepared.pop_back();
        }
        return "{\"before_epoch\":" + std::to_string(before->epoch()) + ",\"after_epoch\":" +
               std::to_string(after->epoch()) + ",\"movement\":" + movement + ",\"plan\":" + plan.to_json() +
               ",\"prepared\":" + (prepared.empty() ? std::string("null") : prepared) + "}\n";
    }
    return "epoch " + std::to_string(before->epoch()) + " -> " + std::to_string(after->epoch()) + "\n" + movement +
           "\n" + plan.to_text(max_ranges_option.get(a)) + transition_note(*after) + prepared;
}

/// Writes each description to DIR/epoch-E.json (DIR checked before); the paths.
inline auto write_epochs(const std::string& dir, const std::vector<keyplace::snapshot_description>& epochs)
    -> std::vector<std::string> {
    std::vector<std::string> files;
    for (const auto& d : epochs) {
        const std::string path = (std::filesystem::path(dir) / ("epoch-" + std::to_string(d.epoch) + ".json")).string();
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f << keyplace::write_description_json(keyplace::snapshot::build(d).describe()) << '\n';
        f.flush();
        if (!f) {
            input_error("cannot write " + quote(path));
        }
        files.push_back(path);
    }
    return files;
}

/// --out DIR, checked to be a directory before anything is computed.
inline auto out_dir_of(const parsed_args& a) -> std::optional<std::string> {
    const auto dir = a.get(ramp_out_option.spec);
    if (dir && !std::filesystem::is_directory(*dir)) {
        input_error("--out " + quote(*dir) + " is not a directory");
    }
    return dir;
}

/// --max-moved: a fraction in (0, 1], or a percentage ("5%").
inline auto max_moved_of(const parsed_args& a) -> double {
    const std::string v = a.value(ramp_max_moved_option.spec);
    const bool pct = !v.empty() && v.back() == '%';
    const auto d = parse_decimal(pct ? std::string_view(v).substr(0, v.size() - 1) : std::string_view(v));
    const double f = d ? (pct ? *d / 100 : *d) : 0;
    if (!d || !(f > 0 && f <= 1)) {
        usage_error("--max-moved " + quote(v) + " is not a fraction in (0, 1] or a percentage in (0%, 100%]");
    }
    return f;
}

inline auto snapshot_ramp(const parsed_args& a) -> std::string {
    const bool by_steps = a.has(ramp_steps_option.spec);
    if (by_steps == a.has(ramp_max_moved_option.spec)) {
        usage_error("give --steps N or --max-moved F, not " + std::string(by_steps ? "both" : "neither"));
    }
    keyplace::ramp_options o;
    if (by_steps) {
        o.steps = ramp_steps_option.get(a);
    } else {
        o.max_moved = max_moved_of(a);
    }
    o.announce = a.has(ramp_announce_flag.spec);
    const auto out_dir = out_dir_of(a);
    const auto before = load_snapshot_file(a.value(before_file_option.spec));
    const auto after = load_snapshot_file(a.value(after_file_option.spec));
    keyplace::error_info err;
    const auto plan = keyplace::try_plan_ramp(*before, *after, o, err);
    if (!plan) {
        input_error(err.message());
    }
    const auto files = out_dir ? write_epochs(*out_dir, plan->epochs) : std::vector<std::string>{};
    const bool points = plan->method == keyplace::ramp_method::points;
    const std::string basis = movement_basis(plan->exact);
    if (a.has(json_flag.spec)) {
        json_writer w;
        w.begin_object()
            .member("node", plan->node)
            .member("method", points ? "points" : "weights")
            .member("from_epoch", before->epoch())
            .member("exact", plan->exact)
            .member("monotone", plan->monotone)
            .member("announced", plan->announced)
            .member("one_shot_moved", plan->one_shot_moved)
            .member("minimum", plan->minimum)
            .member("total_moved", plan->total_moved)
            .key("epochs")
            .begin_array();
        for (std::size_t i = 0; i < plan->epochs.size(); ++i) {
            w.begin_object()
                .member("epoch", plan->epochs[i].epoch)
                .member(points ? "points" : "weight", plan->values[i])
                .member("moved", plan->moved[i]);
            if (out_dir) {
                w.member("file", files[i]);
            }
            w.end_object();
        }
        w.end_array().end_object();
        return std::move(w).str() + "\n";
    }
    std::string text = "ramp of " + quote(plan->node) + " by its " + (points ? "points" : "weight") + ": " +
                       std::to_string(plan->epochs.size()) + " epochs after epoch " + std::to_string(before->epoch()) +
                       "; " + basis + "\n";
    text += std::string("epoch  ") + (points ? "points  " : "weight  ") + "moved\n";
    std::string announcing;  // the first epoch's note, with --announce
    for (const auto& n : plan->epochs.front().nodes) {
        if (plan->announced && n.id == plan->node) {
            announcing = quote(n.id) + " " + std::string(keyplace::to_string(n.state)) + ": announces the ramp";
        }
    }
    for (std::size_t i = 0; i < plan->epochs.size(); ++i) {
        std::string value = points ? std::to_string(static_cast<std::uint64_t>(plan->values[i]))
                                   : keyplace::detail::format_weight(plan->values[i]);
        std::string epoch = std::to_string(plan->epochs[i].epoch);
        text += epoch + std::string(epoch.size() < 7 ? 7 - epoch.size() : 1, ' ') + value +
                std::string(value.size() < 8 ? 8 - value.size() : 1, ' ') + percent(plan->moved[i]) +
                (out_dir ? "  " + files[i] : "") +
                (i == 0 && plan->announced ? "  " + announcing : std::string()) +
                "\n";
    }
    text += "total " + percent(plan->total_moved) + ", one epoch " + percent(plan->one_shot_moved) + ", minimum " +
            percent(plan->minimum) + "\n";
    text += plan->monotone ? "each key moves at most once, toward or away from " + quote(plan->node) + "\n"
                           : "keys may move more than once: the ramp moves " +
                                 percent(plan->total_moved - plan->one_shot_moved) + " more than one epoch\n";
    return text;
}

inline auto snapshot_rollback(const parsed_args& a) -> std::string {
    keyplace::rollback_options o;
    if (a.has(ramp_max_moved_option.spec)) {
        if (a.has(rollback_steps_option.spec)) {
            usage_error("give --steps N or --max-moved F, not both");
        }
        o.steps = 0;
        o.max_moved = max_moved_of(a);
    } else {
        o.steps = rollback_steps_option.get(a);
    }
    const auto out_dir = out_dir_of(a);
    const auto now = load_snapshot_file(a.value(rollback_from_option.spec));
    const auto back = load_snapshot_file(a.value(rollback_to_option.spec));
    keyplace::error_info err;
    const auto plan = keyplace::try_plan_rollback(*now, *back, o, err);
    if (!plan) {
        input_error(err.message());
    }
    const auto files = out_dir ? write_epochs(*out_dir, plan->epochs) : std::vector<std::string>{};
    if (a.has(json_flag.spec)) {
        json_writer w;
        w.begin_object().member("from_epoch", now->epoch()).member("to_epoch", back->epoch());
        w.member("exact", plan->exact).key("epochs").begin_array();
        for (std::size_t i = 0; i < plan->epochs.size(); ++i) {
            w.begin_object().member("epoch", plan->epochs[i].epoch).member("moved", plan->moved[i]);
            if (out_dir) {
                w.member("file", files[i]);
            }
            w.end_object();
        }
        w.end_array().key("totals").begin_array();
        for (const auto& t : plan->totals) {
            w.begin_object().member("node", t.node).member("invalidate", t.invalidate);
            w.member("relinquish", t.relinquish).end_object();
        }
        w.end_array().key("ranges").begin_array();
        for (const auto& r : plan->ranges) {
            w.begin_object().member("first", r.first).member("last", r.last).member("fraction", r.fraction);
            w.key("invalidate").array(r.invalidate).key("relinquish").array(r.relinquish).end_object();
        }
        w.end_array().key("keys").begin_array();
        for (const auto& k : plan->keys) {
            w.begin_object().member("key", k.key);
            w.key("invalidate").array(k.invalidate).key("relinquish").array(k.relinquish).end_object();
        }
        w.end_array().end_object();
        return std::move(w).str() + "\n";
    }
    std::string text = "rollback from epoch " + std::to_string(now->epoch()) + " to the placement of epoch " +
                       std::to_string(back->epoch()) + ": " + std::to_string(plan->epochs.size()) + " epoch" +
                       (plan->epochs.size() == 1 ? "" : "s") + "; " + movement_basis(plan->exact) + "\n";
    for (std::size_t i = 0; i < plan->epochs.size(); ++i) {
        text += "epoch " + std::to_string(plan->epochs[i].epoch) + " moves " + percent(plan->moved[i]) +
                (out_dir ? "  " + files[i] : "") + "\n";
    }
    if (plan->totals.empty() && plan->keys.empty()) {
        return text + "no copy needs invalidating or dropping\n";
    }
    text += "before publishing, invalidate on each node what it regains; once adopted, drop what it relinquishes:\n";
    std::vector<std::vector<std::string>> rows{{"node", "invalidate", "relinquish"}};
    for (const auto& t : plan->totals) {
        rows.push_back({t.node, percent(t.invalidate), percent(t.relinquish)});
    }
    text += text_table(rows);
    const auto names = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) {
            s += (s.empty() ? "" : ",") + x;
        }
        return s.empty() ? std::string("-") : s;
    };
    const std::size_t shown = std::min(plan->ranges.size(), max_ranges_option.get(a));
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& r = plan->ranges[i];

        text += std::to_string(r.first) + ".." + std::to_string(r.last) + " " + percent(r.fraction) +
                ": invalidate " + names(r.invalidate) + ", relinquish " + names(r.relinquish) + "\n";
    }
    if (shown < plan->ranges.size()) {
        text += "... " + std::to_string(plan->ranges.size() - shown) + " more ranges (--max-ranges, --json)\n";
    }
    for (const auto& k : plan->keys) {
        text += "key " + quote(k.key) + ": invalidate " + names(k.invalidate) + ", relinquish " + names(k.relinquish) +
                "\n";
    }
    return text;
}

/// Streams as locate does.
inline auto locate_snapshot(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
    for (const auto* o : {&strategy_option.spec, &nodes_option.spec, &prehashed_flag.spec, &copies_n_option.spec,
                          &spread_option.spec, &shortfall_option.spec, &load_factor_option.spec,
                          &spread_reads_option.spec, &salt_option.spec}) {
        if (a.has(*o)) {
            usage_error("--snapshot and --" + std::string(o->name) + " exclude each other");
        }
    }
    const auto s = load_snapshot_file(*a.get(snapshot_option.spec));
    const bool json = a.has(json_flag.spec);
    const bool write_set = a.has(write_set_flag.spec);
    held_output held(io.stream.held_bytes);
    key_results results(held, json, write_set ? "{\"write_sets\":[" : "{\"owners\":[");
    progress shown(*io.err, progress_mode_of(a, io), "locate");
    std::vector<std::uint32_t> ws(2 * (s->current().width() + s->pending().width()));
    key_reader reader(in, io.stream.block_lines, std::string(io.input));
    while (reader.next()) {
        for (const auto key : reader.keys()) {
            if (!write_set) {
                const auto& id = s->owner(key).id;
                results.add(json ? json_string(id) : id);
                continue;
            }
            const std::size_t n = s->write_set(key, ws);
            std::string line = json ? "[" : "";
            for (std::size_t k = 0; k < n; ++k) {
                const auto& id = s->nodes()[ws[k]].id;
                line += (k > 0 ? "," : "") + (json ? json_string(id) : id);
            }
            results.add(json ? line + "]" : line);
        }
        shown.advance(reader.keys().size());
    }
    results.finish(",\"epoch\":" + std::to_string(s->epoch()) + "}");
    shown.finish();
    held.commit(*io.out);
    return "";
}

inline auto shadow(const parsed_args& a, std::istream& in) -> std::string {
    const auto before = load_snapshot_file(a.value(before_file_option.spec));
    const auto after = load_snapshot_file(a.value(after_file_option.spec));
    keyplace::shadow_compare cmp(before, after, {.sample_per_million = sample_option.get(a)});
    key_reader reader(in, stream_options{}.block_lines);
    while (reader.next()) {
        for (const auto key : reader.keys()) {
            cmp.observe(key);
        }
    }
    const auto r = cmp.report();
    // The comparison is of the owners now; a transition epoch's own movement comes later.
    const auto prepared = after->in_transition() ? std::optional(keyplace::transition_movement(*after)) : std::nullopt;
    if (a.has(json_flag.spec)) {
        return with_member(r.to_json(), "prepared_moved", prepared ? json_number(prepared->moved) : "null");
    }
    if (!prepared) {
        return r.to_text();
    }
    return r.to_text() + "note             epoch " + std::to_string(after->epoch()) +
           " is a transition: these are the owners now; completing it moves " + percent(prepared->moved) +
           " of the keys (" + movement_basis(*prepared) + "; keyplace-cli snapshot diff)\n";
}

/// The plan between two partition tables, partition by partition: each partition whose replicas
/// change, the copies to make (joins) and drop (leaves); or {"moved", "minimum", "changes"}.
inline auto partition_plan_report(const keyplace::partition_plan& p, std::size_t max_rows, bool json) -> std::string {
    if (json) {
        json_writer w;
        w.begin_object().member("partitions_changed", p.changes.size()).member("moved", p.moved);
        w.member("minimum", p.minimum).member("owner_changes", p.owner_changes).key("changes").begin_array();
        for (const auto& c : p.changes) {
            w.begin_object().member("partition", c.partition).key("before").array(c.before).key("after").array(c.after);
            w.key("joins").array(c.joins).key("leaves").array(c.leaves).end_object();
        }
        w.end_array().end_object();
        return std::move(w).str() + "\n";
    }
    std::string out = std::to_string(p.changes.size()) + " partitions change: " + std::to_string(p.moved) +
                      " copies to make (the least any table with these counts needs: " + std::to_string(p.minimum) +
                      "), " + std::to_string(p.owner_changes) + " owners change\n";
    const auto join_ids = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& id : v) {
            s += (s.empty() ? "" : ",") + id;
        }
        return s.empty() ? std::string("-") : s;
    };
    std::vector<std::vector<std::string>> rows{{"partition", "before", "after"}};
    for (std::size_t i = 0; i < p.changes.size() && i < max_rows; ++i) {
        const auto& c = p.changes[i];
        rows.push_back({std::to_string(c.partition), join_ids(c.before), join_ids(c.after)});
    }
    out += text_table(rows);
    if (p.changes.size() > max_rows) {
        out += "... " + std::to_string(p.changes.size() - max_rows) + " more (--max-ranges N, or --json)\n";
    }
    return out;
}

inline auto plan(const parsed_args& a) -> std::string {
    const auto before = load_snapshot_file(a.value(before_file_option.spec));
    const auto after = load_snapshot_file(a.value(after_file_option.spec));
    const auto* tb = std::get_if<keyplace::partitions>(&before->current().strategy());
    const auto* ta = std::get_if<keyplace::partitions>(&after->current().strategy());
    if (tb != nullptr && ta != nullptr && tb->partition_count() == ta->partition_count() &&
        tb->replica_count() == ta->replica_count()) {
        std::string out = partition_plan_report(keyplace::partition_moves(*tb, *ta), max_ranges_option.get(a),
                                                a.has(json_flag.spec));
        // A transition epoch: the partitions its completion moves, from its current table to its pending one.
        const auto* tp = std::get_if<keyplace::partitions>(&after->pending().strategy());
        const bool transition = after->in_transition() && tp != nullptr;
        if (a.has(json_flag.spec)) {
            out.pop_back();  // the newline
            std::string prepared = "null";
            if (transition) {
                prepared = partition_plan_report(keyplace::partition_moves(*ta, *tp), max_ranges_option.get(a), true);
                prepared.pop_back();
            }
            return with_member(out, "prepared", prepared);
        }
        return transition ? out + transition_note(*after) +
                                partition_plan_report(keyplace::partition_moves(*ta, *tp), max_ranges_option.get(a), false)
                          : out;
    }
    const auto p = keyplace::plan_transfer(*before, *after);
    const auto prepared = after->in_transition() ? std::optional(keyplace::plan_transition(*after)) : std::nullopt;
    if (a.has(json_flag.spec)) {
        return with_member(p.to_json(), "prepared", prepared ? prepared->to_json() : "null");
    }
    return p.to_text(max_ranges_option.get(a)) +
           (prepared ? transition_note(*after) + prepared->to_text(max_ranges_option.get(a)) : std::string());
}

// --lose LEVEL=NAME,...: the level and its names (each once, none empty).
inline auto parse_lose(const std::string& text) -> keyplace::loss {
    const auto eq = text.find('=');
    if (eq == std::string::npos) {
        usage_error("--lose " + quote(text) + " is not LEVEL=NAME,... (LEVEL: region, zone, rack or nodes)");
    }
    const auto level = keyplace::parse_loss_level(std::string_view(text).substr(0, eq));
    if (!level) {
        usage_error("--lose: " + quote(text.substr(0, eq)) + " is not region, zone, rack or nodes");
    }
    keyplace::loss l{*level, {}};
    for (const auto name : split(std::string_view(text).substr(eq + 1), ',')) {
        if (name.empty()) {
            usage_error("--lose " + quote(text) + " has an empty name");
        }
        l.names.emplace_back(name);
    }
    return l;
}

inline auto what_if(const parsed_args& a) -> std::string {
    const auto s = load_snapshot_file(a.value(file_option.spec));
    const auto l = parse_lose(a.value(lose_option.spec));
    keyplace::error_info err;
    const auto r = keyplace::try_what_if(*s, l, err);
    if (!r) {
        constexpr std::string_view prefix = "what-if: ";
        const std::string& m = err.message();
        if (m.starts_with(prefix) && !s->in_transition()) {  // the loss names what the snapshot does not have
            usage_error("--lose: " + m.substr(prefix.size()));
        }
        // A snapshot in transition, or a placement without the lost nodes that does not build.
        input_error(m.starts_with(prefix) ? m : "what-if: " + m);
    }
    return a.has(json_flag.spec) ? r->to_json() + "\n" : r->to_text();
}

inline auto shard(const parsed_args& a) -> std::string {
    const auto s = load_snapshot_file(a.value(file_option.spec));
    const std::size_t k = shard_size_option.find(a).value_or(0);
    const auto bound = max_overlap_option.find(a);
    std::vector<std::string> tenants;
    const std::string list = a.value(tenant_option.spec);  // split() views it: it must outlive the loop
    for (const auto t : split(list, ',')) {
        tenants.emplace_back(t);
    }
    if (tenants.size() > 1 && !bound) {
        usage_error("--tenant lists " + std::to_string(tenants.size()) + " tenants: several need --max-overlap");
    }
    std::vector<std::pair<std::string, std::vector<std::uint32_t>>> shards;
    keyplace::error_info err;
    if (bound) {
        keyplace::shard_allocator alloc(*s, *bound);
        for (const auto& t : tenants) {
            if (!alloc.try_assign(t, k, err)) {
                // A size or tenant the arguments got wrong; a bound no shard meets is the cluster's.
                if (err.message().starts_with("shuffle shard: no shard")) {
                    input_error(err.message());
                }
                usage_error(err.message());
            }
        }
        shards = alloc.shards();
    } else {
        auto one = keyplace::try_shuffle_shard(*s, tenants.front(), k, err);
        if (!one) {
            usage_error(err.message());
        }
        shards.emplace_back(tenants.front(), std::move(*one));
    }
    const auto nodes = s->nodes();
    if (a.has(json_flag.spec)) {
        keyplace::detail::json_writer w;
        w.begin_object().member("size", k);
        if (bound) {
            w.member("max_overlap", *bound);
        }
        w.key("shards").begin_array();
        for (const auto& [t, shard] : shards) {
            w.begin_object().member("tenant", t).key("nodes").begin_array();
            for (const auto i : shard) {
                w.begin_object().member("id", nodes[i].id).member("zone", nodes[i].where.zone).end_object();
            }
            w.end_array().end_object();
        }
        w.end_array().end_object();
        return std::move(w).str() + "\n";
    }
    std::string out;
    for (const auto& [t, shard] : shards) {
        out += t + ":";
        for (const auto i : shard) {
            out += " " + nodes[i].id + (nodes[i].where.zone.empty() ? std::string() : "@" + nodes[i].where.zone);
        }
        out += "\n";
    }
    return out;
}

inline auto contact(const parsed_args& a) -> std::string {
    const auto s = load_snapshot_file(a.value(file_option.spec));
    keyplace::contact_request r;
    const std::string level_text = a.get(level_option.spec).value_or("QUORUM");
    const auto level = keyplace::parse_consistency(level_text);
    if (!level) {
        usage_error("--level " + quote(level_text) + " is not ONE, QUORUM, ALL, LOCAL_QUORUM or EACH_QUORUM");
    }
    r.level = *level;
    const std::string op = a.get(op_option.spec).value_or("read");
    if (op != "read" && op != "write") {
        usage_error("--op " + quote(op) + " is not read or write");
    }
    r.op = op == "read" ? keyplace::contact_op::read : keyplace::contact_op::write;
    const std::string zone = a.get(zone_option.spec).value_or("");
    r.zone = zone;
    r.minimize = !a.has(all_copies_flag.spec);
    std::vector<keyplace::node_health> health(s->nodes().size(), keyplace::node_health::up);
    for (const auto& [option, h] : {std::pair{&down_option, keyplace::node_health::down},
                                    std::pair{&read_only_option, keyplace::node_health::read_only}}) {
        const auto list = a.get(option->spec);
        if (!list) {
            continue;
        }
        for (const auto id : split(*list, ',')) {
            const auto* n = s->find(id);
            if (n == nullptr) {
                usage_error("--" + std::string(option->spec.name) + ": " + quote(id) + " is not a node of the snapshot");
            }
            health[static_cast<std::size_t>(n - s->nodes().data())] = h;
        }
    }
    r.health = health;
    const std::string key = a.value(contact_key_option.spec);
    const keyplace::contact_planner planner(*s);
    keyplace::contact_plan p;
    keyplace::error_info err;
    if (!planner.try_plan(key, r, p, err)) {
        // A zone the snapshot does not have, or a level without the zone: the arguments; too few
        // copies that can answer: the cluster's state.
        if (err.code() == keyplace::errc::replica_shortfall) {
            input_error(err.message());
        }
        usage_error(err.message());
    }
    const auto nodes = s->nodes();
    const auto contacts = p.contacts();
    if (a.has(json_flag.spec)) {
        keyplace::detail::json_writer w;
        w.begin_object()
            .member("key", key)
            .member("op", op)
            .member("level", keyplace::to_string(p.level()))
            .member("zone", zone)
            .member("need", p.need())
            .member("max_failures", p.max_failures())
            .member("cross_zone_initial", p.cross_zone_initial());
        const auto list = [&](std::string_view name, std::size_t from, std::size_t to) {
            w.key(name).begin_array();
            for (std::size_t i = from; i < to; ++i) {
                const auto& c = contacts[i];
                w.begin_object()
                    .member("id", nodes[c.node].id)
                    .member("zone", p.zone_name(c.group))
                    .member("local", c.local)
                    .member("counts", c.counts)
                    .member("pending", c.pending)
                    .end_object();
            }
            w.end_array();
        };
        list("initial", 0, p.initial());
        list("then", p.initial(), contacts.size());
        w.end_object();
        return std::move(w).str() + "\n";
    }
    const auto describe = [&](std::size_t from, std::size_t to) {
        std::string out;
        for (std::size_t i = from; i < to; ++i) {
            const auto& c = contacts[i];
            std::string notes = std::string(p.zone_name(c.group));
            notes += c.local ? ", local" : "";
            notes += c.pending ? ", gained in the transition" : "";
            notes += c.counts ? "" : ", invalidation only";
            out += (out.empty() ? "" : ", ") + nodes[c.node].id + " (" + notes + ")";
        }
        return out.empty() ? std::string("none") : out;
    };
    std::string out = std::string(keyplace::to_string(p.level())) + " " + op + " of " + quote(key) +
                      (zone.empty() ? std::string() : " from zone " + quote(zone)) + ": " + std::to_string(p.need()) +
                      " answers needed, " + std::to_string(p.max_failures()) +
                      (p.max_failures() == 1 ? " failure survived\n" : " failures survived\n");
    out += "first wave: " + describe(0, p.initial()) + "\n";
    out += "then, one at a time on a failure or a hedge: " + describe(p.initial(), contacts.size()) + "\n";
    out += "cross-zone contacts in the first wave: " + std::to_string(p.cross_zone_initial()) + "\n";
    return out;
}

inline auto metrics(const parsed_args& a, std::istream& in) -> std::string {
    const auto s = load_snapshot_file(a.value(file_option.spec));
    keyplace::metrics_text m;
    keyplace::append_snapshot_metrics(m, *s);
    if (a.has(hot_keys_flag.spec)) {
        auto summary = keyplace::hot_keys::make();
        key_reader reader(in, stream_options{}.block_lines);
        while (reader.next()) {
            for (const auto k : reader.keys()) {
                summary.observe(k);
            }
        }
        keyplace::append_hot_key_metrics(m, summary);
    }
    return std::move(m).str();
}

}  // namespace keyplace_cli

#endif
