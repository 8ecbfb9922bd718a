#include "registry/internal/selectors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/labels/field_selector.h"
#include "api/labels/selector.h"
#include "registry/errors.h"

namespace batchd::registry::internal {

struct ObjectFilter::Impl {
  std::optional<api::labels::LabelSelector> labels;
  std::optional<api::labels::FieldSelector> fields;
};

absl::StatusOr<ObjectFilter> ObjectFilter::Parse(const api::KindDef& k, const std::string& labels,
                                                 const std::string& fields) {
  ObjectFilter f;
  auto impl = std::make_shared<Impl>();
  if (!labels.empty()) {
    auto s = api::labels::LabelSelector::Parse(labels);
    if (!s.ok()) return BadRequest(absl::StrCat("unable to parse requirement: ", s.status().message()));
    impl->labels = std::move(*s);
    f.everything_ = false;
  }
  if (!fields.empty()) {
    auto s = api::labels::FieldSelector::Parse(fields);
    if (!s.ok()) return BadRequest(std::string(s.status().message()));
    for (const auto& field : s->Fields()) {
      bool known = field == "metadata.name" || field == "metadata.namespace" ||
                   std::find(k.selectable_fields.begin(), k.selectable_fields.end(), field) !=
                       k.selectable_fields.end();
      if (!known) {
        return BadRequest(absl::StrCat("field label not supported: ", field));
      }
    }
    impl->fields = std::move(*s);
    f.everything_ = false;
  }
  f.impl_ = std::move(impl);
  return f;
}

bool ObjectFilter::Matches(const CachedObject& o) const {
  if (everything_ || !impl_) return true;
  if (impl_->labels && !impl_->labels->Matches(o.labels())) return false;
  if (impl_->fields) {
    auto getter = [&o](std::string_view field) -> std::optional<std::string> {
      auto it = o.fields().find(std::string(field));
      if (it == o.fields().end()) return std::nullopt;
      return it->second;
    };
    if (!impl_->fields->Matches(getter)) return false;
  }
  return true;
}

}  // namespace batchd::registry::internal
