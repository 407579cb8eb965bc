// Sizes in messages as people read them: "512 bytes", "132 KiB", "1.5 MiB", "6.27 GiB".
#pragma once

#include <cstdint>
#include <string>

namespace nanort::dc {

// Binary units (1 KiB = 1024 bytes), the largest in which the size is at least 1, with three
// significant digits and trailing zeros dropped: a nonzero size never reads "0" of a unit, and
// one that is a whole number of its unit reads exactly ("200 KiB").
std::string human_size(std::uint64_t bytes);

}  // namespace nanort::dc
