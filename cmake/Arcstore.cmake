# Build helpers: warnings, sanitizers, and one-line declarations of
# libraries, tests, benchmarks and fuzz targets.

add_library(arcstore_flags INTERFACE)
target_compile_options(arcstore_flags INTERFACE -Wall -Wextra -Werror -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  target_compile_options(arcstore_flags INTERFACE -Wthread-safety)
endif()
target_include_directories(arcstore_flags INTERFACE
  ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR})

if(ARCSTORE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(ARCSTORE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# arcstore_library(NAME SRCS a.cc b.cc DEPS other_lib ...)
function(arcstore_library name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SRCS})
  target_link_libraries(${name} PUBLIC arcstore_flags ${A_DEPS})
endfunction()

# arcstore_test(NAME SRCS a_test.cc DEPS lib ... LABELS unit ... TIMEOUT s)
# Every test binary gets the label "unit" unless LABELS says otherwise.
function(arcstore_test name)
  cmake_parse_arguments(A "" "TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  add_executable(${name} ${A_SRCS})
  target_link_libraries(${name} PRIVATE arcstore_flags arcstore_testing ${A_DEPS}
    GTest::gtest GTest::gmock GTest::gtest_main)
  # Each label gets a build target of its own (tests_unit, tests_crash,
  # tests_concurrency, ...), so that a sanitizer build compiles only what
  # it runs (see .ci/run and arcstore_label_targets()).
  foreach(label ${A_LABELS})
    set_property(GLOBAL APPEND PROPERTY ARCSTORE_TESTS_WITH_${label} ${name})
  endforeach()
  arcstore_discover_tests(${name} LABELS ${A_LABELS} TIMEOUT ${A_TIMEOUT})
endfunction()

# Registers the tests of the executable `name` with ctest, with LABELS
# (default unit), TIMEOUT (default 300 s) and the shared environment plus
# ENV (VAR=VALUE entries). With PREFIX, named PREFIX.<test>.
function(arcstore_discover_tests name)
  cmake_parse_arguments(A "" "PREFIX;TIMEOUT" "LABELS;ENV" ${ARGN})
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  set(list ${name}_TESTS)
  set(prefix_args)
  if(A_PREFIX)
    set(list ${name}_${A_PREFIX}_TESTS)
    set(prefix_args TEST_PREFIX "${A_PREFIX}.")
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST
    ${prefix_args}
    TEST_LIST ${list}
    PROPERTIES TIMEOUT ${A_TIMEOUT})
  # PROPERTIES flattens list values, so the labels and the environment (two
  # lists) are set afterwards, once the tests are discovered.
  set(labels "${A_LABELS}")
  set(env "ARCSTORE_SHARED_DIR=${ARCSTORE_SHARED_DIR};ARCSTORE_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
  foreach(e ${A_ENV})
    set(env "${env};${e}")
  endforeach()
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake
    "if(${list})\n  set_tests_properties(\${${list}} PROPERTIES LABELS \"${labels}\" ENVIRONMENT \"${env}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES
    ${CMAKE_CURRENT_BINARY_DIR}/${list}_labels.cmake)
endfunction()

# Runs the tests of `name` (an arcstore_test) once more, named
# PREFIX.<test>, with ENV (VAR=VALUE) added to their environment: the same
# suite under another configuration (the ARC's suites under each
# replacement policy).
function(arcstore_test_variant name)
  arcstore_discover_tests(${name} ${ARGN})
endfunction()

# arcstore_benchmark(NAME SRCS a_bench.cc DEPS lib ...): Google Benchmark.
function(arcstore_benchmark name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${A_SRCS})
  target_link_libraries(${name} PRIVATE arcstore_flags ${A_DEPS} benchmark::benchmark benchmark::benchmark_main)
endfunction()

# arcstore_fuzzer(NAME SRCS f.cc DEPS lib ... CORPUS dir SECONDS n)
# With clang: a libFuzzer binary, plus a ctest run of SECONDS seconds over
# the seed corpus (label "fuzz"). Longer runs: see docs/testing.md.
function(arcstore_fuzzer name)
  cmake_parse_arguments(A "" "CORPUS;SECONDS" "SRCS;DEPS" ${ARGN})
  if(NOT ARCSTORE_FUZZ OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR ARCSTORE_SANITIZE STREQUAL "thread")
    return()
  endif()
  if(NOT A_SECONDS)
    set(A_SECONDS 10)
  endif()
  add_executable(${name} ${A_SRCS})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(${name} PRIVATE arcstore_flags ${A_DEPS})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
  add_test(NAME ${name}
    COMMAND sh -c "mkdir -p '${work}' && exec \"$0\" -max_total_time=${A_SECONDS} -print_final_stats=1 \"$@\""
      $<TARGET_FILE:${name}> ${work} ${A_CORPUS})
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 600)
endfunction()

# Creates tests_<label> targets for every label used by arcstore_test.
# Called once at the end of the top CMakeLists.txt.
function(arcstore_label_targets)
  foreach(label unit concurrency crash long)
    get_property(tests GLOBAL PROPERTY ARCSTORE_TESTS_WITH_${label})
    add_custom_target(tests_${label})
    if(tests)
      add_dependencies(tests_${label} ${tests})
    endif()
  endforeach()
endfunction()
