// keyplace — keyplace::etcd's watch stream over the JSON gateway (libcurl's multi interface): one
// key from a revision, resumed on the next endpoint after the last revision delivered, so that no
// event is lost or repeated.
#include "gateway.hpp"

#include <algorithm>
#include <exception>
#include <utility>

KEYPLACE_NAMESPACE_BEGIN
namespace etcd {

using internal::as_bool;
using internal::as_int64;
using internal::b64_encode;
using internal::clock;
using internal::error_text;
using internal::fail_transport;
using internal::grpc_code;
using internal::json;
using internal::parse_kv;
using internal::verdict;

namespace {

struct watch_state {
    const std::function<bool(const watch_event&)>* on_event = nullptr;
    const std::atomic<bool>* stop = nullptr;
    std::string buffer;
    bool created = false;
    bool callback_stopped = false;
    bool compacted = false;
    std::string failure;  // set: the stream reported an error or a cancel
    std::int64_t failure_code = 0;  // gRPC's code of a stream error
    std::int64_t compact_revision = 0;
    std::int64_t delivered = 0;  // every event up to this revision was handed over (the resume point)
};

// One line of the stream: true to keep reading.
auto watch_line(watch_state& st, std::string_view line) -> bool {
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        st.failure = "etcd watch: a line that is not a JSON object: " + std::string(line.substr(0, 200));
        return false;
    }
    if (j.contains("error")) {
        st.failure = "etcd watch: " + error_text(j);
        st.failure_code = grpc_code(j);
        return false;
    }
    const auto r = j.find("result");
    if (r == j.end() || !r->is_object()) {
        return true;
    }
    const json& result = *r;
    if (as_bool(result, "created") && !as_bool(result, "canceled")) {
        st.created = true;
    }
    if (as_bool(result, "canceled")) {
        st.compact_revision = as_int64(result, "compact_revision");
        if (st.compact_revision != 0) {
            st.compacted = true;
        } else {
            const auto reason = result.find("cancel_reason");
            st.failure = "etcd watch: canceled" +
                         (reason != result.end() && reason->is_string() ? ": " + reason->get<std::string>() : "");
        }
        return false;
    }
    const auto events = result.find("events");
    const bool progress = !as_bool(result, "created") && !as_bool(result, "canceled") &&
                          (events == result.end() || !events->is_array() || events->empty());
    if (progress) {  // a progress notification: every event up to its header's revision was sent
        const auto h = result.find("header");
        if (h != result.end() && h->is_object()) {
            st.delivered = std::max(st.delivered, as_int64(*h, "revision"));
        }
    }
    if (events != result.end() && events->is_array()) {
        for (const auto& e : *events) {
            watch_event ev;
            const auto type = e.find("type");
            ev.deleted = type != e.end() && type->is_string() && type->get<std::string>() == "DELETE";
            const auto kv = e.find("kv");
            if (kv != e.end() && kv->is_object()) {
                ev.kv = parse_kv(*kv);
            }
            if (!(*st.on_event)(ev)) {
                st.callback_stopped = true;
                return false;
            }
            st.delivered = std::max(st.delivered, ev.kv.mod_revision);
            if (st.stop->load(std::memory_order_relaxed)) {
                return false;
            }
        }
    }
    return true;
}

auto watch_write(char* data, std::size_t size, std::size_t n, void* user) -> std::size_t {
    auto& st = *static_cast<watch_state*>(user);
    const std::size_t total = size * n;
    try {
        st.buffer.append(data, total);
        std::size_t start = 0;
        for (;;) {
            const std::size_t nl = st.buffer.find('\n', start);
            if (nl == std::string::npos) {
                break;
            }
            const std::string_view line(st.buffer.data() + start, nl - start);
            start = nl + 1;
            if (line.find_first_not_of(" \r\t") == std::string_view::npos) {
                continue;
            }
            if (!watch_line(st, line)) {
                return 0;  // a short count aborts the transfer
            }
        }
        st.buffer.erase(0, start);
        // The gateway may end a message without a newline: try the rest as a whole object.
        if (!st.buffer.empty() && st.buffer.back() == '}' && json::accept(st.buffer)) {
            const std::string line = std::move(st.buffer);
            st.buffer.clear();
            if (!watch_line(st, line)) {
                return 0;
            }
        }
    } catch (const std::exception& e) {
        st.failure = std::string("etcd watch: ") + e.what();
        return 0;
    } catch (...) {
        st.failure = "etcd watch: unknown exception";
        return 0;
    }
    return total;
}

}  // namespace

