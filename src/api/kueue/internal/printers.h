// Internal to api/kueue: table columns and cells of a kind (by `k.kind`).
#pragma once

#include "api/kind.h"

namespace batchd::api::kueue::internal {

// Fills `k.columns` and `k.row_cells` as Kueue's printer columns.
void SetPrinter(KindDef& k);

}  // namespace batchd::api::kueue::internal
