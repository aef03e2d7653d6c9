// Text the tools print for operators: tables with aligned columns, byte counts and rates in units.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ftmpi::base {

// Columns padded to their widest cell; the last column is not padded.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string text() const {
    std::vector<std::size_t> width;
    for (const auto& row : rows_) {
      if (width.size() < row.size()) width.resize(row.size(), 0);
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out;
    for (const auto& row : rows_) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        out += row[i];
        if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 2, ' ');
      }
      out += "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "1.5 MB" (binary units, as ftpath and ftinject print sizes).
inline std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
}

// "812.3 MB/s" (decimal units, as network rates are quoted); a rate that is not finite reads 0.
inline std::string human_rate(double bytes_per_second) {
  if (!std::isfinite(bytes_per_second)) bytes_per_second = 0;
  char buf[32];
  if (bytes_per_second >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.1f GB/s", bytes_per_second / 1e9);
  } else if (bytes_per_second >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f MB/s", bytes_per_second / 1e6);
  } else if (bytes_per_second >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.1f kB/s", bytes_per_second / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B/s", bytes_per_second);
  }
  return buf;
}

}  // namespace ftmpi::base
