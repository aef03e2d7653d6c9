// ftbench's pictures (plot.hpp): log-log curves per series, drawn by a real renderer, whatever the figures.
#include "ftmpi/bench/plot.hpp"

#include <boost/test/unit_test.hpp>
#include <random>
#include <string>

#include "ftmpi/test/seed.hpp"
#include "ftmpi/test/svg_render.hpp"

using namespace ftmpi::bench;
using ftmpi::test::require_svg_renders;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(plot)

BOOST_AUTO_TEST_CASE(a_curve_per_series_a_panel_per_kernel_and_every_point_titled) {
  Panel lat{"lat", "us, lower is better", {{"ftmpi", {{0, 0.16}, {8, 0.2}, {8192, 1.1}, {1 << 20, 88}}},
                                           {"openmpi", {{0, 0.13}, {8, 0.15}, {8192, 1.3}, {1 << 20, 95}}}}};
  Panel bw{"bw", "MB/s, higher is better", {{"ftmpi", {{8192, 3000}, {1 << 20, 11000}}}}};
  const std::string svg = plot_svg("ftbench: 2 ranks", {lat, bw});
  BOOST_TEST(count(svg, "<polyline") == 3u);
  BOOST_TEST(count(svg, "<circle") == 10u);  // each point, with its <title>
  BOOST_TEST(svg.find("openmpi, 1M B: 95") != std::string::npos);
  BOOST_TEST(svg.find(">lat<") != std::string::npos);
  BOOST_TEST(svg.find(">MB/s, higher is better<") != std::string::npos);
  BOOST_TEST(svg.find(">0<") != std::string::npos);  // the 0-byte point's place on the size axis
  require_svg_renders(svg);
}

BOOST_AUTO_TEST_CASE(what_a_log_scale_cannot_show_is_left_out_and_text_is_escaped) {
  Panel p{"<lat> & \"bw\"", "us", {{"a'b", {{0, 0}, {8, -1}, {64, 2.5}}}, {"empty", {}}}};
  const std::string svg = plot_svg("x < y", {p, Panel{"nothing", "us", {}}});
  BOOST_TEST(count(svg, "<circle") == 1u);
  BOOST_TEST(svg.find("&lt;lat&gt; &amp; &quot;bw&quot;") != std::string::npos);
  BOOST_TEST(svg.find("no figures to draw") != std::string::npos);
  require_svg_renders(svg);
  require_svg_renders(plot_svg("none at all", {}));
}

BOOST_AUTO_TEST_CASE(random_figures_always_render) {
  const std::uint64_t seed = ftmpi::test::seed_for("plot random figures");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    for (int round = 0; round < 3; ++round) {
      std::vector<Panel> panels;
      for (int k = 0; k < 1 + static_cast<int>(random() % 4); ++k) {
        Panel p{"kernel " + std::to_string(k), "unit", {}};
        for (int c = 0; c < 1 + static_cast<int>(random() % 3); ++c) {
          Curve curve{"mpi " + std::to_string(c), {}};
          for (int i = 0; i < static_cast<int>(random() % 24); ++i) {
            const double bytes = random() % 5 == 0 ? 0 : static_cast<double>(1ULL << (random() % 23));
            const double value = std::ldexp(static_cast<double>(random() % 1000), static_cast<int>(random() % 40) - 20);
            curve.points.emplace_back(bytes, value);
          }
          p.curves.push_back(curve);
        }
        panels.push_back(p);
      }
      require_svg_renders(plot_svg("random", panels));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
