// Propagation macros for absl::Status / absl::StatusOr.
// Debian 12's Abseil (20220623) has no ABSL_RETURN_IF_ERROR, so batchd defines its own.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define BATCHD_STATUS_CONCAT_INNER_(a, b) a##b
#define BATCHD_STATUS_CONCAT_(a, b) BATCHD_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` yields a non-OK status.
#define BATCHD_RETURN_IF_ERROR(expr)            \
  do {                                          \
    ::absl::Status _batchd_status = (expr);     \
    if (!_batchd_status.ok()) return _batchd_status; \
  } while (0)

// `BATCHD_ASSIGN_OR_RETURN(auto x, F());` assigns the value of a StatusOr or
// returns its error.
#define BATCHD_ASSIGN_OR_RETURN(lhs, expr) \
  BATCHD_ASSIGN_OR_RETURN_IMPL_(BATCHD_STATUS_CONCAT_(_batchd_statusor_, __LINE__), lhs, expr)
#define BATCHD_ASSIGN_OR_RETURN_IMPL_(var, lhs, expr) \
  auto var = (expr);                                  \
  if (!var.ok()) return std::move(var).status();      \
  lhs = std::move(var).value()
