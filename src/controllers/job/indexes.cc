#include "controllers/job/indexes.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "api/batch/v1/batch_v1.h"

namespace batchd::controllers::job {
namespace {

std::optional<int> ParseNonNegative(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

int AnnotationInt(const api::meta::ObjectMetaView& pod, std::string_view key) {
  std::optional<std::string_view> v = pod.Annotation(key);
  if (!v) return 0;
  return ParseNonNegative(*v).value_or(0);
}

}  // namespace

OrderedIntervals OrderedIntervals::Parse(std::string_view s, int completions) {
  std::vector<std::pair<int, int>> raw;
  if (s.empty()) return {};
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string_view::npos) comma = s.size();
    std::string_view part = s.substr(pos, comma - pos);
    pos = comma + 1;
    size_t dash = part.find('-');
    auto first = ParseNonNegative(part.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseNonNegative(part.substr(dash + 1));
    if (!first || !last || *last < *first || *first >= completions) continue;
    raw.emplace_back(*first, std::min(*last, completions - 1));
  }
  std::sort(raw.begin(), raw.end());
  OrderedIntervals out;
  for (const auto& [a, b] : raw) {
    if (!out.iv_.empty() && a <= out.iv_.back().second + 1) {
      out.iv_.back().second = std::max(out.iv_.back().second, b);
    } else {
      out.iv_.emplace_back(a, b);
    }
  }
  return out;
}

OrderedIntervals OrderedIntervals::With(const std::vector<int>& indexes) const {
  std::vector<std::pair<int, int>> all = iv_;
  for (int ix : indexes) {
    if (ix >= 0) all.emplace_back(ix, ix);
  }
  std::sort(all.begin(), all.end());
  OrderedIntervals out;
  for (const auto& [a, b] : all) {
    if (!out.iv_.empty() && a <= out.iv_.back().second + 1) {
      out.iv_.back().second = std::max(out.iv_.back().second, b);
    } else {
      out.iv_.emplace_back(a, b);
    }
  }
  return out;
}

bool OrderedIntervals::Has(int ix) const {
  auto it = std::upper_bound(iv_.begin(), iv_.end(), std::make_pair(ix, INT32_MAX));
  if (it == iv_.begin()) return false;
  --it;
  return ix >= it->first && ix <= it->second;
}

int OrderedIntervals::Total() const {
  int n = 0;
  for (const auto& [a, b] : iv_) n += b - a + 1;
  return n;
}

std::string OrderedIntervals::String() const {
  std::string out;
  for (const auto& [a, b] : iv_) {
    if (!out.empty()) out += ',';
    if (a == b) {
      absl::StrAppend(&out, a);
    } else if (b == a + 1) {
      absl::StrAppend(&out, a, ",", b);
    } else {
      absl::StrAppend(&out, a, "-", b);
    }
  }
  return out;
}

int OrderedIntervals::CountOverlap(const OrderedIntervals& other) const {
  int n = 0;
  size_t i = 0, j = 0;
  while (i < iv_.size() && j < other.iv_.size()) {
    int lo = std::max(iv_[i].first, other.iv_[j].first);
    int hi = std::min(iv_[i].second, other.iv_[j].second);
    if (hi >= lo) n += hi - lo + 1;
    if (iv_[i].second < other.iv_[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return n;
}

int CompletionIndex(const api::meta::ObjectMetaView& pod) {
  std::optional<std::string_view> v = pod.Annotation(api::batch_v1::kJobCompletionIndexAnnotation);
  if (!v) v = pod.Label(api::batch_v1::kJobCompletionIndexAnnotation);
  if (!v) return kUnknownIndex;
  return ParseNonNegative(*v).value_or(kUnknownIndex);
}

int IndexFailureCount(const api::meta::ObjectMetaView& pod) {
  return AnnotationInt(pod, api::batch_v1::kJobIndexFailureCountAnnotation);
}

int IndexIgnoredFailureCount(const api::meta::ObjectMetaView& pod) {
  return AnnotationInt(pod, api::batch_v1::kJobIndexIgnoredFailureCountAnnotation);
}

}  // namespace batchd::controllers::job
