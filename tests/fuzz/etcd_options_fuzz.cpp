// Fuzz target: how keyplace::etcd and keyplace-cli's etcd commands read their options, without a
// server: parse_endpoints, the name grammar of clusters and client ids (check_name,
// check_watcher_options, the etcd keys), and the CLI's --endpoints, --cluster, --cacert, --cert,
// --key, --user and --password-file (etcd_connection, etcd_cluster: everything before the first
// request). No client is constructed and no request is made.
//
// Input: NUL-separated fields: the endpoint list, the cluster, the client id, the --user value,
// the password file's bytes; then one byte saying which options are given (and whether their
// files exist), one saying whether KEYPLACE_ETCD_PASSWORD is set.
// Invariants (doc/etcd.md, "A secured cluster", and doc/snapshots.md, "Names"):
//  - parse_endpoints accepts exactly a list whose every comma-separated entry is http:// or
//    https:// followed by a host, without white space or control bytes, and returns the entries
//    in order; a refusal is invalid_argument, a bounded library message naming the first
//    offending entry;
//  - check_name accepts a cluster or client id exactly when it follows the grammar: 1 to 255
//    bytes of well-formed UTF-8, no control byte, white space or any of , = @ * ~ # $ % ^ /, not
//    only dots; check_watcher_options agrees with it; an accepted cluster's etcd keys are
//    /keyplace/<cluster>/...;
//  - the CLI's option readers return, or fail with one cli_error whose line holds no control
//    byte and is bounded; what they return is what the library accepts.
#include "fuzz_support.hpp"

#include "etcd_impl.hpp"

#include <keyplace/etcd.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using keyplace_fuzz::input;

/// Whether s is well-formed UTF-8 (no overlong form, surrogate or code point past U+10FFFF).
auto utf8(std::string_view s) -> bool {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        std::size_t n = 0;
        std::uint32_t cp = 0;
        if (b < 0x80) {
            ++i;
            continue;
        }
        if (b >= 0xc2 && b <= 0xdf) {
            n = 1;
            cp = b & 0x1fU;
        } else if (b >= 0xe0 && b <= 0xef) {
            n = 2;
            cp = b & 0x0fU;
        } else if (b >= 0xf0 && b <= 0xf4) {
            n = 3;
            cp = b & 0x07U;
        } else {
            return false;
        }
        if (i + n >= s.size()) {
            return false;
        }
        for (std::size_t k = 1; k <= n; ++k) {
            const auto c = static_cast<unsigned char>(s[i + k]);
            if ((c & 0xc0U) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (c & 0x3fU);
        }
        const std::uint32_t least[] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
            return false;
        }
        i += n + 1;
    }
    return true;
}

/// The grammar of a cluster name or client id (doc/snapshots.md, "Names").
auto segment_name(std::string_view s) -> bool {
    if (s.empty() || s.size() > keyplace::max_cluster_length || !utf8(s)) {
        return false;
    }
    bool dots_only = true;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f || std::string_view(",=@*~#$%^/").find(c) != std::string_view::npos) {
            return false;
        }
        dots_only = dots_only && c == '.';
    }
    return !dots_only;
}

/// The grammar of one endpoint: a scheme, then a host, no white space or control byte.
auto endpoint(std::string_view e) -> bool {
    std::string_view rest;
    if (e.substr(0, 7) == "http://") {
        rest = e.substr(7);
    } else if (e.substr(0, 8) == "https://") {
        rest = e.substr(8);
    } else {
        return false;
    }
    if (rest.empty() || rest.front() == '/' || rest.front() == '?' || rest.front() == '#') {
        return false;
    }
    for (const char c : e) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) {
            return false;
        }
    }
    return true;
}

auto split(std::string_view list) -> std::vector<std::string_view> {
    std::vector<std::string_view> out;
    std::size_t from = 0;
    for (std::size_t i = 0; i <= list.size(); ++i) {
        if (i == list.size() || list[i] == ',') {
            out.push_back(list.substr(from, i - from));
            from = i + 1;
        }
    }
    return out;
}

void check_endpoints(std::string_view list) {
    keyplace::error_info err;
    const auto got = keyplace::etcd::parse_endpoints(list, err);
    const auto entries = split(list);
    std::optional<std::string_view> bad;
    for (const auto e : entries) {
        if (!bad && !endpoint(e)) {
            bad = e;
        }
    }
    if (keyplace_fuzz::tracing()) {
        std::fprintf(stderr, "parse_endpoints: %s\n", err ? err.message().c_str() : "ok");
    }
    KEYPLACE_FUZZ_CHECK_MSG(static_cast<bool>(err) == bad.has_value(),
                            err ? err.message() : keyplace::detail::quote(*bad) + " accepted");
    if (bad) {
        KEYPLACE_FUZZ_CHECK(got.empty());
        KEYPLACE_FUZZ_CHECK(err.code() == keyplace::errc::invalid_argument);
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
        KEYPLACE_FUZZ_CHECK_MSG(err.message().find(keyplace::detail::quote(*bad)) != std::string::npos, err.message());
        return;
    }
    KEYPLACE_FUZZ_CHECK(got.size() == entries.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        KEYPLACE_FUZZ_CHECK(got[i] == entries[i]);
    }
}

