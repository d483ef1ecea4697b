// keyplace — which node owns a key. Hot-key detection: a mergeable summary of the most requested
// keys of a stream, in bounded memory: a Count-Min sketch with conservative update (Cormode and
// Muthukrishnan, 2005; Estan and Varghese, 2002) estimates every key's count, and the k keys with
// the largest estimates are kept as candidates, each with the requests counted since it entered.
#ifndef KEYPLACE_HOT_KEYS_HPP_INCLUDED
#define KEYPLACE_HOT_KEYS_HPP_INCLUDED

#include <keyplace/detail/splitmix.hpp>
#include <keyplace/error.hpp>
#include <keyplace/hash.hpp>
#include <keyplace/version.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

KEYPLACE_NAMESPACE_BEGIN

/// The most candidate keys a hot-key summary may keep.
inline constexpr std::size_t max_hot_keys = std::size_t{1} << 16;

/// The shape of a hot-key summary: k candidates, and a sketch of `depth` rows of `width` counters.
struct hot_keys_config {
    std::size_t k = 64;         ///< candidates kept, 1 .. max_hot_keys
    std::size_t width = 4096;   ///< counters a row: a power of two, 2^4 .. 2^24
    std::size_t depth = 4;      ///< rows, 1 .. 8
};

/// One candidate of a hot-key summary: its true count lies in [lower, upper].
struct hot_key {
    std::string key;
    std::uint64_t lower = 0;  ///< requests counted since it became a candidate
    std::uint64_t upper = 0;  ///< the sketch's estimate, never below the true count
};

/// A summary of the keys a service sees: which are hot, and how hot, in fixed memory.
///
/// Bounds, for n requests observed (merged ones included), width w and depth d:
/// - every estimate is at least the key's true count (always);
/// - an estimate exceeds the true count by more than error_bound() = ceil(e * n / w) for a key
///   with probability at most e^-d (the Count-Min bound; conservative update only lowers
///   estimates): 1.8% at d = 4, and every key with more than that is among the candidates unless
///   k others have larger estimates;
/// - a candidate's lower count never exceeds its true count.
/// merge() adds another summary of the same shape: the sketches add, which is the sketch of both
/// streams, and the candidates of both compete for the k places. One summary per thread (this
/// class is not synchronized), merged for reporting. Memory: w * d * 8 bytes and k keys with their
/// bytes. observe() hashes the key once (XXH3), reads and raises d counters, and looks the key up
/// among the candidates by that hash and its bytes; it scans the candidates (O(k)) only when one
/// enters or the least one changes.
class hot_keys {
public:
    /// Throws keyplace::error (invalid_argument) for a shape outside hot_keys_config's ranges.
    [[nodiscard]] static auto make(const hot_keys_config& config = {}) -> hot_keys {
        error_info err;
        auto h = try_make(config, err);
        if (!h) {
            detail::raise(err);
        }
        return std::move(*h);
    }
    [[nodiscard]] static auto try_make(const hot_keys_config& config, error_info& err) -> std::optional<hot_keys> {
        if (!check_shape(config, err)) {
            return std::nullopt;
        }
        err.clear();
        return hot_keys(config);
    }

    // Copies and moves find their own least candidate (it points into the candidate map). A
    // moved-from summary may only be assigned to or destroyed.
    hot_keys(const hot_keys& other)
        : config_(other.config_), sketch_(other.sketch_), total_(other.total_), candidates_(other.candidates_) {
        find_least();
    }
    hot_keys(hot_keys&& other) noexcept
        : config_(other.config_), sketch_(std::move(other.sketch_)), total_(other.total_),
          candidates_(std::move(other.candidates_)) {
        find_least();
        other.candidates_.clear();
        other.least_ = nullptr;
    }
    auto operator=(const hot_keys& other) -> hot_keys& {
        if (this != &other) {
            *this = hot_keys(other);
        }
        return *this;
    }
    auto operator=(hot_keys&& other) noexcept -> hot_keys& {
        config_ = other.config_;
        sketch_ = std::move(other.sketch_);
        total_ = other.total_;
        candidates_ = std::move(other.candidates_);
        find_least();
        other.candidates_.clear();
        other.least_ = nullptr;
        return *this;
    }
    ~hot_keys() = default;

