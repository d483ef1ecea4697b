// keyplace-cli streaming: keys read a block of lines at a time, output held back (in memory,
// then in an unnamed temporary file) until every line was valid, so memory stays bounded by a
// block while a bad line still leaves stdout empty; and progress on stderr.
#ifndef KEYPLACE_CLI_STREAM_HPP_INCLUDED
#define KEYPLACE_CLI_STREAM_HPP_INCLUDED

#include "args.hpp"
#include "run.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <istream>
#include <memory>
#include <mutex>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace keyplace_cli {

/// Where a command that writes as it goes (etcd watch) or streams its input (hash, locate)
/// writes, and how it streams. Without run()'s streams such a command writes to string streams
/// and execute() returns what it wrote on stdout.
struct live_streams {
    std::ostream* out = nullptr;
    std::ostream* err = nullptr;
    stream_options stream{};
    std::string_view input = "stdin";  ///< where the keys come from, for messages ("key file 'k.txt'")
};

// ---- input -------------------------------------------------------------------------------------

/// The keys of a stream a block at a time: the bytes between newlines, a final newline ending
/// the last key (it does not start an empty one). Reads 64 KiB at a time; holds one block.
class key_reader {
public:
    /// source names the input in messages ("stdin", "key file 'k.txt'").
    key_reader(std::istream& in, std::size_t block_lines, std::string source = "stdin")
        : in_(in), block_lines_(block_lines == 0 ? 1 : block_lines), source_(std::move(source)) {}

    /// Reads the next block; false at the end of input. Throws an input error if reading fails.
    auto next() -> bool {
        data_.erase(0, start_);
        scan_ -= start_;
        start_ = 0;
        first_line_ += keys_.size();
        keys_.clear();
        std::vector<std::pair<std::size_t, std::size_t>> spans;
        while (spans.size() < block_lines_) {
            if (const auto nl = data_.find('\n', scan_); nl != std::string::npos) {
                spans.emplace_back(start_, nl);
                start_ = scan_ = nl + 1;
                continue;
            }
            scan_ = data_.size();
            if (at_end_) {
                if (start_ < data_.size()) {
                    spans.emplace_back(start_, data_.size());
                    start_ = scan_ = data_.size();
                }
                break;
            }
            fill();
        }
        for (const auto& [b, e] : spans) {
            keys_.emplace_back(data_.data() + b, e - b);
        }
        return !keys_.empty();
    }
    /// The block's keys, valid until the next call to next().
    [[nodiscard]] auto keys() const noexcept -> std::span<const std::string_view> { return keys_; }
    /// The 1-based line number of the block's first key.
    [[nodiscard]] auto first_line() const noexcept -> std::size_t { return first_line_; }

private:
    /// A failed read names the OS's reason where the stream gives one: a file stream's buffer
    /// throws it from underflow (a directory), which read() would swallow into badbit.
    void fill() {
        char buf[1 << 16];
        if (in_.bad()) {
            input_error("cannot read " + source_);
        }
        const auto mask = in_.exceptions();
        try {
            in_.exceptions(std::ios::badbit);
            in_.read(buf, sizeof buf);
        } catch (const std::ios_base::failure& e) {
            in_.exceptions(std::ios::goodbit);
            input_error("cannot read " + source_ + ": " + e.code().message());
        }
        in_.exceptions(mask);
        if (in_.bad()) {
            input_error("cannot read " + source_);
        }
        data_.append(buf, static_cast<std::size_t>(in_.gcount()));
        at_end_ = in_.eof() || in_.gcount() == 0;
    }

    std::istream& in_;
    std::size_t block_lines_;
    std::string source_;
    std::string data_;
    std::size_t start_ = 0;  // where the next key starts in data_
    std::size_t scan_ = 0;   // data_ before this holds no newline after start_
    bool at_end_ = false;
    std::size_t first_line_ = 1;
    std::vector<std::string_view> keys_;
};

// ---- output ------------------------------------------------------------------------------------

