// Label selectors, as Kubernetes defines them (apimachinery `labels` and
// `metav1.LabelSelector`): the query-string form used by `?labelSelector=`
// (`a=b,c!=d,e in (x,y),f notin (z),g,!h`, also `==`, `gt`/`lt` via `>`/`<`)
// and the struct form used in specs (`matchLabels` + `matchExpressions`).
// Semantics: requirements are ANDed; `!=` and `notin` also match objects
// without the key; an empty selector matches everything; the null selector
// (`Nothing()`) matches nothing. Parse errors reuse Kubernetes' messages.
//
// Thread-safety: immutable after construction; const methods are safe to
// call concurrently.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/field_error.h"

namespace batchd::api::labels {

enum class Operator {
  kIn,
  kNotIn,
  kEquals,        // `=`
  kDoubleEquals,  // `==`
  kNotEquals,     // `!=`
  kExists,
  kDoesNotExist,
  kGreaterThan,  // `>` (integer values; node-affinity style)
  kLessThan,     // `<`
};

struct Requirement {
  std::string key;
  Operator op = Operator::kExists;
  std::vector<std::string> values;  // Sorted and de-duplicated for In/NotIn.

  bool Matches(const std::map<std::string, std::string>& labels) const;
  // `a in (x,y)`, `!a`, `a!=b`, ... as Kubernetes prints it.
  std::string String() const;
};

class LabelSelector {
 public:
  // The empty selector: matches everything.
  LabelSelector() = default;
  static LabelSelector Everything() { return LabelSelector(); }
  static LabelSelector Nothing();
  // Exact-match selector for `set` (Kubernetes' SelectorFromSet; not validated).
  static LabelSelector FromSet(const std::map<std::string, std::string>& set);

  // Parses the query-string syntax. Errors are InvalidArgument with
  // Kubernetes' text, e.g. "unable to parse requirement: found '(', expected:
  // identifier"; keys and values are validated as label keys/values.
  static absl::StatusOr<LabelSelector> Parse(std::string_view selector);

  // Converts a `metav1.LabelSelector` JSON value: null → Nothing(),
  // `{}` → Everything(). Errors (InvalidArgument) hold the field errors
  // `ValidateLabelSelector` reports, joined; call that first for an ErrorList.
  static absl::StatusOr<LabelSelector> FromJson(const Json& selector);

  bool Matches(const std::map<std::string, std::string>& labels) const;
  // Convenience over a `metadata.labels` JSON object (null = no labels).
  bool Matches(const Json& labels_object) const;

  bool Empty() const { return !nothing_ && requirements_.empty(); }
  bool IsNothing() const { return nothing_; }
  // Requirements sorted by key, joined with ","; "" for Everything/Nothing.
  std::string String() const;
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // The value `key` must equal (via `=`, `==` or a one-value `in`), if any.
  std::optional<std::string> RequiresExactMatch(std::string_view key) const;

 private:
  std::vector<Requirement> requirements_;
  bool nothing_ = false;
};

// Validates a `metav1.LabelSelector` JSON value (null is valid) with
// Kubernetes' paths and messages, e.g.
//   spec.selector.matchExpressions[0].values: Required value: must be
//   specified when `operator` is 'In' or 'NotIn'
ErrorList ValidateLabelSelector(const Json& selector, const Path& path);

}  // namespace batchd::api::labels