    /// Counts `count` requests for key (0 does nothing).
    void observe(std::string_view key, std::uint64_t count = 1) {
        if (count == 0) {
            return;
        }
        total_ += count;
        const std::uint64_t h = xxh3{}(key);
        const std::array<std::size_t, max_depth> at = cells(h);
        // Conservative update: raise each of the key's counters only as far as the new estimate.
        std::uint64_t estimate = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t r = 0; r < config_.depth; ++r) {
            estimate = std::min(estimate, sketch_[at[r]]);
        }
        estimate += count;
        for (std::size_t r = 0; r < config_.depth; ++r) {
            sketch_[at[r]] = std::max(sketch_[at[r]], estimate);
        }
        if (const auto c = candidates_.find(hashed{key, h}); c != candidates_.end()) {
            c->second.lower += count;
            c->second.upper = estimate;
            if (&c->first == least_) {
                find_least();
            }
            return;
        }
        if (candidates_.size() < config_.k) {
            candidates_.emplace(std::string(key), counts{count, estimate});
            find_least();
            return;
        }
        if (estimate > least_upper_) {
            candidates_.erase(candidates_.find(*least_));
            candidates_.emplace(std::string(key), counts{count, estimate});
            find_least();
        }
    }

    /// Adds other's requests and candidates: the summary of both streams. Throws keyplace::error
    /// (invalid_argument) for another shape (width or depth), leaving this one untouched.
    void merge(const hot_keys& other) {
        if (other.config_.width != config_.width || other.config_.depth != config_.depth) {
            detail::raise(detail::fail(errc::invalid_argument,
                                       "hot-key summaries of sketch width " + std::to_string(other.config_.width) +
                                           " and depth " + std::to_string(other.config_.depth) + " cannot merge into width " +
                                           std::to_string(config_.width) + " and depth " + std::to_string(config_.depth)));
        }
        if (&other == this) {
            const hot_keys copy = other;  // the stream twice over
            merge(copy);
            return;
        }
        for (std::size_t i = 0; i < sketch_.size(); ++i) {
            sketch_[i] += other.sketch_[i];
        }
        total_ += other.total_;
        for (const auto& [key, c] : other.candidates_) {
            candidates_[key].lower += c.lower;
        }
        // Every candidate of either is estimated again on the sum; the k largest stay.
        std::vector<std::pair<std::uint64_t, std::string>> ranked;
        ranked.reserve(candidates_.size());
        for (auto& [key, c] : candidates_) {
            c.upper = estimate(key);
            ranked.emplace_back(c.upper, key);
        }
        if (ranked.size() > config_.k) {
            std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(config_.k), ranked.end(),
                             std::greater<>{});
            for (std::size_t i = config_.k; i < ranked.size(); ++i) {
                candidates_.erase(candidates_.find(ranked[i].second));
            }
        }
        find_least();
    }

    /// The summary as bytes, to merge summaries across processes or keep one: "KPHK", format 1,
    /// then k, width and depth (u32 little-endian), total (u64), the sketch row by row (u64 each),
    /// the candidate count (u32) and each candidate in key order: its key's length (u32), its bytes,
    /// its lower count and its upper count as last raised (u64 each; the upper count decides which
    /// candidate a hotter key replaces, so a parsed summary goes on as the original would). 32 +
    /// 8 w d bytes, and 20 + the key's bytes a candidate. Throws keyplace::error
    /// (invalid_argument) for a candidate key of 2^32 bytes or more, whose length has no field.
    [[nodiscard]] auto serialize() const -> std::string {
        std::string out = "KPHK";
        out.reserve(28 + sketch_.size() * 8 + candidates_.size() * 32);
        const auto put = [&](std::uint64_t v, int bytes) {
            for (int b = 0; b < bytes; ++b) {
                out += static_cast<char>(static_cast<unsigned char>(v >> (8 * b)));
            }
        };
        put(serial_format, 4);
        put(config_.k, 4);
        put(config_.width, 4);
        put(config_.depth, 4);
        put(total_, 8);
        for (const auto c : sketch_) {
            put(c, 8);
        }
        std::vector<const std::pair<const std::string, counts>*> sorted;
        sorted.reserve(candidates_.size());
        for (const auto& entry : candidates_) {
            sorted.push_back(&entry);
        }
        std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
        put(sorted.size(), 4);
        for (const auto* entry : sorted) {
            if (entry->first.size() > 0xffffffffU) {
                detail::raise(detail::fail(errc::invalid_argument, "hot-key summary: a candidate key of " +
                                                                       std::to_string(entry->first.size()) +
                                                                       " bytes cannot be serialized (at most 2^32 - 1)"));
            }
            put(entry->first.size(), 4);
            out += entry->first;
            put(entry->second.lower, 8);
            put(entry->second.upper, 8);
        }
        return out;
    }
    /// A summary from serialize()'s bytes. Errors (invalid_argument, naming the value): no "KPHK"
    /// at the start, another format, a shape try_make refuses, bytes cut short (checked before the
    /// sketch is allocated, so a few bytes never claim gigabytes) or left over, a sketch row whose
    /// counts add up to more than the total, more candidates than k, a key twice, and a candidate
    /// whose counts are not lower <= upper <= the sketch's estimate (the bytes were changed).
    /// Nothing is read past the end of `bytes`.
    [[nodiscard]] static auto try_parse(std::string_view bytes, error_info& err) -> std::optional<hot_keys> {
        std::size_t at = 0;
        bool short_read = false;
        const auto get = [&](int n) -> std::uint64_t {
            if (bytes.size() - at < static_cast<std::size_t>(n)) {
                short_read = true;
                at = bytes.size();
                return 0;
            }
            std::uint64_t v = 0;
            for (int b = 0; b < n; ++b) {
                v |= std::uint64_t{static_cast<unsigned char>(bytes[at++])} << (8 * b);
            }
            return v;
        };
        const auto refuse = [&](const std::string& why) {
            err = detail::fail(errc::invalid_argument, "hot-key summary bytes: " + why);
            return std::nullopt;
        };
        const auto cut = [&] {
            return refuse("cut short: " + std::to_string(bytes.size()) + " bytes end inside the summary");
        };
        if (bytes.substr(0, 4) != "KPHK") {
            return refuse("they do not begin with \"KPHK\" (" + detail::quote(bytes.substr(0, 4)) + ")");
        }
        at = 4;
        const auto format = get(4);
        if (short_read) {
            return cut();
        }
        if (format != serial_format) {
            return refuse("format " + std::to_string(format) + " is not " + std::to_string(serial_format));
        }
        hot_keys_config shape;
        shape.k = static_cast<std::size_t>(get(4));
        shape.width = static_cast<std::size_t>(get(4));
        shape.depth = static_cast<std::size_t>(get(4));
        const std::uint64_t total = get(8);
        if (short_read) {
            return cut();
        }
        if (!check_shape(shape, err)) {
            return std::nullopt;
        }
        if ((bytes.size() - at) / 8 < shape.width * shape.depth) {
            return cut();
        }
        hot_keys h(shape);
        for (auto& c : h.sketch_) {
            c = get(8);
        }
        for (std::size_t r = 0; r < shape.depth; ++r) {
            std::uint64_t row = 0;
            bool over = false;
            for (std::size_t j = 0; j < shape.width; ++j) {
                const std::uint64_t c = h.sketch_[r * shape.width + j];
                over = over || c > total - row;
                row += over ? 0 : c;
            }
            if (over) {
                return refuse("sketch row " + std::to_string(r) + " counts more than the total " + std::to_string(total));
            }
        }
        h.total_ = total;
        const auto n = get(4);
        if (short_read) {
            return cut();
        }
        if (n > shape.k) {
            return refuse(std::to_string(n) + " candidates where k is " + std::to_string(shape.k));
        }
        for (std::uint64_t i = 0; i < n; ++i) {
            const auto length = get(4);
            if (short_read || bytes.size() - at < length) {
                return cut();
            }
            std::string key(bytes.substr(at, static_cast<std::size_t>(length)));
            at += static_cast<std::size_t>(length);
            const auto lower = get(8);
            const auto upper = get(8);
            if (short_read) {
                return cut();
            }
            const auto estimate = h.estimate(key);
            if (lower > upper || upper > estimate) {
                return refuse("candidate " + detail::quote(key) + " counts " + std::to_string(lower) + " to " +
                              std::to_string(upper) + " requests, outside 0.." + std::to_string(estimate) +
                              " (its estimate) or in the wrong order");
            }
            if (!h.candidates_.emplace(std::move(key), counts{lower, upper}).second) {
                return refuse("candidate " + detail::quote(bytes.substr(at - 16 - static_cast<std::size_t>(length),
                                                                        static_cast<std::size_t>(length))) +
                              " is listed twice");
            }
        }
        if (at != bytes.size()) {
            const auto left = bytes.size() - at;
            return refuse(std::to_string(left) + (left == 1 ? " byte" : " bytes") + " left over after the summary");
        }
        h.find_least();
        err.clear();
        return h;
    }
    /// try_parse, reporting through detail::raise.
    [[nodiscard]] static auto parse(std::string_view bytes) -> hot_keys {
        error_info err;
        auto h = try_parse(bytes, err);
        if (!h) {
            detail::raise(err);
        }
        return std::move(*h);
    }

    /// The candidates, the largest estimate first (then by key bytes), at most n of them.
    [[nodiscard]] auto top(std::size_t n) const -> std::vector<hot_key> {
        std::vector<hot_key> out;
        out.reserve(candidates_.size());
        for (const auto& [key, c] : candidates_) {
            out.push_back({key, c.lower, c.upper});
        }
        std::sort(out.begin(), out.end(), [](const hot_key& a, const hot_key& b) {
            return a.upper != b.upper ? a.upper > b.upper : a.key < b.key;
        });
        out.resize(std::min(n, out.size()));
        return out;
    }
    /// The candidates certainly this hot: lower count at least share * total(), the largest
    /// first. Suggestions for spreading or an override. share in (0, 1], else keyplace::error.
    [[nodiscard]] auto at_least(double share) const -> std::vector<hot_key> {
        if (!(share > 0.0 && share <= 1.0)) {
            detail::raise(detail::fail(errc::invalid_argument, "hot-key share " + std::to_string(share) +
                                                                   " is outside (0, 1]"));
        }
        std::vector<hot_key> out = top(candidates_.size());
        const double floor = share * static_cast<double>(total_);
        std::erase_if(out, [&](const hot_key& h) { return static_cast<double>(h.lower) < floor; });
        return out;
    }

    /// The sketch's estimate for any key: at least its true count.
    [[nodiscard]] auto estimate(std::string_view key) const -> std::uint64_t {
        const std::array<std::size_t, max_depth> at = cells(xxh3{}(key));
        std::uint64_t e = std::numeric_limits<std::uint64_t>::max();
        for (std::size_t r = 0; r < config_.depth; ++r) {
            e = std::min(e, sketch_[at[r]]);
        }
        return e;
    }
    /// ceil(e * total() / width): an estimate exceeds its key's true count by more than this
    /// with probability at most failure_probability().
    [[nodiscard]] auto error_bound() const noexcept -> std::uint64_t {
        return static_cast<std::uint64_t>(std::ceil(euler * static_cast<double>(total_) / static_cast<double>(config_.width)));
    }
    /// e^-depth.
    [[nodiscard]] auto failure_probability() const noexcept -> double {
        return std::exp(-static_cast<double>(config_.depth));
    }
    /// Requests observed, merged ones included.
    [[nodiscard]] auto total() const noexcept -> std::uint64_t { return total_; }
    [[nodiscard]] auto config() const noexcept -> const hot_keys_config& { return config_; }
    /// Candidates kept now (at most k).
    [[nodiscard]] auto size() const noexcept -> std::size_t { return candidates_.size(); }
    /// The sketch's bytes and the candidates' key bytes (the hash map's own nodes not counted).
    [[nodiscard]] auto memory_bytes() const noexcept -> std::size_t {
        std::size_t bytes = sketch_.capacity() * sizeof(std::uint64_t);
        for (const auto& [key, c] : candidates_) {
            bytes += key.capacity() + sizeof(counts);
        }
        return bytes;
    }

