// Figures against message size as SVG (plot.hpp).
#include "ftmpi/bench/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "ftmpi/base/svg.hpp"

namespace ftmpi::bench {
namespace {

namespace svg = base::svg;

constexpr double kPanelWidth = 560, kPanelHeight = 340, kLeft = 80, kTop = 60, kGap = 90;
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

std::string size_label(double bytes) {
  if (bytes <= 0) return "0";
  const auto b = static_cast<std::uint64_t>(bytes);
  if (b >= (1u << 20) && b % (1u << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

std::string value_label(double v) {
  char buf[32];
  if (v >= 1) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", v);
  }
  return buf;
}

// One panel at (x0, y0): log-log axes over its points, a curve per series, ticks at powers of ten.
void draw_panel(std::string& o, const Panel& p, double x0, double y0) {
  const double width = kPanelWidth, height = kPanelHeight;
  svg::text(o, x0 + width / 2, y0 - 12, "text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\"",
            svg::escape(p.title));
  svg::text(o, x0 - 58, y0 + height / 2,
            "text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 " + svg::number(x0 - 58) + " " +
                svg::number(y0 + height / 2) + ")\"",
            svg::escape(p.y_label));
  double lo_x = INFINITY, hi_x = 0, lo_y = INFINITY, hi_y = 0;
  bool zero_size = false;
  for (const Curve& c : p.curves) {
    for (const auto& [bytes, value] : c.points) {
      if (!(value > 0) || !std::isfinite(value)) continue;
      if (bytes <= 0) {
        zero_size = true;
      } else {
        lo_x = std::min(lo_x, bytes);
        hi_x = std::max(hi_x, bytes);
      }
      lo_y = std::min(lo_y, value);
      hi_y = std::max(hi_y, value);
    }
  }
  svg::rect(o, x0, y0, width, height, "fill=\"none\" stroke=\"#444444\"");
  if (hi_y <= 0) {
    svg::text(o, x0 + width / 2, y0 + height / 2, "text-anchor=\"middle\" font-size=\"13\"", "no figures to draw");
    return;
  }
  if (hi_x <= 0) lo_x = hi_x = 1;
  // Powers of ten around the values; at least one decade so a flat curve still has an axis.
  const double y_lo = std::pow(10.0, std::floor(std::log10(lo_y)));
  const double y_hi = std::max(std::pow(10.0, std::ceil(std::log10(hi_y))), y_lo * 10);
  const double x_lo = std::log2(lo_x), x_hi = std::max(std::log2(hi_x), x_lo + 1);
  // A 0-byte point sits at the left edge, a little before the smallest size.
  const double zero_room = zero_size ? 40 : 0;
  const auto x_of = [&](double bytes) {
    if (bytes <= 0) return x0 + 10;
    return x0 + zero_room + (std::log2(bytes) - x_lo) / (x_hi - x_lo) * (width - zero_room - 10);
  };
  const auto y_of = [&](double v) {
    return y0 + height - (std::log10(v) - std::log10(y_lo)) / (std::log10(y_hi) - std::log10(y_lo)) * height;
  };
  for (double v = y_lo; v <= y_hi * 1.0001; v *= 10) {
    svg::line(o, x0, y_of(v), x0 + width, y_of(v), "stroke=\"#dddddd\"");
    svg::text(o, x0 - 6, y_of(v) + 4, "text-anchor=\"end\" font-size=\"11\"", svg::escape(value_label(v)));
  }
  // Size ticks every factor of 4 (2^0, 2^2, ...), and 0 when drawn.
  if (zero_size) svg::text(o, x_of(0), y0 + height + 16, "text-anchor=\"middle\" font-size=\"11\"", "0");
  for (int e = static_cast<int>(std::ceil(x_lo)); e <= static_cast<int>(std::floor(x_hi)); ++e) {
    if ((x_hi - x_lo) > 12 && e % 4 != 0) continue;
    if ((x_hi - x_lo) > 6 && e % 2 != 0) continue;
    const double bytes = std::pow(2.0, e);
    svg::line(o, x_of(bytes), y0 + height, x_of(bytes), y0 + height + 4, "stroke=\"#444444\"");
    svg::text(o, x_of(bytes), y0 + height + 16, "text-anchor=\"middle\" font-size=\"11\"", svg::escape(size_label(bytes)));
  }
  svg::text(o, x0 + width / 2, y0 + height + 34, "text-anchor=\"middle\" font-size=\"12\"", "message size (bytes)");
  for (std::size_t k = 0; k < p.curves.size(); ++k) {
    const char* colour = kColours[k % std::size(kColours)];
    std::vector<std::pair<double, double>> points;
    for (const auto& pt : p.curves[k].points) {
      if (pt.second > 0 && std::isfinite(pt.second)) points.push_back(pt);
    }
    std::sort(points.begin(), points.end());
    std::string coords;
    for (const auto& [bytes, value] : points) coords += svg::number(x_of(bytes)) + "," + svg::number(y_of(value)) + " ";
    if (points.size() > 1) {
      o += "<polyline fill=\"none\" stroke=\"" + std::string(colour) + "\" stroke-width=\"2\" points=\"" + coords + "\"/>\n";
    }
    for (const auto& [bytes, value] : points) {
      svg::circle(o, x_of(bytes), y_of(value), colour,
                  "<title>" + svg::escape(p.curves[k].name + ", " + size_label(bytes) + " B: " + value_label(value)) +
                      "</title>",
                  3);
    }
    // The legend, top right inside the panel.
    const double ly = y0 + 16 + 16 * static_cast<double>(k);
    svg::line(o, x0 + width - 150, ly - 4, x0 + width - 130, ly - 4, "stroke=\"" + std::string(colour) + "\" stroke-width=\"2\"");
    svg::text(o, x0 + width - 124, ly, "font-size=\"11\"", svg::escape(p.curves[k].name));
  }
}

}  // namespace

std::string plot_svg(const std::string& title, const std::vector<Panel>& panels) {
  const std::size_t columns = panels.size() > 1 ? 2 : 1;
  const std::size_t rows = std::max<std::size_t>(1, (panels.size() + columns - 1) / columns);
  const double width = kLeft + static_cast<double>(columns) * (kPanelWidth + kGap);
  const double height = kTop + static_cast<double>(rows) * (kPanelHeight + kGap) + 10;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
                  svg::number(width, 0) + "\" height=\"" + svg::number(height, 0) + "\" viewBox=\"0 0 " +
                  svg::number(width, 0) + " " + svg::number(height, 0) + "\" font-family=\"sans-serif\">\n";
  svg::rect(o, 0, 0, width, height, "fill=\"#ffffff\"");
  svg::text(o, kLeft, 28, "font-size=\"17\" font-weight=\"bold\"", svg::escape(title));
  if (panels.empty()) svg::text(o, kLeft, kTop + 20, "font-size=\"13\"", "no figures to draw");
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const double x0 = kLeft + static_cast<double>(i % columns) * (kPanelWidth + kGap);
    const double y0 = kTop + 20 + static_cast<double>(i / columns) * (kPanelHeight + kGap);
    draw_panel(o, panels[i], x0, y0);
  }
  o += "</svg>\n";
  return o;
}

}  // namespace ftmpi::bench
