# batchd_cc_library(NAME name [HDRS ...] SRCS ... [DEPS ...])
# batchd_cc_test(NAME name SRCS ... [DEPS ...])
# Targets are named batchd_<name>; every folder declares its own, so the
# dependency graph is explicit and a cycle fails the build.
#
# With BATCHD_PCH (on by default) every library object reuses one
# precompiled header (cmake/pch/batchd_pch.h: the standard library,
# nlohmann/json and the Abseil headers nearly every file parses) and every
# test object one more with GoogleTest/GoogleMock; parsing those headers was
# about a third of each object's compile time. The PCH targets carry no
# compile definitions, so a target's own (spdlog, Boost, gtest) do not
# invalidate it; if a compiler still rejects it, GCC falls back to parsing
# the headers (-Winvalid-pch warns). Turn it off to check that every file
# includes what it uses.
option(BATCHD_PCH "Precompile the common third-party headers once" ON)
# Test drivers (the *_test.cc objects and their precompiled header) are
# compiled at -O1 in optimized builds: the code under test is the libraries',
# compiled as shipped (-O2); the drivers are test bodies, fixtures and
# GoogleTest/JSON template instances, and at -O1 they compile ~18 % faster
# (half of a fresh build's compile time is test objects), which keeps
# `make test` inside its budget on a 2-core machine. Empty keeps the build
# type's flags.
set(BATCHD_TEST_OPT_FLAGS "-O1" CACHE STRING
    "Optimization flags appended for test objects in optimized builds")
set(_batchd_test_opt "")
if(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo|MinSizeRel)$" AND BATCHD_TEST_OPT_FLAGS)
  separate_arguments(_batchd_test_opt UNIX_COMMAND "${BATCHD_TEST_OPT_FLAGS}")
endif()
# Unity build of the test drivers (BATCHD_TEST_UNITY, on by default): a test
# executable with several *_test.cc files compiles them as one translation
# unit per BATCHD_TEST_UNITY_BATCH files. Most of a test object's compile time
# is per translation unit (the project headers it parses, the GoogleTest and
# JSON template instances it emits), so four test files cost about what two
# did (docs/benchmarks.md, "make test wall time"). Names at file scope
# (anonymous namespaces included) must then be unique within the executable;
# a file whose helpers share a name and signature with another file's is
# listed in batchd_cc_test's NO_UNITY and compiled alone. Single-file test
# executables are unaffected. OFF to check that each test file compiles alone.
option(BATCHD_TEST_UNITY "Compile each test executable's files as one translation unit" ON)
set(BATCHD_TEST_UNITY_BATCH 8 CACHE STRING "Test files per unity translation unit (0: all)")
# Unity build of everything else (BATCHD_UNITY, on by default): each library,
# program, benchmark and fuzz target compiles its sources BATCHD_UNITY_BATCH
# at a time as one translation unit. As for the tests, most of an object's
# compile time is per translation unit (the project headers, the JSON, Abseil
# and standard-library template instances it emits), and a cold build of the
# three server programs takes about half the CPU it took file by file
# (docs/benchmarks.md, "make test on a clean clone"). The same rule holds:
# names at file scope, anonymous namespaces included, must be unique within a
# target; shared helpers go in the target's internal header, and a helper
# that only shares a name is renamed. OFF to build each file alone (faster
# incremental rebuilds of one file; checks that each file compiles alone).
option(BATCHD_UNITY "Compile each library's and program's files in unity batches" ON)
set(BATCHD_UNITY_BATCH 8 CACHE STRING "Source files per unity translation unit (0: all)")
if(BATCHD_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE ${BATCHD_UNITY_BATCH})
endif()
if(BATCHD_PCH)
  add_library(batchd_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch/pch.cc)
  target_include_directories(batchd_pch PRIVATE
    $<TARGET_PROPERTY:nlohmann_json::nlohmann_json,INTERFACE_INCLUDE_DIRECTORIES>)
  target_precompile_headers(batchd_pch PRIVATE ${CMAKE_SOURCE_DIR}/cmake/pch/batchd_pch.h)
  if(BATCHD_BUILD_TESTS)
    add_library(batchd_test_pch STATIC ${CMAKE_SOURCE_DIR}/cmake/pch/pch.cc)
    target_include_directories(batchd_test_pch PRIVATE ${CMAKE_SOURCE_DIR}/cmake/pch)
    # The same GoogleTest compile definitions (GTEST_HAS_PTHREAD) as the tests.
    target_link_libraries(batchd_test_pch PRIVATE GTest::gtest GTest::gmock)
    target_compile_options(batchd_test_pch PRIVATE ${_batchd_test_opt})
    target_precompile_headers(batchd_test_pch PRIVATE
      ${CMAKE_SOURCE_DIR}/cmake/pch/batchd_test_pch.h)
  endif()
endif()
function(batchd_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "HDRS;SRCS;DEPS" ${ARGN})
  if(ARG_SRCS)
    add_library(batchd_${ARG_NAME} STATIC ${ARG_SRCS} ${ARG_HDRS})
    target_link_libraries(batchd_${ARG_NAME} PUBLIC ${ARG_DEPS})
    if(BATCHD_PCH)
      target_precompile_headers(batchd_${ARG_NAME} REUSE_FROM batchd_pch)
    endif()
  else()
    add_library(batchd_${ARG_NAME} INTERFACE)
    target_link_libraries(batchd_${ARG_NAME} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

function(batchd_cc_test)
  if(NOT BATCHD_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;NO_UNITY" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  list(LENGTH ARG_SRCS _n)
  if(BATCHD_TEST_UNITY AND _n GREATER 1)
    set_target_properties(${ARG_NAME} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${BATCHD_TEST_UNITY_BATCH})
    if(ARG_NO_UNITY)
      set_source_files_properties(${ARG_NO_UNITY} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  else()
    set_target_properties(${ARG_NAME} PROPERTIES UNITY_BUILD OFF)
  endif()
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_options(${ARG_NAME} PRIVATE ${_batchd_test_opt})
  if(BATCHD_PCH)
    target_precompile_headers(${ARG_NAME} REUSE_FROM batchd_test_pch)
  endif()
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60)
endfunction()
