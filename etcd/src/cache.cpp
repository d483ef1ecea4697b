// keyplace — keyplace::etcd's snapshot cache: the file a watcher keeps its last adopted snapshot
// in, so that a process restarting while etcd is unreachable can route at once.
//
// The file is one header line, then the snapshot document exactly as etcd held it:
//   keyplace-watcher-cache 1 stated=<32 hex> length=<bytes> xxh3-128=<32 hex>\n<document>
// `stated` is the fingerprint `current` stated at the adoption (it may be encoding 1's), and the
// checksum covers the format's name, the stated fingerprint and the document. It is written to
// FILE.tmp.<pid>, flushed to disk, renamed over FILE, and the directory is flushed: a crash leaves
// the old file or the new one, never a mix (and perhaps the temporary file, never read).
#include "protocol.hpp"

#include <keyplace/fleet/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd::internal {

namespace cache_io {

constexpr std::string_view cache_magic = "keyplace-watcher-cache";
constexpr unsigned cache_version = 1;

auto cache_checksum(const digest128& stated, std::string_view document) -> digest128 {
    detail::canonical_hasher h;
    h.str(cache_magic);
    h.le32(cache_version);
    h.digest(stated);
    h.le64(document.size());
    h.bytes(document.data(), document.size());
    return h.finish();
}

auto os_error(int e) -> std::string { return std::strerror(e); }

// Writes all of data to fd; false with errno set on failure.
auto write_all(int fd, std::string_view data) -> bool {
    while (!data.empty()) {
        const auto n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

auto directory_of(const std::string& path) -> std::string {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) {
        return ".";
    }
    return slash == 0 ? "/" : path.substr(0, slash);
}

// The value after "name=" in a header field, or nullopt.
auto field(std::string_view token, std::string_view name) -> std::optional<std::string_view> {
    if (token.size() <= name.size() || token.substr(0, name.size()) != name || token[name.size()] != '=') {
        return std::nullopt;
    }
    return token.substr(name.size() + 1);
}

}  // namespace cache_io
using namespace cache_io;

auto write_cache(const std::string& path, std::string_view document, const digest128& stated) -> std::string {
    const std::string what = "cache " + detail::quote(path) + ": ";
    std::string header = std::string(cache_magic) + " " + std::to_string(cache_version) + " stated=" + stated.hex() +
                         " length=" + std::to_string(document.size()) +
                         " xxh3-128=" + cache_checksum(stated, document).hex() + "\n";
    // Named for this process: two processes misconfigured onto one file never write one temporary.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return what + "cannot create " + detail::quote(tmp) + ": " + os_error(errno);
    }
    bool ok = write_all(fd, header) && write_all(fd, document);
    int e = ok ? 0 : errno;
    if (ok && ::fsync(fd) != 0) {
        ok = false;
        e = errno;
    }
    if (::close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        (void)::unlink(tmp.c_str());
        return what + "cannot write " + detail::quote(tmp) + ": " + os_error(e);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        e = errno;
        (void)::unlink(tmp.c_str());
        return what + "cannot rename " + detail::quote(tmp) + " over it: " + os_error(e);
    }
    // The rename is durable once the directory is: without this a crash may bring the old file back.
    const int dir = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return what + "cannot open its directory to flush the rename: " + os_error(errno);
    }
    const bool synced = ::fsync(dir) == 0;
    e = errno;
    (void)::close(dir);
    if (!synced) {
        return what + "cannot flush its directory: " + os_error(e);
    }
    return "";
}

auto read_cache(const std::string& path, const std::string& cluster, cache_outcome& out) -> bool {
    const std::string what = "cache " + detail::quote(path) + ": ";
    const auto refuse = [&](refusal why, std::string message) {
        out.why = why;
        out.message = what + std::move(message);
        return false;
    };
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) {
            out.absent = true;  // a first start: nothing to restore, and nothing wrong
            return false;
        }
        return refuse(refusal::other, "cannot read it: " + os_error(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return refuse(refusal::other, "not a regular file");
    }
    std::ifstream in(path, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad() || !in.is_open()) {
        return refuse(refusal::other, "cannot read it: " + os_error(errno));
    }
    const auto eol = text.find('\n');
    const std::string_view first = std::string_view(text).substr(0, eol == std::string::npos ? text.size() : eol);
    std::vector<std::string_view> tokens;
    for (std::size_t i = 0; i < first.size();) {
        const auto sp = first.find(' ', i);
        const auto end = sp == std::string_view::npos ? first.size() : sp;
        tokens.push_back(first.substr(i, end - i));
        i = end + 1;
    }
    if (eol == std::string::npos || tokens.size() != 5 || tokens[0] != cache_magic) {
        return refuse(refusal::malformed, "not a keyplace watcher cache (its first line is " + detail::quote(first) + ")");
    }
    if (tokens[1] != std::to_string(cache_version)) {
        return refuse(refusal::malformed, "format version " + detail::quote(tokens[1]) + ", and this build reads " +
                                              std::to_string(cache_version));
    }
    const auto stated_hex = field(tokens[2], "stated");
    const auto length = field(tokens[3], "length");
    const auto sum_hex = field(tokens[4], "xxh3-128");
    const auto stated = stated_hex ? digest128::from_hex(*stated_hex) : std::nullopt;
    const auto sum = sum_hex ? digest128::from_hex(*sum_hex) : std::nullopt;
    std::uint64_t bytes = 0;
    bool length_ok = length && !length->empty() && length->size() <= 12;
    for (const char c : length.value_or("")) {
        length_ok = length_ok && c >= '0' && c <= '9';
        bytes = bytes * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (!stated || !sum || !length_ok) {
        return refuse(refusal::malformed, "a malformed header " + detail::quote(first));
    }
    const std::string_view document = std::string_view(text).substr(eol + 1);
    if (document.size() != bytes) {
        return refuse(refusal::malformed, "truncated or extended: its header states " + std::to_string(bytes) +
                                              " bytes of document, and it holds " + std::to_string(document.size()));
    }
    if (cache_checksum(*stated, document) != *sum) {
        return refuse(refusal::malformed, "corrupt: its content does not match its checksum " + sum->hex());
    }
    error_info err;
    auto s = try_load_snapshot_json(document, err);
    if (!s) {
        return refuse(refusal::malformed, err.message());
    }
    if (s->cluster() != cluster) {
        return refuse(refusal::wrong_cluster, "the snapshot is of cluster " + detail::quote(s->cluster()) + ", not " +
                                                  detail::quote(cluster));
    }
    if (!s->fingerprint_matches(*stated)) {
        return refuse(refusal::fingerprint_mismatch, "the snapshot's fingerprint " + s->fingerprint().hex() +
                                                         " is not " + stated->hex() + ", which the file states");
    }
    out.stated = *stated;
    out.document = std::string(document);
    out.snap.emplace(std::move(*s));
    return true;
}

}  // namespace etcd::internal
KEYPLACE_NAMESPACE_END