/// An unnamed temporary file in $TMPDIR (else /tmp), removed by the system when closed.
inline auto temporary_file() -> std::FILE* {
#if defined(_WIN32)
    return std::tmpfile();
#else
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/keyplace-cli-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
        return nullptr;
    }
    ::unlink(path.c_str());
    std::FILE* f = ::fdopen(fd, "w+b");
    if (f == nullptr) {
        ::close(fd);
    }
    return f;
#endif
}

/// Output held back until the command has checked all its input: in memory up to a limit,
/// then appended to a temporary file; commit() copies it all to the real output.
class held_output {
public:
    explicit held_output(std::size_t limit) : limit_(limit) {}

    void append(std::string_view s) {
        buffer_ += s;
        if (buffer_.size() >= limit_) {
            spill();
        }
    }
    void append(char c) { append(std::string_view(&c, 1)); }

    /// Writes everything held to out, in order.
    void commit(std::ostream& out) {
        if (file_) {
            spill();
            std::rewind(file_.get());
            char buf[1 << 16];
            while (const std::size_t n = std::fread(buf, 1, sizeof buf, file_.get())) {
                if (!out.write(buf, static_cast<std::streamsize>(n))) {
                    return;  // run() reports the failed write
                }
            }
            if (std::ferror(file_.get()) != 0) {
                input_error("cannot read back the output held in a temporary file");
            }
        }
        out << buffer_;
        buffer_.clear();
    }

private:
    void spill() {
        if (!file_) {
            file_.reset(temporary_file());
            if (!file_) {
                input_error("cannot create a temporary file for the output (in $TMPDIR, else /tmp)");
            }
        }
        if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size()) {
            input_error("cannot hold the output in a temporary file (in $TMPDIR, else /tmp): disk full?");
        }
        buffer_.clear();
    }

    struct closer {
        void operator()(std::FILE* f) const noexcept { std::fclose(f); }
    };
    std::size_t limit_;
    std::string buffer_;
    std::unique_ptr<std::FILE, closer> file_;
};

/// hash and locate: one result per key, a line of text or an item of the JSON array the head
/// opens (`{"owners":[`); finish() closes it with the rest of the object.
class key_results {
public:
    key_results(held_output& out, bool json, std::string_view head) : out_(out), json_(json) {
        if (json_) {
            out_.append(head);
        }
    }
    [[nodiscard]] auto json() const noexcept -> bool { return json_; }
    /// One key's result: the text line (without its newline) or the JSON item.
    void add(std::string_view item) {
        if (json_) {
            if (!first_) {
                out_.append(',');
            }
            out_.append(item);
        } else {
            out_.append(item);
            out_.append('\n');
        }
        first_ = false;
    }
    /// Ends a JSON object with "]" and the tail (",\"degraded\":false}"): nothing for text.
    void finish(std::string_view tail = "}") {
        if (json_) {
            out_.append(']');
            out_.append(tail);
            out_.append('\n');
        }
    }

private:
    held_output& out_;
    bool json_;
    bool first_ = true;
};

// ---- progress ----------------------------------------------------------------------------------

/// What a progress line adds for a step with a known total: ", P% of TOTAL, about S s left",
/// the time left extrapolated from the rate so far (elapsed_ms since the step started); nothing
/// while the total is unknown (0) or nothing is done yet.
inline auto eta_text(std::uint64_t done, std::uint64_t total, std::uint64_t elapsed_ms) -> std::string {
    if (total == 0 || done == 0 || done > total) {
        return "";
    }
    const std::uint64_t percent = done * 100 / total;
    const std::uint64_t left_s = (elapsed_ms * (total - done) / done + 500) / 1000;
    return ", " + std::to_string(percent) + "% of " + std::to_string(total) + ", about " + std::to_string(left_s) +
           " s left";
}

