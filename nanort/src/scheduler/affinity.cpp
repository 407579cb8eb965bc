#include "affinity.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace nanort::rt {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool valid_score(double score) { return std::isfinite(score) && score > 0; }

}  // namespace

std::optional<std::string> AffinityTable::parse(std::string_view text) {
  struct Entry {
    std::string task, place;
    double score;
  };
  std::vector<Entry> entries;
  while (!text.empty()) {
    const std::size_t end = text.find(';');
    const std::string_view group = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (group.empty()) continue;
    const std::size_t colon = group.find(':');
    const std::string_view task = trim(group.substr(0, colon));
    if (colon == std::string_view::npos || task.empty())
      return "'" + std::string(group) + "' is not TASK:PLACE=SCORE,...";
    std::string_view places = group.substr(colon + 1);
    while (!places.empty()) {
      const std::size_t comma = places.find(',');
      const std::string_view item = trim(places.substr(0, comma));
      places = comma == std::string_view::npos ? std::string_view() : places.substr(comma + 1);
      const std::size_t equals = item.find('=');
      const std::string_view place = trim(item.substr(0, equals));
      if (equals == std::string_view::npos || place.empty())
        return "'" + std::string(item) + "' (task '" + std::string(task) + "') is not PLACE=SCORE";
      const std::string number(trim(item.substr(equals + 1)));
      char *stop = nullptr;
      const double score = std::strtod(number.c_str(), &stop);
      if (number.empty() || *stop != '\0' || !valid_score(score))
        return "the score '" + number + "' of " + std::string(task) + " on " + std::string(place) +
               " is not a positive number";
      entries.push_back({std::string(task), std::string(place), score});
    }
  }
  for (const Entry &e : entries) set(e.task, e.place, e.score);
  return std::nullopt;
}

bool AffinityTable::set(std::string_view task, std::string_view place, double score) {
  if (task.empty() || place.empty() || !valid_score(score)) return false;
  std::lock_guard lock(mutex_);
  scores_[std::string(task)][std::string(place)] = score;
  empty_.store(false, std::memory_order_release);
  return true;
}

bool AffinityTable::has(const char *task) const {
  if (empty() || !task) return false;
  std::lock_guard lock(mutex_);
  return scores_.find(std::string_view(task)) != scores_.end();
}

double AffinityTable::score(const char *task, std::string_view kind,
                            std::string_view device) const {
  if (empty() || !task) return 0;
  std::lock_guard lock(mutex_);
  const auto found = scores_.find(std::string_view(task));
  if (found == scores_.end()) return 0;
  if (auto it = found->second.find(device); it != found->second.end()) return it->second;
  if (auto it = found->second.find(kind); it != found->second.end()) return it->second;
  return 0;
}

}  // namespace nanort::rt
