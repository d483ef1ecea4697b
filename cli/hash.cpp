// keyplace-cli hash: each line's digest under every hash function of the registry.
#include "commands.hpp"

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

}  // namespace keyplace_cli
