// Logging for batchd: a thin layer over spdlog so components log with one
// call and tests can silence output. Logging never decides behaviour.
#pragma once

#include <spdlog/spdlog.h>

#define BATCHD_LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define BATCHD_LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define BATCHD_LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
#define BATCHD_LOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)
