// keyplace's WebAssembly module (keyplace_wasm.mjs): the functions of bindings/binding.hpp for
// embind. No C++ exception crosses into JavaScript: a refusal comes back as an object
// {error: {code, reason, message, where}}, which keyplace.mjs turns into a KeyplaceError, so
// the module needs nothing of emscripten's exception support beyond catching in C++.
#include "binding.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kb = keyplace::binding;
using emscripten::val;

namespace {

auto error_object(const kb::failure& f) -> val {
    val e = val::object();
    e.set("code", f.code);
    e.set("reason", f.reason);
    e.set("message", std::string(f.what()));
    e.set("where", f.where);
    val out = val::object();
    out.set("error", e);
    return out;
}

// Runs f, returning its value, or the refusal as an error object.
template <class F>
auto guarded(F&& f) -> val {
    try {
        return f();
    } catch (const kb::failure& e) {
        return error_object(e);
    } catch (const std::exception& e) {  // std::bad_alloc and the like: reported, never an abort
        return error_object(kb::failure(keyplace::error_info(keyplace::errc::out_of_memory, e.what())));
    }
}

auto strings(const std::vector<std::string>& v) -> val {
    val a = val::array();
    for (std::size_t i = 0; i < v.size(); ++i) {
        a.set(i, v[i]);
    }
    return a;
}

// A copy of out as a new Uint32Array (the view into the module's memory would not survive it
// growing).
auto uint32_array(const std::vector<std::uint32_t>& v) -> val {
    return val::global("Uint32Array").new_(emscripten::typed_memory_view(v.size(), v.data()));
}

auto load(const std::string& doc) -> val {
    return guarded([&] { return val(kb::snapshot_ref::load(doc)); });
}

auto locate_n(const kb::snapshot_ref& s, const std::string& key, std::size_t n) -> val {
    return guarded([&] { return strings(s.locate_n(key, n)); });
}

// keys: a JavaScript array of strings (each hashed as its UTF-8 bytes).
auto locate_many(const kb::snapshot_ref& s, const val& keys) -> val {
    return guarded([&] {
        const auto owned = emscripten::vecFromJSArray<std::string>(keys);
        const std::vector<std::string_view> views(owned.begin(), owned.end());
        std::vector<std::uint32_t> out(views.size());
        s.owners_of(views, out);
        return uint32_array(out);
    });
}

auto owners_across(const kb::snapshot_ref& s, std::size_t n) -> val {
    return guarded([&] {
        std::vector<std::uint32_t> out(n);
        s.owners_across(out);
        return uint32_array(out);
    });
}

auto owner_at(const kb::snapshot_ref& s, std::uint64_t point) -> val {
    return guarded([&] { return val(s.owner_at(point)); });
}

auto copies_at(const kb::snapshot_ref& s, std::uint64_t point) -> val {
    return guarded([&] { return strings(s.copies_at(point)); });
}

// A movement or a plan can need much memory (a plan between tables of coprime sizes has their
// product's residues): a failure comes back as an error object, like a refused document.
auto movement(const kb::snapshot_ref& a, const kb::snapshot_ref& b) -> val {
    return guarded([&] { return val(kb::movement_json(a, b)); });
}
auto plan(const kb::snapshot_ref& a, const kb::snapshot_ref& b) -> val {
    return guarded([&] { return val(kb::plan_json(a, b)); });
}

}  // namespace

EMSCRIPTEN_BINDINGS(keyplace) {
    using namespace emscripten;
    function("version", &kb::version);
    function("strategiesJson", &kb::strategies_json);
    function("load", &load);
    function("movementJson", &movement);
    function("planJson", &plan);
    class_<kb::snapshot_ref>("Snapshot")
        // Lambdas, not member pointers: embind 3.1.6 cannot register a noexcept member function.
        .function("document", optional_override([](const kb::snapshot_ref& s) { return s.document(); }))
        .function("fingerprint", optional_override([](const kb::snapshot_ref& s) { return s.fingerprint(); }))
        .function("probe", optional_override([](const kb::snapshot_ref& s) { return s.probe(); }))
        .function("inTransition", optional_override([](const kb::snapshot_ref& s) { return s.in_transition(); }))
        .function("nodeCount", optional_override([](const kb::snapshot_ref& s) { return s.node_count(); }))
        .function("owner", optional_override([](const kb::snapshot_ref& s, const std::string& k) { return s.owner(k); }))
        .function("ownerIndex", optional_override([](const kb::snapshot_ref& s, const std::string& k) { return s.owner_index(k); }))
        .function("copies", optional_override([](const kb::snapshot_ref& s, const std::string& k) { return strings(s.copies(k)); }))
        .function("writeSet", optional_override([](const kb::snapshot_ref& s, const std::string& k) { return strings(s.write_set(k)); }))
        .function("locateN", &locate_n)
        .function("pointOf", optional_override([](const kb::snapshot_ref& s, const std::string& k) { return s.point_of(k); }))
        .function("pictureSpace", optional_override([](const kb::snapshot_ref& s) {
                      const auto [modulus, bits] = s.picture_space();
                      val o = val::object();
                      o.set("modulus", static_cast<double>(modulus));  // table sizes fit a double
                      o.set("bits", bits);
                      return o;
                  }))
        .function("positionOf", optional_override([](const kb::snapshot_ref& s, const std::string& k) { return s.position_of(k); }))
        .function("ownerAt", &owner_at)
        .function("copiesAt", &copies_at)
        .function("locateMany", &locate_many)
        .function("ownersAcross", &owners_across)
        .function("ownershipJson", optional_override([](const kb::snapshot_ref& s) { return s.ownership_json(); }))
        .function("coownershipJson", optional_override([](const kb::snapshot_ref& s) { return s.coownership_json(); }));
}
