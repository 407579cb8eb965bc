// Uses the C++ header and the directory-cache headers from the installed package.
#include <nanort/dc/region.hpp>
#include <nanort/nanort.hpp>

#include <cstdio>

int main() {
  int value = 0;
  nanort::task("set").out(&value).spawn([&value] { value = 41; });
  nanort::task("inc").inout(&value).spawn([&value] { ++value; });
  nanort::taskwait();
  auto region = nanort::dc::Region::contiguous(&value, sizeof value);
  std::printf("value %d, region of %zu bytes\n", value, region.bytes());
  return value == 42 && region.bytes() == sizeof value ? 0 : 1;
}
