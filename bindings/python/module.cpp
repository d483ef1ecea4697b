// keyplace's Python module (_keyplace): the functions of bindings/binding.hpp, wrapped. The Python
// package keyplace (keyplace/__init__.py) adds the parts that are only Python: documents built
// from dicts, reports read from JSON, the exception class.
#include "binding.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace py = pybind11;
namespace kb = keyplace::binding;

namespace {

// A key as bytes: a str is its UTF-8 encoding, bytes are themselves.
auto key_view(const py::handle& key) -> std::string_view {
    if (PyUnicode_Check(key.ptr())) {
        if (PyUnicode_IS_COMPACT_ASCII(key.ptr())) {  // ASCII: its bytes are its UTF-8, no call
            return {static_cast<const char*>(PyUnicode_DATA(key.ptr())),
                    static_cast<std::size_t>(PyUnicode_GET_LENGTH(key.ptr()))};
        }
        Py_ssize_t n = 0;
        const char* p = PyUnicode_AsUTF8AndSize(key.ptr(), &n);
        if (p == nullptr) {
            throw py::error_already_set();
        }
        return {p, static_cast<std::size_t>(n)};
    }
    if (PyBytes_Check(key.ptr())) {
        char* p = nullptr;
        Py_ssize_t n = 0;
        if (PyBytes_AsStringAndSize(key.ptr(), &p, &n) != 0) {
            throw py::error_already_set();
        }
        return {p, static_cast<std::size_t>(n)};
    }
    throw py::type_error("a key is str or bytes, not " + std::string(py::str(py::type::of(key).attr("__name__"))));
}

// The UTF-8 encodings of a NumPy 'U' array's n items (UCS-4, `chars` code points each, trailing
// NULs dropped as NumPy reads an item back), one after another in blob, each item's end in ends;
// no Python object and no allocation per item. A code point str cannot encode as UTF-8 (a lone
// surrogate) is refused, naming the item, as str.encode would.
void utf8_of_ucs4(const char* base, std::size_t n, std::size_t chars, std::string& blob, std::vector<std::size_t>& ends) {
    blob.reserve(n * chars);
    ends.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const char* item = base + i * chars * 4;
        const auto at = [item](std::size_t j) {
            std::uint32_t c = 0;
            std::memcpy(&c, item + j * 4, 4);
            return c;
        };
        std::size_t len = chars;
        while (len > 0 && at(len - 1) == 0) {
            --len;
        }
        for (std::size_t j = 0; j < len; ++j) {
            const std::uint32_t c = at(j);
            if (c < 0x80) {
                blob += static_cast<char>(c);
            } else if (c < 0x800) {
                blob += static_cast<char>(0xc0 | (c >> 6));
                blob += static_cast<char>(0x80 | (c & 0x3f));
            } else if (c < 0x10000 && (c < 0xd800 || c > 0xdfff)) {
                blob += static_cast<char>(0xe0 | (c >> 12));
                blob += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
                blob += static_cast<char>(0x80 | (c & 0x3f));
            } else if (c >= 0x10000 && c <= 0x10ffff) {
                blob += static_cast<char>(0xf0 | (c >> 18));
                blob += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
                blob += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
                blob += static_cast<char>(0x80 | (c & 0x3f));
            } else {
                throw py::value_error("key " + std::to_string(i) + " has code point " + std::to_string(c) +
                                      ", which UTF-8 cannot encode");
            }
        }
        ends[i] = blob.size();
    }
}

