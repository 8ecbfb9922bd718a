// Kubernetes name and label format checks (apimachinery `util/validation`),
// with the exact messages Kubernetes returns, so a `422 Invalid` from batchd
// reads like one from kube-apiserver. Each check returns the list of reasons
// a value is invalid; an empty list means valid.
//
// Thread-safety: stateless pure functions, safe from any thread.
// The checks are hand-written (no std::regex) because they run on every write.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace batchd::api::validation {

inline constexpr size_t kDNS1123LabelMaxLength = 63;
inline constexpr size_t kDNS1123SubdomainMaxLength = 253;
inline constexpr size_t kDNS1035LabelMaxLength = 63;
inline constexpr size_t kQualifiedNameMaxLength = 63;
inline constexpr size_t kLabelValueMaxLength = 63;

using Messages = std::vector<std::string>;

// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters (e.g. namespace names).
Messages IsDNS1123Label(std::string_view value);
// Dot-separated DNS-1123 labels, at most 253 characters (most object names).
Messages IsDNS1123Subdomain(std::string_view value);
// `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters (e.g. Service names).
Messages IsDNS1035Label(std::string_view value);
// `[prefix/]name`: label keys, annotation keys, finalizers.
Messages IsQualifiedName(std::string_view value);
// Empty, or a 63-character-or-shorter qualified-name part.
Messages IsValidLabelValue(std::string_view value);

// Building blocks of the messages above, exposed for other validators.
std::string EmptyError();                // "must be non-empty"
std::string MaxLenError(size_t length);  // "must be no more than N characters"
std::string RegexError(std::string_view msg, std::string_view fmt,
                       const std::vector<std::string_view>& examples);

// A name validator as used by `ValidateObjectMeta`: `prefix` is true when the
// value is a `generateName` prefix (a random suffix will follow, so a trailing
// dash is allowed).
using NameValidator = std::function<Messages(std::string_view name, bool prefix)>;

Messages NameIsDNSSubdomain(std::string_view name, bool prefix);
Messages NameIsDNSLabel(std::string_view name, bool prefix);
// Service names (`ValidateServiceName` in Kubernetes).
Messages NameIsDNS1035Label(std::string_view name, bool prefix);

}  // namespace batchd::api::validation
