// Empty: the target exists to build the precompiled header (batchd_pch.h).
