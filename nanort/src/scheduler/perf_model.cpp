#include "perf_model.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace nanort::rt {

namespace {
constexpr const char *kHeader = "nanort performance model 1";
}

int PerfModel::size_class(std::uint64_t bytes) {
  int size = 0;
  while (bytes > 1) {
    bytes >>= 1;
    ++size;
  }
  return size;
}

bool PerfModel::record(const PerfKey &key, double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return false;
  std::lock_guard<std::mutex> guard(mutex_);
  Stats &s = stats_[key];
  if (!s.warmed) {
    s.warmed = true;
    return false;
  }
  if (s.count >= kCalibration && s.mean > 0 && seconds > s.mean * kOutlierRatio) {
    ++s.rejected;
    return false;
  }
  ++s.count;
  const double delta = seconds - s.mean;
  s.mean += delta / static_cast<double>(s.count);
  s.m2 += delta * (seconds - s.mean);
  return true;
}

bool PerfModel::calibrated(const PerfKey &key) const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = stats_.find(key);
  return it != stats_.end() && it->second.count >= kCalibration;
}

std::size_t PerfModel::keys() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return stats_.size();
}

std::optional<double> PerfModel::expected(const PerfKey &key) const {
  std::lock_guard<std::mutex> guard(mutex_);
  if (const auto it = stats_.find(key); it != stats_.end() && it->second.count >= kCalibration)
    return it->second.mean;
  // The nearest calibrated size of the same task and place, scaled by the size ratio.
  PerfKey first{key.task, key.place, -1};
  std::optional<double> best;
  int best_distance = 0;
  for (auto it = stats_.lower_bound(first);
       it != stats_.end() && it->first.task == key.task && it->first.place == key.place; ++it) {
    if (it->second.count < kCalibration) continue;
    const int distance = std::abs(it->first.size_class - key.size_class);
    if (!best || distance < best_distance) {
      best = std::ldexp(it->second.mean, key.size_class - it->first.size_class);
      best_distance = distance;
    }
  }
  return best;
}

bool PerfModel::load(const std::string &path, std::string &why) {
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) return true;  // nothing learnt yet here
  std::ifstream in(path);
  if (!in) {
    why = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string line;
  if (!std::getline(in, line) || line != kHeader) {
    why = path + " is not a nanort performance model (first line: '" + line + "')";
    return false;
  }
  std::map<PerfKey, Stats> loaded;
  for (int number = 2; std::getline(in, line); ++number) {
    // task \t place \t size_class \t count \t mean \t m2 \t rejected
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    PerfKey key;
    Stats s;
    char *end = nullptr;
    bool ok = fields.size() == 7;
    if (ok) {
      key.task = fields[0];
      key.place = fields[1];
      key.size_class = static_cast<int>(std::strtol(fields[2].c_str(), &end, 10));
      ok = *end == '\0' && key.size_class >= 0 && key.size_class < 64;
    }
    if (ok) {
      s.count = std::strtoull(fields[3].c_str(), &end, 10);
      ok = *end == '\0';
    }
    if (ok) {
      s.mean = std::strtod(fields[4].c_str(), &end);
      ok = *end == '\0' && std::isfinite(s.mean) && s.mean >= 0;
    }
    if (ok) {
      s.m2 = std::strtod(fields[5].c_str(), &end);
      ok = *end == '\0' && std::isfinite(s.m2) && s.m2 >= 0;
    }
    if (ok) {
      s.rejected = std::strtoull(fields[6].c_str(), &end, 10);
      ok = *end == '\0';
    }
    if (!ok || key.task.empty() || key.place.empty()) {
      why = path + ":" + std::to_string(number) + " is damaged";
      return false;
    }
    loaded[key] = s;
  }
  std::lock_guard<std::mutex> guard(mutex_);
  stats_ = std::move(loaded);
  return true;
}

bool PerfModel::save(const std::string &path, std::string &why) const {
  std::error_code error;
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), error);
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) {
      why = "cannot write " + temporary + ": " + std::strerror(errno);
      return false;
    }
    out << kHeader << '\n';
    std::lock_guard<std::mutex> guard(mutex_);
    char number[64];
    for (const auto &[key, s] : stats_) {
      if (key.task.find_first_of("\t\n") != std::string::npos ||
          key.place.find_first_of("\t\n") != std::string::npos)
        continue;  // (labels with tabs or newlines are not kept)
      out << key.task << '\t' << key.place << '\t' << key.size_class << '\t' << s.count << '\t';
      std::snprintf(number, sizeof number, "%.17g\t", s.mean);
      out << number;
      std::snprintf(number, sizeof number, "%.17g\t", s.m2);
      out << number << s.rejected << '\n';
    }
    if (!out.flush()) {
      why = "writing " + temporary + " failed";
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    why = "cannot rename " + temporary + " to " + path + ": " + error.message();
    std::filesystem::remove(temporary, error);
    return false;
  }
  return true;
}

std::string default_perf_model_path() {
  if (const char *value = std::getenv("NANORT_PERF_MODEL")) {
    const std::string path = value;
    return path == "off" ? "" : path;
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::strcpy(host, "localhost");
  std::string folder;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    folder = std::string(xdg) + "/nanort/perfmodels";
  else if (const char *home = std::getenv("HOME"); home != nullptr && home[0] != '\0')
    folder = std::string(home) + "/.cache/nanort/perfmodels";
  else
    return "";
  return folder + "/" + host + ".model";
}

}  // namespace nanort::rt
