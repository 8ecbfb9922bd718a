// Field errors: the validation result type, in Kubernetes' shape. A list of
// `FieldError`s becomes a `422 Invalid` Status whose `details.causes` carry
// `{reason, message, field}` and whose message reads like Kubernetes':
//   Job.batch "x" is invalid: spec.template.spec.containers[0].name: Required value
#pragma once

#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace batchd::api {

using Json = nlohmann::json;

// A field path like `spec.template.spec.containers[0].name`, built fluently:
//   Path("spec").Child("containers").Index(0).Child("name")
class Path {
 public:
  Path() = default;
  explicit Path(std::string root) : s_(std::move(root)) {}
  Path Child(std::string_view name) const {
    return Path(s_.empty() ? std::string(name) : s_ + "." + std::string(name));
  }
  Path Index(size_t i) const { return Path(s_ + "[" + std::to_string(i) + "]"); }
  Path Key(std::string_view k) const { return Path(s_ + "[" + std::string(k) + "]"); }
  const std::string& String() const { return s_; }

 private:
  std::string s_;
};

struct FieldError {
  enum class Type { kRequired, kInvalid, kNotSupported, kDuplicate, kForbidden, kTooLong, kTooMany, kNotFound };
  Type type = Type::kInvalid;
  std::string field;
  Json bad_value;          // Shown for kInvalid/kNotSupported/kDuplicate.
  std::string detail;
  std::vector<std::string> supported;  // For kNotSupported.

  // "FieldValueRequired", "FieldValueInvalid", ...
  std::string Reason() const;
  // `spec.x: Invalid value: 3: must be greater than or equal to 0`
  std::string Message() const;
  // The message without the leading field path, as in `details.causes[].message`.
  std::string CauseMessage() const;
};

using ErrorList = std::vector<FieldError>;

FieldError Required(const Path& p, std::string detail = "");
FieldError Invalid(const Path& p, Json value, std::string detail);
FieldError NotSupported(const Path& p, Json value, std::vector<std::string> supported);
FieldError Duplicate(const Path& p, Json value);
FieldError Forbidden(const Path& p, std::string detail);
FieldError TooLong(const Path& p, Json value, size_t max);
FieldError TooMany(const Path& p, size_t actual, size_t max);

// Moves the errors of `more` to the end of `to`.
inline void AppendErrors(ErrorList& to, ErrorList more) {
  to.insert(to.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

// "a: Required value, b: Invalid value: ..." or "[a: ..., b: ...]" as Kubernetes
// aggregates several errors.
std::string JoinMessages(const ErrorList& errs);

}  // namespace batchd::api
