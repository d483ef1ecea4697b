// keyplace-cli's etcd commands: etcd publish, current, watch, ramp and status. Compiled where the
// keyplace::etcd component is built (KEYPLACE_CLI_ETCD).
#include "commands.hpp"
#include "etcd_impl.hpp"

#include <istream>
#include <string>

namespace keyplace_cli {

auto etcd_publish_command::run(const parsed_args& a, std::istream&) -> std::string {
    return etcd_publish(a);
}

auto etcd_current_command::run(const parsed_args& a, std::istream&) -> std::string {
    return etcd_current(a);
}

auto etcd_watch_command::run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string {
    return etcd_watch(a, *io.out, *io.err);
}

auto etcd_ramp_command::run_live(const parsed_args& a, std::istream&, const live_streams& io) -> std::string {
    return etcd_ramp(a, *io.out);
}

auto etcd_status_command::run(const parsed_args& a, std::istream&) -> std::string {
    return etcd_status(a);
}

}  // namespace keyplace_cli
