// Writers of the fields every object has that controllers edit beside
// ObjectMetaView (object_view.h) reading them: the type meta of an object
// about to be written, and the owner references the garbage collector drops.
// (object_meta.h has the label, annotation, finalizer and controller-reference
// setters.)
//
// Thread-safety: free functions over JSON the caller owns.
#pragma once

#include <string_view>

#include "absl/functional/function_ref.h"
#include "api/field_error.h"

namespace batchd::api::meta {

// Sets `apiVersion` and `kind`, each only where it is absent (an informer's
// copy may lack them; a write needs them).
void EnsureTypeMeta(Json& obj, std::string_view api_version, std::string_view kind);
// Sets `apiVersion` and `kind`, replacing what is there.
void SetTypeMeta(Json& obj, std::string_view api_version, std::string_view kind);

// Removes the entries of `metadata.ownerReferences` that are objects whose
// uid `drop` accepts (other entries are kept); an emptied list is removed
// from `metadata`. Returns whether an entry was removed.
bool RemoveOwnerReferences(Json& obj, absl::FunctionRef<bool(std::string_view uid)> drop);

}  // namespace batchd::api::meta
