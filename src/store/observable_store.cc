#include "store/observable_store.h"