private:
    static constexpr std::size_t max_depth = 8;

    static auto check_shape(const hot_keys_config& config, error_info& err) -> bool {
        const auto outside = [&](std::string_view what, std::size_t v, std::string_view range) {
            err = detail::fail(errc::invalid_argument,
                               "hot-key " + std::string(what) + " " + std::to_string(v) + " is outside " + std::string(range));
            return false;
        };
        if (config.k == 0 || config.k > max_hot_keys) {
            return outside("count k", config.k, "1.." + std::to_string(max_hot_keys));
        }
        if (config.width < 16 || config.width > (std::size_t{1} << 24) || (config.width & (config.width - 1)) != 0) {
            return outside("sketch width", config.width, "the powers of two 16..16777216");
        }
        if (config.depth == 0 || config.depth > max_depth) {
            return outside("sketch depth", config.depth, "1..8");
        }
        return true;
    }
    static constexpr std::uint32_t serial_format = 1;
    static constexpr double euler = 2.718281828459045235;

    struct counts {
        std::uint64_t lower;
        std::uint64_t upper;
    };

    explicit hot_keys(const hot_keys_config& config) : config_(config), sketch_(config.width * config.depth, 0) {
        candidates_.reserve(config.k + 1);
    }

    // The counter in each row of a key whose XXH3 is h: row r's index is the top bits of a
    // SplitMix64 mix of h and r, so the rows hash independently of one another for practical purposes.
    [[nodiscard]] auto cells(std::uint64_t h) const noexcept -> std::array<std::size_t, max_depth> {
        const int shift = 64 - std::countr_zero(config_.width);
        std::array<std::size_t, max_depth> at{};
        for (std::size_t r = 0; r < config_.depth; ++r) {
            const std::uint64_t mixed = detail::splitmix64_mix(h + (r + 1) * 0x9e3779b97f4a7c15ULL);
            at[r] = r * config_.width + static_cast<std::size_t>(mixed >> shift);
        }
        return at;
    }
    // The candidate with the least estimate: the one a hotter key replaces.
    void find_least() {
        least_ = nullptr;
        least_upper_ = std::numeric_limits<std::uint64_t>::max();
        for (const auto& [key, c] : candidates_) {
            if (least_ == nullptr || c.upper < least_upper_ || (c.upper == least_upper_ && key < *least_)) {
                least_upper_ = c.upper;
                least_ = &key;
            }
        }
    }

    hot_keys_config config_;
    std::vector<std::uint64_t> sketch_;  // depth rows of width counters
    std::uint64_t total_ = 0;
    // The candidates are keyed by the sketch's hash of their bytes: observe() looks a key up with
    // the XXH3 it has already computed (a `hashed`), so a request costs one hash, not two.
    struct hashed {
        std::string_view key;
        std::uint64_t h;
    };
    struct key_hash {
        using is_transparent = void;
        [[nodiscard]] auto operator()(std::string_view s) const noexcept -> std::size_t {
            return static_cast<std::size_t>(xxh3{}(s));
        }
        [[nodiscard]] auto operator()(const hashed& x) const noexcept -> std::size_t { return static_cast<std::size_t>(x.h); }
    };
    struct key_equal {
        using is_transparent = void;
        [[nodiscard]] auto operator()(std::string_view a, std::string_view b) const noexcept -> bool { return a == b; }
        [[nodiscard]] auto operator()(const hashed& a, std::string_view b) const noexcept -> bool { return a.key == b; }
        [[nodiscard]] auto operator()(std::string_view a, const hashed& b) const noexcept -> bool { return a == b.key; }
    };
    std::unordered_map<std::string, counts, key_hash, key_equal> candidates_;
    const std::string* least_ = nullptr;  // the least candidate's key, in candidates_ (nodes do not move)
    std::uint64_t least_upper_ = 0;
};

KEYPLACE_NAMESPACE_END

#endif