// Each key's owner, as indices into the snapshot's nodes: a NumPy array of uint32. The keys are a
// sequence of str or bytes, a NumPy array of bytes ('S') or str ('U'), or a NumPy array of
// unsigned 64-bit points. The views are gathered with the interpreter lock held; the lookups run
// without it, so other Python threads run meanwhile.
auto locate_many(const kb::snapshot_ref& s, const py::object& keys) -> py::array_t<std::uint32_t> {
    std::vector<std::string_view> views;
    std::vector<std::string> owned;  // object arrays: their items' bytes, copied
    if (py::isinstance<py::array>(keys)) {
        const auto arr = py::reinterpret_borrow<py::array>(keys);
        if (arr.ndim() != 1) {
            throw py::value_error("locate_many takes a 1-dimensional array, not " + std::to_string(arr.ndim()) +
                                  " dimensions");
        }
        const char kind = arr.dtype().kind();
        const auto n = static_cast<std::size_t>(arr.shape(0));
        py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(n));
        auto* o = out.mutable_data();
        if (kind == 'u' && arr.itemsize() == 8) {
            s.check_points();
            const auto points = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(arr);
            const auto* p = points.data();
            py::gil_scoped_release unlocked;
            for (std::size_t i = 0; i < n; ++i) {
                o[i] = s.owner_index_at(p[i]);
            }
            return out;
        }
        if (kind == 'S') {
            const auto contiguous = py::array::ensure(arr, py::array::c_style);
            const auto width = static_cast<std::size_t>(contiguous.itemsize());
            const auto* base = static_cast<const char*>(contiguous.data());
            views.reserve(n);
            for (std::size_t i = 0; i < n; ++i) {
                const char* k = base + i * width;
                std::size_t len = width;  // NumPy drops trailing NULs when it reads an item back
                while (len > 0 && k[len - 1] == '\0') {
                    --len;
                }
                views.emplace_back(k, len);
            }
            {
                py::gil_scoped_release unlocked;
                s.owners_of(views, std::span<std::uint32_t>(o, n));
            }
            return out;
        }
        if (kind == 'U') {
            // Native byte order first: ensure() does not swap a big-endian ('>U') array's bytes.
            const py::array native = arr.dtype().attr("byteorder").cast<std::string>() == ">"
                                         ? py::array(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")))
                                         : arr;
            const auto contiguous = py::array::ensure(native, py::array::c_style);
            std::string blob;
            std::vector<std::size_t> ends;
            utf8_of_ucs4(static_cast<const char*>(contiguous.data()), n, static_cast<std::size_t>(contiguous.itemsize()) / 4,
                         blob, ends);
            views.reserve(n);
            for (std::size_t i = 0; i < n; ++i) {  // views once the blob no longer moves
                const std::size_t begin = i == 0 ? 0 : ends[i - 1];
                views.emplace_back(blob.data() + begin, ends[i] - begin);
            }
            {
                py::gil_scoped_release unlocked;
                s.owners_of(views, std::span<std::uint32_t>(o, n));
            }
            return out;
        }
        if (kind != 'O') {
            throw py::type_error(std::string("locate_many takes keys as bytes ('S'), str ('U') or uint64 points, not dtype ") +
                                 std::string(py::str(arr.dtype())));
        }
        owned.reserve(n);
        for (const auto& item : arr) {
            owned.emplace_back(key_view(item));  // arr's str items are temporaries: copy their bytes
        }
        views.assign(owned.begin(), owned.end());
        {
            py::gil_scoped_release unlocked;
            s.owners_of(views, std::span<std::uint32_t>(o, n));
        }
        return out;
    }
    // A tuple of the keys (the caller's own, if a tuple; else a new one): it holds a reference to
    // each item, so another thread changing the caller's list while the lookups run without the
    // interpreter lock frees none of the bytes read (an ASCII str's own, another's cached UTF-8).
    const auto seq = py::reinterpret_steal<py::object>(PySequence_Tuple(keys.ptr()));
    if (!seq) {
        throw py::error_already_set();
    }
    const auto n = static_cast<std::size_t>(PyTuple_GET_SIZE(seq.ptr()));
    PyObject** items = &PyTuple_GET_ITEM(seq.ptr(), 0);
    views.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        views.push_back(key_view(items[i]));
    }
    py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(n));
    auto* o = out.mutable_data();
    {
        py::gil_scoped_release unlocked;
        s.owners_of(views, std::span<std::uint32_t>(o, n));
    }
    return out;
}