/// Progress of one command on stderr, per progress_mode. step() names what runs now, advance()
/// counts keys done; the terminal line is drawn by a thread, so a long library call (a ring
/// build) still shows its elapsed time. Nothing else writes to err while one is alive.
class progress {
public:
    progress(std::ostream& err, progress_mode mode, std::string command)
        : err_(err), mode_(mode), command_(std::move(command)) {
        if (mode_ == progress_mode::terminal) {
            painter_ = std::thread([this] { paint_loop(); });
        }
    }
    progress(const progress&) = delete;
    auto operator=(const progress&) -> progress& = delete;
    ~progress() { stop(); }

    /// What the command does now ("building --after"); counts start again from 0. total: the
    /// keys the step will count, where known (0: unknown), for the terminal line's estimate.
    void step(std::string what, std::uint64_t total = 0) {
        if (mode_ == progress_mode::off) {
            return;
        }
        {
            const std::lock_guard lock(mutex_);
            step_ = std::move(what);
            step_start_ = clock::now();
            total_ = total;
            done_ = 0;
        }
        if (mode_ == progress_mode::lines) {
            err_ << "keyplace-cli: " << status() << '\n';
        }
    }
    /// n more keys done in this step.
    void advance(std::size_t n) {
        if (mode_ == progress_mode::off) {
            return;
        }
        done_ += n;
        if (mode_ == progress_mode::lines) {
            err_ << "keyplace-cli: " << status() << '\n';
        }
    }
    /// The end: the terminal line erased (if drawn), or a last line with the elapsed time.
    void finish() {
        if (mode_ == progress_mode::lines && !finished_) {
            err_ << "keyplace-cli: " << command_ << ": done in " << elapsed_text() << '\n';
        }
        finished_ = true;
        stop();
    }

private:
    [[nodiscard]] auto status() const -> std::string {
        std::string s = command_;
        {
            const std::lock_guard lock(mutex_);
            if (!step_.empty()) {
                s += ": " + step_;
            }
        }
        if (const std::uint64_t n = done_; n != 0) {
            s += ", " + std::to_string(n) + " keys";
        }
        return s;
    }
    /// The terminal line's estimate for a step with a known total.
    [[nodiscard]] auto estimate() const -> std::string {
        std::uint64_t total = 0;
        clock::time_point since;
        {
            const std::lock_guard lock(mutex_);
            total = total_;
            since = step_start_;
        }
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - since).count();
        return eta_text(done_, total, static_cast<std::uint64_t>(ms));
    }
    [[nodiscard]] auto elapsed_text() const -> std::string {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start_).count();
        return std::to_string(ms / 1000) + "." + std::to_string(ms / 100 % 10) + " s";
    }
    void paint_loop() {
        using namespace std::chrono_literals;
        std::unique_lock lock(stop_mutex_);
        // Quiet for about a second: a command that ends sooner shows nothing.
        if (stop_cv_.wait_for(lock, 1s, [this] { return stopping_; })) {
            return;
        }
        while (true) {
            lock.unlock();
            err_ << "\r\x1b[Kkeyplace-cli: " << status() << estimate() << " (" << elapsed_text() << ")" << std::flush;
            lock.lock();
            if (stop_cv_.wait_for(lock, 500ms, [this] { return stopping_; })) {
                break;
            }
        }
        err_ << "\r\x1b[K" << std::flush;
    }
    void stop() {
        if (!painter_.joinable()) {
            return;
        }
        {
            const std::lock_guard lock(stop_mutex_);
            stopping_ = true;
        }
        stop_cv_.notify_all();
        painter_.join();
    }

    using clock = std::chrono::steady_clock;
    std::ostream& err_;
    progress_mode mode_;
    std::string command_;
    clock::time_point start_ = clock::now();
    mutable std::mutex mutex_;
    std::string step_;
    clock::time_point step_start_ = start_;
    std::uint64_t total_ = 0;
    std::atomic<std::uint64_t> done_{0};
    bool finished_ = false;
    std::mutex stop_mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    std::thread painter_;
};

}  // namespace keyplace_cli

#endif
