#include <nanort/dc/human_size.hpp>

#include <cstdio>
#include <iterator>

namespace nanort::dc {

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit + 1 < static_cast<int>(std::size(units))) {
    value /= 1024;
    ++unit;
  }
  // Two decimals below 10, one below 100, none above: three significant digits.
  const int decimals = value < 10 ? 2 : value < 100 ? 1 : 0;
  char text[48];
  int length = std::snprintf(text, sizeof text, "%.*f", decimals, value);
  if (decimals > 0) {
    while (length > 0 && text[length - 1] == '0') --length;
    if (length > 0 && text[length - 1] == '.') --length;
  }
  return std::string(text, static_cast<std::size_t>(length)) + " " + units[unit];
}

}  // namespace nanort::dc