// The baseline of bench/python_locate.py: the same keys' owners found by a C++ loop over
// std::string keys (copied in before the clock starts), the best of `repeats` runs, in seconds.
auto cxx_owners_seconds(const kb::snapshot_ref& s, const py::list& keys, int repeats) -> double {
    std::vector<std::string> owned;
    owned.reserve(py::len(keys));
    for (const auto& k : keys) {
        owned.emplace_back(key_view(k));
    }
    const std::vector<std::string_view> views(owned.begin(), owned.end());
    std::vector<std::uint32_t> out(views.size());
    double best = 1e300;
    py::gil_scoped_release unlocked;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        s.owners_of(views, out);
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
        best = took.count() < best ? took.count() : best;
    }
    return best;
}

}  // namespace

PYBIND11_MODULE(_keyplace, m) {
    m.doc() = "keyplace: which node owns a key (the C++ library's snapshot layer)";
    static py::exception<kb::failure> error(m, "Error");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) {
                std::rethrow_exception(p);
            }
        } catch (const kb::failure& f) {
            // The package's Error reads these back: (code, reason, message, where).
            const py::tuple args = py::make_tuple(f.code, f.reason, std::string(f.what()), f.where);
            PyErr_SetObject(error.ptr(), args.ptr());
        }
    });

    m.def("version", &kb::version);
    m.def("strategies_json", &kb::strategies_json);
    m.def("movement_json", &kb::movement_json, py::arg("before"), py::arg("after"));
    m.def("plan_json", &kb::plan_json, py::arg("before"), py::arg("after"));
    m.def("_cxx_owners_seconds", &cxx_owners_seconds, py::arg("snapshot"), py::arg("keys"), py::arg("repeats"));

    py::class_<kb::snapshot_ref>(m, "Snapshot")
        .def_static("load", [](std::string_view doc) { return kb::snapshot_ref::load(doc); }, py::arg("document"))
        .def("document", &kb::snapshot_ref::document)
        .def_property_readonly("fingerprint", &kb::snapshot_ref::fingerprint)
        .def_property_readonly("probe", &kb::snapshot_ref::probe)
        .def_property_readonly("in_transition", &kb::snapshot_ref::in_transition)
        .def("__len__", &kb::snapshot_ref::node_count)
        .def("node_id", [](const kb::snapshot_ref& s, std::size_t i) {
            if (i >= s.node_count()) {
                throw py::index_error("node " + std::to_string(i) + " of " + std::to_string(s.node_count()));
            }
            return s.node_id(i);
        })
        .def("owner", [](const kb::snapshot_ref& s, const py::handle& k) { return s.owner(key_view(k)); })
        .def("owner_index", [](const kb::snapshot_ref& s, const py::handle& k) { return s.owner_index(key_view(k)); })
        .def("copies", [](const kb::snapshot_ref& s, const py::handle& k) { return s.copies(key_view(k)); })
        .def("locate_n", [](const kb::snapshot_ref& s, const py::handle& k, std::size_t n) { return s.locate_n(key_view(k), n); })
        .def("write_set", [](const kb::snapshot_ref& s, const py::handle& k) { return s.write_set(key_view(k)); })
        .def("point_of", [](const kb::snapshot_ref& s, const py::handle& k) { return s.point_of(key_view(k)); })
        .def("position_of", [](const kb::snapshot_ref& s, const py::handle& k) { return s.position_of(key_view(k)); })
        .def("owner_at", &kb::snapshot_ref::owner_at)
        .def("copies_at", &kb::snapshot_ref::copies_at)
        .def("owners_across", [](const kb::snapshot_ref& s, std::size_t n) {
            py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(n));
            s.owners_across(std::span<std::uint32_t>(out.mutable_data(), n));
            return out;
        })
        .def("locate_many", &locate_many)
        .def("ownership_json", &kb::snapshot_ref::ownership_json)
        .def("coownership_json", &kb::snapshot_ref::coownership_json);
}
