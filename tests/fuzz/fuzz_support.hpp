// What the fuzz targets share: a reader of structured values from the fuzzer's bytes, and the
// check that turns a broken invariant into a crash libFuzzer (or the corpus replay) reports.
#ifndef KEYPLACE_TESTS_FUZZ_FUZZ_SUPPORT_HPP_INCLUDED
#define KEYPLACE_TESTS_FUZZ_FUZZ_SUPPORT_HPP_INCLUDED

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <stdlib.h>  // mkdtemp
#include <unistd.h>  // access

namespace keyplace_fuzz {

[[noreturn]] inline void broken(const char* file, int line, const char* what, const std::string& detail) {
    std::fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
    if (!detail.empty()) {
        std::fprintf(stderr, "  %s\n", detail.c_str());
    }
    std::fflush(stderr);
    std::abort();
}

/// Aborts (a crash to libFuzzer, a failed test to the replay) when cond is false.
#define KEYPLACE_FUZZ_CHECK(cond) ((cond) ? (void)0 : ::keyplace_fuzz::broken(__FILE__, __LINE__, #cond, {}))
/// As KEYPLACE_FUZZ_CHECK, printing detail (a std::string expression, evaluated only on failure).
#define KEYPLACE_FUZZ_CHECK_MSG(cond, detail) \
    ((cond) ? (void)0 : ::keyplace_fuzz::broken(__FILE__, __LINE__, #cond, (detail)))

/// Reads the fuzzer's bytes front to back. Past the end every read gives zeros, so a target never
/// has to check the length before it reads.
class input {
public:
    input(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

    [[nodiscard]] auto empty() const noexcept -> bool { return at_ == size_; }
    [[nodiscard]] auto left() const noexcept -> std::size_t { return size_ - at_; }

    auto byte() noexcept -> std::uint8_t { return at_ < size_ ? data_[at_++] : std::uint8_t{0}; }
    auto flag() noexcept -> bool { return (byte() & 1U) != 0; }
    /// sizeof(U) bytes, little-endian.
    template <class U>
    auto bits() noexcept -> U {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < sizeof(U); ++i) {
            v |= std::uint64_t{byte()} << (8 * i);
        }
        return static_cast<U>(v);
    }
    /// A value below n (n >= 1), from one byte when n <= 256, else two.
    auto below(std::size_t n) noexcept -> std::size_t {
        return n <= 256 ? byte() % n : bits<std::uint16_t>() % n;
    }
    /// Up to n bytes.
    auto take(std::size_t n) noexcept -> std::string_view {
        const std::size_t k = n < left() ? n : left();
        const std::string_view out(reinterpret_cast<const char*>(data_) + at_, k);
        at_ += k;
        return out;
    }
    /// The bytes up to the next sep (which is consumed), or the rest.
    auto until(char sep) noexcept -> std::string_view {
        const std::string_view rest(reinterpret_cast<const char*>(data_) + at_, left());
        const auto end = rest.find(sep);
        const std::size_t k = end == std::string_view::npos ? rest.size() : end;
        at_ += end == std::string_view::npos ? k : k + 1;
        return rest.substr(0, k);
    }
    auto rest() noexcept -> std::string_view { return take(left()); }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t at_ = 0;
};

/// Whether KEYPLACE_FUZZ_TRACE is set: targets then say what each input did (for writing corpus
/// entries that reach what they mean to).
[[nodiscard]] inline auto tracing() -> bool {
    static const bool on = std::getenv("KEYPLACE_FUZZ_TRACE") != nullptr;
    return on;
}

/// Whether s holds a control byte (below 0x20, or DEL): a message must hold none but its end.
[[nodiscard]] inline auto has_control(std::string_view s) noexcept -> bool {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            return true;
        }
    }
    return false;
}

/// A library message (doc/contract.md, "Guarantees": user strings quoted and cut at 64 bytes): not empty,
/// one line without control bytes, short whatever the input.
#define KEYPLACE_FUZZ_CHECK_LIBRARY_MESSAGE(m)                                                        \
    KEYPLACE_FUZZ_CHECK_MSG(!(m).empty() && (m).size() <= 1024 && !::keyplace_fuzz::has_control(m), \
                            std::to_string((m).size()) + " bytes: " + std::string(m).substr(0, 300))

/// A path of this process's own for a scratch file (the targets write node files, key files and
/// snapshots there; one input runs at a time), removed when the process exits. In memory
/// (/dev/shm) where there is one: a file write on disk costs more than the rest of an input.
[[nodiscard]] inline auto scratch_path(std::string_view name) -> std::string {
    static const std::string dir = [] {
        const char* env = std::getenv("KEYPLACE_FUZZ_TMPDIR");
        const char* tmp = std::getenv("TMPDIR");
        std::string base = env != nullptr && *env != '\0'          ? env
                           : ::access("/dev/shm", W_OK) == 0         ? "/dev/shm"
                           : tmp != nullptr && *tmp != '\0'          ? tmp
                                                                     : "/tmp";
        std::string pattern = base + "/keyplace-fuzz-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::perror("keyplace-fuzz: mkdtemp");
            std::abort();
        }
        static const std::string made = pattern;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(made, ec);
        });
        return pattern;
    }();
    return dir + "/" + std::string(name);
}

}  // namespace keyplace_fuzz

#endif
