// keyplace-cli hash and hot-keys, the commands that read a key stream and place nothing: each
// line's digest under a hash function of the registry, and the stream's hottest keys.
#include "commands.hpp"

#include <keyplace/hot_keys.hpp>

#include <cstdio>
#include <istream>
#include <string>
#include <type_traits>

namespace keyplace_cli {

auto hash_command::run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
    return function_option.visit(a, [&]<class H>(std::type_identity<H>) {
        const bool json = a.has(json_flag.spec);
        held_output held(io.stream.held_bytes);
        key_results results(held, json, "{\"function\":" + json_string(H::name) + ",\"digests\":[");
        progress shown(*io.err, progress_mode_of(a, io), "hash");
        key_reader reader(in, io.stream.block_lines, std::string(io.input));
        while (reader.next()) {
            for (const auto k : reader.keys()) {
                results.add(json ? json_string(H::digest(k)) : H::digest(k));
            }
            shown.advance(reader.keys().size());
        }
        results.finish();
        shown.finish();
        held.commit(*io.out);
        return std::string();
    });
}

auto hot_keys_command::run_live(const parsed_args& a, std::istream& in, const live_streams& io) -> std::string {
    const keyplace::hot_keys_config config{candidates_option.get(a), sketch_width_option.get(a), sketch_depth_option.get(a)};
    keyplace::error_info err;
    auto summary = keyplace::hot_keys::try_make(config, err);
    if (!summary) {
        usage_error(err.message());
    }
    progress shown(*io.err, progress_mode_of(a, io), "hot-keys");
    key_reader reader(in, io.stream.block_lines, std::string(io.input));
    while (reader.next()) {
        for (const auto k : reader.keys()) {
            summary->observe(k);
        }
        shown.advance(reader.keys().size());
    }
    shown.finish();
    const auto top = summary->top(top_option.get(a));
    char probability[32];
    std::snprintf(probability, sizeof probability, "%.3g", summary->failure_probability());
    std::string out;
    if (a.has(json_flag.spec)) {
        out = "{\"requests\":" + std::to_string(summary->total()) + ",\"error_bound\":" +
              std::to_string(summary->error_bound()) + ",\"failure_probability\":" + probability +
              ",\"candidates\":" + std::to_string(config.k) + ",\"width\":" + std::to_string(config.width) +
              ",\"depth\":" + std::to_string(config.depth) + ",\"keys\":[";
        for (std::size_t i = 0; i < top.size(); ++i) {
            out += (i == 0 ? "" : ",") + std::string("{\"key\":") + json_string(top[i].key) +
                   ",\"lower\":" + std::to_string(top[i].lower) + ",\"upper\":" + std::to_string(top[i].upper) + "}";
        }
        return out + "]}\n";
    }
    out = "lower upper key\n";  // the key last: it may hold spaces
    for (const auto& h : top) {
        out += std::to_string(h.lower) + " " + std::to_string(h.upper) + " " + h.key + "\n";
    }
    return out + "# " + std::to_string(summary->total()) + " requests; each key's count is within [lower, upper]: " +
           "lower always, upper unless the sketch errs by more than " + std::to_string(summary->error_bound()) +
           " (probability at most " + probability + ")\n";
}

}  // namespace keyplace_cli
