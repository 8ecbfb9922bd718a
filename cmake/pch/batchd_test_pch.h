// batchd_pch.h plus GoogleTest and GoogleMock, force-included into every
// batchd_cc_test object (cmake/batchd_cc.cmake, BATCHD_PCH).
#pragma once

#include "batchd_pch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
