// Field selectors (`?fieldSelector=metadata.name=x,status.phase!=Running`),
// with Kubernetes' `fields.ParseSelector` syntax: comma-separated terms
// `field=value`, `field==value` or `field!=value`; `\`, `,` and `=` in a
// value are escaped with a backslash. A missing field reads as "". Which
// fields a kind supports is the caller's business: `Fields()` lists the ones
// used so the caller can reject unknown ones with its own message.
//
// Thread-safety: immutable after construction; const methods are safe to
// call concurrently.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace batchd::api::labels {

struct FieldRequirement {
  enum class Op { kEquals, kNotEquals };
  std::string field;
  Op op = Op::kEquals;
  std::string value;  // Unescaped.
};

class FieldSelector {
 public:
  // Returns a field's value, or nullopt when the object has no such field
  // (treated as "").
  using Getter = std::function<std::optional<std::string>(std::string_view field)>;

  // Matches everything.
  FieldSelector() = default;

  // Errors are InvalidArgument with Kubernetes' text, e.g.
  // "invalid selector: 'a'; can't understand 'a'".
  static absl::StatusOr<FieldSelector> Parse(std::string_view selector);

  bool Empty() const { return requirements_.empty(); }
  bool Matches(const Getter& getter) const;
  // Terms sorted as Kubernetes sorts them.
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }
  // Distinct field names used, sorted.
  std::vector<std::string> Fields() const;
  // The value `field` must equal, if a term requires one (e.g. the
  // `metadata.name=x` of `kubectl get job x --watch`).
  std::optional<std::string> RequiresExactMatch(std::string_view field) const;
  // Canonical text with values re-escaped, e.g. "metadata.name=x,spec.a!=b".
  std::string String() const;

 private:
  std::vector<FieldRequirement> requirements_;
};

}  // namespace batchd::api::labels