auto client::watch(std::string_view key, std::int64_t start_revision,
                   const std::function<bool(const watch_event&)>& on_event, const std::atomic<bool>& stop,
                   error_info& err) -> watch_end {
    err.clear();
    // How one stream ended: broken (unreachable, cut, unavailable: the next endpoint), token (etcd
    // refused the token: authenticate again), failed (a refusal any endpoint would repeat).
    enum class stream_end : std::uint8_t { stopped, compacted, broken, token, failed };
    try {
        impl& im = *impl_;
        if (!im.setup_error.empty()) {
            err = fail_transport(im.setup_error);
            return watch_end::failed;
        }
        // One stream on the current endpoint, from `from`; st records how far it got.
        const auto run_stream = [&](std::int64_t from, watch_state& st) -> stream_end {
            const std::string url = im.endpoints[im.current] + "/v3/watch";
            json create = {{"key", b64_encode(key)}, {"progress_notify", true}};
            if (from > 0) {
                create["start_revision"] = std::to_string(from);
            }
            const std::string payload = json{{"create_request", create}}.dump();
            CURL* h = curl_easy_init();
            CURLM* m = curl_multi_init();
            if (h == nullptr || m == nullptr) {
                if (h != nullptr) curl_easy_cleanup(h);
                if (m != nullptr) curl_multi_cleanup(m);
                err = fail_transport("etcd watch: curl init failed");
                return stream_end::failed;
            }
            internal::slist_guard headers;
            char curl_detail[CURL_ERROR_SIZE] = {};
            im.prepare(h, url, payload, headers, true);
            curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curl_detail);
            curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(im.options.timeout.count()));
            curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
            curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 5L);
            curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 2L);
            curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &watch_write);
            curl_easy_setopt(h, CURLOPT_WRITEDATA, &st);
            curl_multi_add_handle(m, h);

            CURLcode result = CURLE_OK;
            bool done = false;
            bool stopped = false;
            bool multi_failed = false;
            while (!done) {
                if (stop.load(std::memory_order_relaxed)) {
                    stopped = true;
                    break;
                }
                int running = 0;
                const CURLMcode mc = curl_multi_perform(m, &running);
                if (mc != CURLM_OK) {
                    err = fail_transport(std::string("etcd watch: ") + curl_multi_strerror(mc));
                    multi_failed = true;
                    break;
                }
                int queued = 0;
                while (CURLMsg* msg = curl_multi_info_read(m, &queued)) {
                    if (msg->msg == CURLMSG_DONE) {
                        result = msg->data.result;
                        done = true;
                    }
                }
                if (done || st.callback_stopped || st.compacted || !st.failure.empty()) {
                    break;
                }
                curl_multi_poll(m, nullptr, 0, 50, nullptr);  // stop is noticed within ~50 ms
            }
            long status = 0;
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
            curl_multi_remove_handle(m, h);
            curl_easy_cleanup(h);
            curl_multi_cleanup(m);

            if (stopped || st.callback_stopped || (stop.load() && st.failure.empty() && !st.compacted)) {
                return stream_end::stopped;
            }
            if (st.compacted) {
                err = internal::compacted_error(key, from, st.compact_revision);
                return stream_end::compacted;
            }
            if (multi_failed) {
                return stream_end::failed;
            }
            if (!st.failure.empty()) {
                // st.failure starts "etcd watch: "; name the endpoint after "etcd watch".
                err = fail_transport(internal::explain("etcd watch " + url + st.failure.substr(10), im.options.auth));
                const auto v = internal::classify(status, st.failure_code, st.failure);
                return v == verdict::token ? stream_end::token
                       : v == verdict::next ? stream_end::broken
                                            : stream_end::failed;
            }
            if (status != 0 && status != 200) {
                err = fail_transport("etcd watch " + url + ": HTTP " + std::to_string(status) + ": " + st.buffer);
                const auto v = internal::classify(status, 0, st.buffer);
                return v == verdict::token ? stream_end::token
                       : v == verdict::refused ? stream_end::failed
                                               : stream_end::broken;
            }
            if (result != CURLE_OK) {
                const bool without_cert = im.options.tls.cert_file.empty();
                err = fail_transport("etcd watch " + internal::curl_failure(url, result, curl_detail, without_cert).substr(5));
            } else {
                err = fail_transport("etcd watch " + url + ": the stream ended");
            }
            return stream_end::broken;
        };

        std::int64_t from = start_revision;
        std::size_t failed_in_row = 0;  // endpoints that failed one after the other
        bool fresh_token = false;       // authenticated again for this stream already
        for (;;) {
            if (!im.authenticate(clock::now() + im.options.timeout, err)) {
                return watch_end::failed;
            }
            watch_state st;
            st.on_event = &on_event;
            st.stop = &stop;
            const stream_end end = run_stream(from, st);
            if (st.delivered > 0 && st.delivered >= from) {
                from = st.delivered + 1;  // resume after what was handed over: nothing lost or repeated
            }
            switch (end) {
                case stream_end::stopped: err.clear(); return watch_end::stopped;
                case stream_end::compacted: return watch_end::compacted;
                case stream_end::failed: return watch_end::failed;
                case stream_end::token:
                    if (fresh_token && !st.created) {
                        return watch_end::failed;
                    }
                    fresh_token = true;
                    im.token.clear();
                    continue;
                case stream_end::broken: break;
            }
            if (st.created) {
                failed_in_row = 0;  // this endpoint served the watch for a while
                fresh_token = false;
            }
            im.current = (im.current + 1) % im.endpoints.size();
            if (++failed_in_row >= im.endpoints.size()) {
                return watch_end::failed;
            }
        }
    } catch (const std::exception& e) {
        err = fail_transport(std::string("etcd watch: ") + e.what());
    } catch (...) {
        err = fail_transport("etcd watch: unknown exception");
    }
    return watch_end::failed;
}

}  // namespace etcd
KEYPLACE_NAMESPACE_END
