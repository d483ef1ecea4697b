// The standard descriptors of keyplace-cli and keyplace-fleet, held before anything is opened.
// A closed descriptor 0, 1 or 2 is the next one open() or socket() returns, so a file or socket
// the program opens (etcd's connection, a memcached server's, a temporary file) would take it,
// and what was meant for stdout would go there with a status 0.
#ifndef KEYPLACE_CLI_DESCRIPTORS_HPP_INCLUDED
#define KEYPLACE_CLI_DESCRIPTORS_HPP_INCLUDED

#if !defined(_WIN32)
#include <fcntl.h>
#include <unistd.h>
#endif

#include <array>
#include <cerrno>
#include <cstddef>

namespace keyplace_cli {

/// Which of descriptors 0, 1 and 2 were closed at start, and whether each was held.
struct standard_descriptors {
    std::array<bool, 3> closed{};
    bool held = true;  ///< every closed one now holds /dev/null
};

/// Holds each closed standard descriptor with /dev/null: stdin then reads as empty; stdout and
/// stderr are opened read-only, so the first write to them fails (EBADF) and is reported as a
/// failed write, never made to something else. Call first in main, before anything is opened.
inline auto hold_standard_descriptors() noexcept -> standard_descriptors {
    standard_descriptors d;
#if !defined(_WIN32)
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) {
            continue;
        }
        d.closed[static_cast<std::size_t>(fd)] = true;
        // open() returns the lowest free descriptor: fd, since those below it are open.
        const int got = ::open("/dev/null", O_RDONLY);
        if (got != fd) {
            d.held = false;
            if (got >= 0) {
                ::close(got);
            }
        }
    }
#endif
    return d;
}

}  // namespace keyplace_cli

#endif
