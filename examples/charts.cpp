// Writes the README's charts as SVG (our own small writer, no plotting dependency):
//   balance.svg     the largest node's share over the mean vs points per node, 10 and 100 nodes
//   coownership.svg the fraction of node pairs that share a replica set (100 nodes, 3 copies)
//   movement.svg    moved fraction against the minimum for every strategy, one join and one leave
//   chosen.svg      the largest node's share over the mean against tokens per node, 100 nodes:
//                   random (the ring's hashed points) against allocated (token_allocation.hpp)
// Usage: keyplace-charts DIR. Output is deterministic; the tests compare it with examples/charts.
#include <keyplace/keyplace.hpp>
#include <keyplace/token_allocation.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr double width = 640;
constexpr double height = 400;
constexpr double left = 70;
constexpr double right = 170;
constexpr double top = 40;
constexpr double bottom = 60;
const char* const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

auto num(double v, int digits = 3) -> std::string {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

struct series {
    std::string label;
    std::vector<std::pair<double, double>> points;  // x, y
    bool dashed = false;
};

struct svg {
    std::string body;
    void text(double x, double y, const std::string& s, const char* anchor = "middle", int size = 12) {
        body += "<text x=\"" + num(x, 1) + "\" y=\"" + num(y, 1) + "\" font-size=\"" + std::to_string(size) +
                "\" text-anchor=\"" + anchor + "\" font-family=\"sans-serif\">" + s + "</text>\n";
    }
    void line(double x1, double y1, double x2, double y2, const char* color, double w = 1, bool dashed = false) {
        body += "<line x1=\"" + num(x1, 1) + "\" y1=\"" + num(y1, 1) + "\" x2=\"" + num(x2, 1) + "\" y2=\"" +
                num(y2, 1) + "\" stroke=\"" + color + "\" stroke-width=\"" + num(w, 1) + "\"" +
                (dashed ? " stroke-dasharray=\"5,4\"" : "") + "/>\n";
    }
    void rect(double x, double y, double w, double h, const char* color, bool hollow = false) {
        body += "<rect x=\"" + num(x, 1) + "\" y=\"" + num(y, 1) + "\" width=\"" + num(w, 1) + "\" height=\"" +
                num(h, 1) + "\" " + (hollow ? std::string("fill=\"none\" stroke=\"") + color + "\" stroke-width=\"2\""
                                           : std::string("fill=\"") + color + "\"") +
                "/>\n";
    }
    void save(const std::string& path, const std::string& title) const {
        std::ofstream out(path, std::ios::binary);
        out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
            << "\" viewBox=\"0 0 " << width << " " << height << "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
            << "<text x=\"" << width / 2 << "\" y=\"22\" font-size=\"15\" text-anchor=\"middle\" font-family=\"sans-serif\">"
            << title << "</text>\n"
            << body << "</svg>\n";
    }
};

// A line chart with a log2 x axis.
void line_chart(const std::string& path, const std::string& title, const std::string& xlabel, const std::string& ylabel,
                const std::vector<series>& all, double ymin, double ymax, const std::vector<double>& xticks,
                const std::vector<double>& yticks) {
    svg g;
    const double x0 = std::log2(xticks.front());
    const double x1 = std::log2(xticks.back());
    auto px = [&](double x) { return left + (std::log2(x) - x0) / (x1 - x0) * (width - left - right); };
    auto py = [&](double y) { return height - bottom - (y - ymin) / (ymax - ymin) * (height - top - bottom); };
    for (const double t : yticks) {
        g.line(left, py(t), width - right, py(t), "#dddddd");
        g.text(left - 6, py(t) + 4, num(t, 2), "end");
    }
    for (const double t : xticks) {
        g.text(px(t), height - bottom + 16, num(t, 0));
    }
    g.line(left, height - bottom, width - right, height - bottom, "black");
    g.line(left, top, left, height - bottom, "black");
    g.text((left + width - right) / 2, height - 18, xlabel);
    g.body += "<text x=\"16\" y=\"" + num((top + height - bottom) / 2, 1) +
              "\" font-size=\"12\" text-anchor=\"middle\" font-family=\"sans-serif\" transform=\"rotate(-90 16 " +
              num((top + height - bottom) / 2, 1) + ")\">" + ylabel + "</text>\n";
    for (std::size_t s = 0; s < all.size(); ++s) {
        const char* color = colors[s % 6];
        for (std::size_t i = 1; i < all[s].points.size(); ++i) {
            const auto [xa, ya] = all[s].points[i - 1];
            const auto [xb, yb] = all[s].points[i];
            g.line(px(xa), py(ya), px(xb), py(yb), color, 2, all[s].dashed);
        }
        g.line(width - right + 12, top + 16 + 20.0 * static_cast<double>(s), width - right + 34,
               top + 16 + 20.0 * static_cast<double>(s), color, 2, all[s].dashed);
        g.text(width - right + 40, top + 20 + 20.0 * static_cast<double>(s), all[s].label, "start", 11);
    }
    g.save(path, title);
}

auto make_nodes(std::size_t n, const std::string& prefix) -> std::vector<keyplace::node> {
    std::vector<keyplace::node> nodes;
    for (std::size_t i = 0; i < n; ++i) {
        nodes.push_back({prefix + std::to_string(i)});
    }
    return nodes;
}

const std::vector<double> vnode_ticks{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

void balance_chart(const std::string& dir) {
    std::vector<series> all;
    for (const std::size_t n : {10U, 100U}) {
        series measured{std::to_string(n) + " nodes", {}, false};
        series theory{std::to_string(n) + ": 1+sqrt(2lnN/v)", {}, true};
        for (const double v : vnode_ticks) {
            double largest = 0;
            const int rings = 4;  // averaged over rings of different ids
            for (int t = 0; t < rings; ++t) {
                std::string prefix = "r";  // built in steps: GCC 12 -O3 warns falsely (-Wrestrict) on "r" + s + "-"
                prefix += std::to_string(t);
                prefix += '-';
                const auto r = keyplace::ring::build(make_nodes(n, prefix), {.vnodes = static_cast<std::uint32_t>(v)});
                const auto share = keyplace::ownership(r).share;
                largest += *std::max_element(share.begin(), share.end()) * static_cast<double>(n);
            }
            measured.points.emplace_back(v, largest / rings);
            theory.points.emplace_back(v, 1 + std::sqrt(2 * std::log(static_cast<double>(n)) / v));
        }
        all.push_back(measured);
        all.push_back(theory);
    }
    for (auto& s : all) {  // clip the theory curve to the chart
        for (auto& p : s.points) {
            p.second = std::min(p.second, 6.0);
        }
    }
    line_chart(dir + "/balance.svg", "Largest node's share of the ring over the mean", "points per node (vnodes)",
               "max share / mean share", all, 1, 6, vnode_ticks, {1, 2, 3, 4, 5, 6});
}

void coownership_chart(const std::string& dir) {
    series s{"100 nodes, 3 copies", {}, false};
    const auto nodes = make_nodes(100, "node-");
    for (const double v : vnode_ticks) {
        const auto r = std::make_shared<const keyplace::ring>(
            keyplace::ring::build(nodes, {.vnodes = static_cast<std::uint32_t>(v)}));
        const auto c = keyplace::coownership(keyplace::replica_placer<keyplace::ring>::build(r, {.count = 3}));
        s.points.emplace_back(v, c.pair_fraction);
    }
    line_chart(dir + "/coownership.svg", "Node pairs that share a replica set (copysets)", "points per node (vnodes)",
               "fraction of node pairs", {s}, 0, 1, vnode_ticks, {0, 0.25, 0.5, 0.75, 1});
}

template <class S>
auto moves(const S& ten, const S& eleven, const S& nine) -> std::pair<keyplace::movement_report, keyplace::movement_report> {
    return {keyplace::movement(ten, eleven), keyplace::movement(ten, nine)};
}

void movement_chart(const std::string& dir) {
    const auto ten = make_nodes(10, "node-");
    const auto eleven = make_nodes(11, "node-");
    const auto nine = make_nodes(9, "node-");
    using keyplace::jump, keyplace::maglev, keyplace::modulo, keyplace::rendezvous, keyplace::ring;
    const std::vector<std::pair<std::string, std::pair<keyplace::movement_report, keyplace::movement_report>>> rows{
        {"ring", moves(ring::build(ten), ring::build(eleven), ring::build(nine))},
        {"rendezvous", moves(rendezvous::build(ten), rendezvous::build(eleven), rendezvous::build(nine))},
        {"jump", moves(jump::build(ten), jump::build(eleven), jump::build(nine))},
        {"maglev", moves(maglev::build(ten), maglev::build(eleven), maglev::build(nine))},
        {"modulo", moves(modulo::build(ten), modulo::build(eleven), modulo::build(nine))},
    };
    svg g;
    const double plot_w = width - left - right;
    const double plot_h = height - top - bottom;
    auto py = [&](double f) { return height - bottom - f / 0.20 * plot_h; };  // 0 .. 20%, clipped
    for (const double t : {0.0, 0.05, 0.10, 0.15, 0.20}) {
        g.line(left, py(t), width - right, py(t), "#dddddd");
        g.text(left - 6, py(t) + 4, num(100 * t, 0) + "%", "end");
    }
    const double group = plot_w / static_cast<double>(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double x = left + group * static_cast<double>(i);
        const keyplace::movement_report* r[] = {&rows[i].second.first, &rows[i].second.second};
        for (int k = 0; k < 2; ++k) {
            const double bx = x + group * (0.12 + 0.4 * k);
            const double bw = group * 0.34;
            const double moved = std::min(r[k]->moved, 0.20);
            g.rect(bx, py(moved), bw, py(0) - py(moved), colors[k]);
            g.rect(bx, py(r[k]->minimum), bw, py(0) - py(r[k]->minimum), "black", true);
            if (r[k]->moved > 0.20) {  // clipped: label inside the bar
                g.body += "<text x=\"" + num(bx + bw / 2, 1) + "\" y=\"" + num(py(moved) + 14 + 12.0 * k, 1) +
                          "\" font-size=\"10\" text-anchor=\"middle\" font-family=\"sans-serif\" fill=\"white\">" +
                          num(100 * r[k]->moved, 0) + "%</text>\n";
            } else {
                g.text(bx + bw / 2, py(moved) - 4, num(100 * r[k]->moved, 1) + "%", "middle", 10);
            }
        }
        g.text(x + group / 2, height - bottom + 16, rows[i].first);
    }
    g.line(left, height - bottom, width - right, height - bottom, "black");
    g.rect(width - right + 12, top + 8, 14, 12, colors[0]);
    g.text(width - right + 32, top + 18, "join 10 -> 11", "start", 11);
    g.rect(width - right + 12, top + 28, 14, 12, colors[1]);
    g.text(width - right + 32, top + 38, "leave 10 -> 9", "start", 11);
    g.rect(width - right + 12, top + 48, 14, 12, "black", true);
    g.text(width - right + 32, top + 58, "minimum", "start", 11);
    g.text(width - right + 12, top + 80, "bars cut at 20%", "start", 10);
    g.text((left + width - right) / 2, height - 18, "exact for ring and maglev; 131072 fixed points otherwise");
    g.save(dir + "/movement.svg", "Keys moved on one join and one leave, against the minimum");
}

/// The largest node's share over the mean: of the keys it owns (rf 1), or of the copies it holds.
template <class S>
auto max_over_mean(const S& s, std::size_t rf) -> double {
    std::vector<double> share;
    if (rf == 1) {
        share = keyplace::ownership(s).share;
    } else {
        const auto placer = keyplace::replica_placer<S>::build(std::make_shared<const S>(s), {.count = rf});
        for (const auto& m : keyplace::replicated_measure(placer)) {
            share.push_back(keyplace::detail::to_double(m));
        }
    }
    double sum = 0;
    for (const double x : share) {
        sum += x;
    }
    return *std::max_element(share.begin(), share.end()) / (sum / static_cast<double>(share.size()));
}

const std::vector<double> token_ticks{1, 2, 4, 8, 16, 32, 64, 128, 256};

void chosen_chart(const std::string& dir) {
    std::vector<series> all;
    const auto nodes = make_nodes(100, "node-");
    for (const std::size_t rf : {1U, 3U}) {
        series random{"random, RF " + std::to_string(rf), {}, true};
        series allocated{"allocated, RF " + std::to_string(rf), {}, false};
        for (const double t : token_ticks) {
            const auto v = static_cast<std::uint32_t>(t);
            random.points.emplace_back(t, max_over_mean(keyplace::ring::build(nodes, {.vnodes = v}), rf));
            // Grown node by node, each joiner's tokens chosen for the ring so far.
            std::vector<keyplace::token_holder> ring;
            for (const auto& n : nodes) {
                auto tokens = keyplace::allocate_tokens(ring, n, v, {.factor = static_cast<std::uint32_t>(rf)}, 1);
                ring.push_back({n, std::move(tokens)});
            }
            std::vector<keyplace::ring_point<std::uint64_t>> points;
            for (std::uint32_t i = 0; i < ring.size(); ++i) {
                for (const auto p : ring[i].tokens) {
                    points.push_back({p, i});
                }
            }
            allocated.points.emplace_back(
                t, max_over_mean(keyplace::token_ring::build(nodes, keyplace::compat::given_points<std::uint64_t>(points)),
                                 rf));
        }
        all.push_back(random);
        all.push_back(allocated);
    }
    for (auto& s : all) {
        for (auto& p : s.points) {
            p.second = std::min(p.second, 4.0);
        }
    }
    line_chart(dir + "/chosen.svg", "Largest node's share over the mean, 100 nodes: random vs allocated tokens",
               "tokens per node", "max share / mean share", all, 1, 4, token_ticks, {1, 1.5, 2, 2.5, 3, 3.5, 4});
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: keyplace-charts DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    balance_chart(dir);
    coownership_chart(dir);
    movement_chart(dir);
    chosen_chart(dir);
    std::printf("wrote %s/balance.svg, coownership.svg, movement.svg, chosen.svg\n", dir.c_str());
    return 0;
}