void check_segment(keyplace::name_kind kind, std::string_view name) {
    const auto err = keyplace::check_name(kind, name);
    KEYPLACE_FUZZ_CHECK_MSG(static_cast<bool>(err) != segment_name(name),
                            err ? err.message() : keyplace::detail::quote(name) + " accepted");
    if (err) {
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(err.message());
        KEYPLACE_FUZZ_CHECK_MSG(err.message().find(keyplace::detail::quote(name)) != std::string::npos, err.message());
    }
}

void write_file(const std::string& path, std::string_view bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    input in(data, size);
    const std::string list(in.until('\0'));
    const std::string cluster(in.until('\0'));
    const std::string client_id(in.until('\0'));
    const std::string user(in.until('\0'));
    const std::string password_file(in.until('\0'));
    const std::uint8_t given = in.byte();
    const bool env = in.flag();

    // The library.
    check_endpoints(list);
    check_segment(keyplace::name_kind::cluster, cluster);
    check_segment(keyplace::name_kind::client_id, client_id);
    keyplace::etcd::watcher_options wo;
    wo.cluster = cluster;
    wo.client_id = client_id;
    const auto werr = keyplace::etcd::check_watcher_options(wo);
    KEYPLACE_FUZZ_CHECK(static_cast<bool>(werr) != (segment_name(cluster) && segment_name(client_id)));
    if (werr) {
        KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(werr.message());
    }
    if (segment_name(cluster)) {
        const std::string prefix = "/keyplace/" + cluster + "/";
        KEYPLACE_FUZZ_CHECK(keyplace::etcd::current_key(cluster).rfind(prefix, 0) == 0);
        KEYPLACE_FUZZ_CHECK(keyplace::etcd::clients_prefix(cluster).rfind(prefix, 0) == 0);
        KEYPLACE_FUZZ_CHECK(keyplace::etcd::snapshot_key(cluster, given).rfind(prefix, 0) == 0);
    }

    // The CLI's readers, on a command line of these values.
    const std::string present = keyplace_fuzz::scratch_path("pem");
    const std::string absent = keyplace_fuzz::scratch_path("absent");
    const std::string password_path = keyplace_fuzz::scratch_path("password");
    write_file(present, "-----BEGIN CERTIFICATE-----\n");
    write_file(password_path, password_file);
    std::vector<std::string> args = {"--endpoints", list};
    if ((given & 1U) != 0) {
        args.insert(args.end(), {"--cluster", cluster});
    }
    const std::pair<std::uint8_t, const char*> files[] = {{2, "--cacert"}, {4, "--cert"}, {8, "--key"}};
    for (const auto& [bit, name] : files) {
        if ((given & bit) != 0) {
            args.insert(args.end(), {name, (given & 0x80U) != 0 ? absent : present});
        }
    }
    if ((given & 0x10U) != 0) {
        args.insert(args.end(), {"--user", user});
    }
    if ((given & 0x20U) != 0) {
        args.insert(args.end(), {"--password-file", (given & 0x40U) != 0 ? absent : password_path});
    }
    if (env) {
        ::setenv(keyplace_cli::password_variable, "secret", 1);
    } else {
        ::unsetenv(keyplace_cli::password_variable);
    }
    const std::vector<std::string_view> views(args.begin(), args.end());
    const keyplace_cli::option_spec known[] = {
        keyplace_cli::endpoints_option.spec, keyplace_cli::etcd_cluster_option.spec,
        keyplace_cli::cacert_option.spec,    keyplace_cli::cert_option.spec,
        keyplace_cli::key_option.spec,       keyplace_cli::user_option.spec,
        keyplace_cli::password_file_option.spec};
    try {
        const keyplace_cli::parsed_args a(views, known);
        const auto options = keyplace_cli::etcd_connection(a);
        KEYPLACE_FUZZ_CHECK(!options.endpoints.empty() && options.endpoint == options.endpoints.front());
        keyplace::error_info err;
        KEYPLACE_FUZZ_CHECK(keyplace::etcd::parse_endpoints(list, err) == options.endpoints);
        KEYPLACE_FUZZ_CHECK(options.tls.cert_file.empty() == options.tls.key_file.empty());
        KEYPLACE_FUZZ_CHECK(options.auth.user.empty() == ((given & 0x10U) == 0));
        const auto name = keyplace_cli::etcd_cluster(a);
        KEYPLACE_FUZZ_CHECK(name == cluster && segment_name(name));
        if (keyplace_fuzz::tracing()) {
            std::fprintf(stderr, "cli: ok\n");
        }
    } catch (const keyplace_cli::cli_error& e) {
        const std::string_view m = e.what();
        if (keyplace_fuzz::tracing()) {
            std::fprintf(stderr, "cli: %s\n", e.what());
        }
        KEYPLACE_FUZZ_CHECK(e.status == keyplace_cli::exit_usage || e.status == keyplace_cli::exit_bad_input);
        KEYPLACE_FUZZ_CHECK_MSG(!m.empty() && m.size() <= 4096 && !keyplace_fuzz::has_control(m), std::string(m));
    } catch (const std::exception& e) {
        keyplace_fuzz::broken(__FILE__, __LINE__, "an option reader threw", e.what());
    }
    return 0;
}
