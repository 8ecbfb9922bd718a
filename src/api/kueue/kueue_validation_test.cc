#include <gtest/gtest.h>
#include "api/kueue/kueue.h"
