// Figures against message size as a picture (ftbench --svg): one panel per kernel, one curve per series
// (ftmpi and each MPI it is compared with), both axes logarithmic, labelled, with a legend. Valid SVG 1.1.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ftmpi::bench {

struct Curve {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (message bytes, value); drawn in order of bytes
};

struct Panel {
  std::string title;    // "lat"
  std::string y_label;  // "us, lower is better"
  std::vector<Curve> curves;
};

// Points with a value <= 0 cannot sit on a log scale and are left out; 0-byte messages are drawn at the
// left edge, labelled "0". A panel with no point says so instead of drawing axes.
std::string plot_svg(const std::string& title, const std::vector<Panel>& panels);

}  // namespace ftmpi::bench
