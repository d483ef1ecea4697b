// keyplace-cli's snapshot commands: snapshot create (over every strategy), next, verify, diff, ramp
// and rollback, shadow and plan. Compiled where nlohmann_json is found (KEYPLACE_CLI_SNAPSHOTS).
#include "commands.hpp"
#include "snapshot_impl.hpp"

#include <istream>
#include <string>
#include <type_traits>

namespace keyplace_cli {

auto snapshot_create_command::run(const parsed_args& a, std::istream&) -> std::string {
    return with_strategy(a, strategy_options,
                         [&]<class E>(std::type_identity<E>) {
                             return from_specs({a.value(nodes_option.spec)}, [&] { return snapshot_create<E>(a); });
                         });
}

auto snapshot_next_command::run(const parsed_args& a, std::istream&) -> std::string {
    return snapshot_next(a);
}

auto snapshot_verify_command::run(const parsed_args& a, std::istream&) -> std::string {
    return snapshot_verify(a);
}

auto snapshot_diff_command::run(const parsed_args& a, std::istream&) -> std::string {
    return snapshot_diff(a);
}

auto snapshot_ramp_command::run(const parsed_args& a, std::istream&) -> std::string {
    return snapshot_ramp(a);
}

auto snapshot_rollback_command::run(const parsed_args& a, std::istream&) -> std::string {
    return snapshot_rollback(a);
}

auto shadow_command::run(const parsed_args& a, std::istream& in) -> std::string {
    return shadow(a, in);
}

auto plan_command::run(const parsed_args& a, std::istream&) -> std::string {
    return plan(a);
}

auto shard_command::run(const parsed_args& a, std::istream&) -> std::string {
    return shard(a);
}

auto contact_command::run(const parsed_args& a, std::istream&) -> std::string {
    return contact(a);
}

auto what_if_command::run(const parsed_args& a, std::istream&) -> std::string {
    return what_if(a);
}

auto metrics_command::run(const parsed_args& a, std::istream& in) -> std::string {
    return metrics(a, in);
}

}  // namespace keyplace_cli
