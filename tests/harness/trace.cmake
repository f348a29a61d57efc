# The trace parser's unit tests. Included by tests/harness/CMakeLists.txt (include(trace.cmake)).
# Built from the parser's sources directly, not from kg_harness, so it needs no torch.
include(GoogleTest)
if(NOT TARGET GTest::gtest_main)
  find_package(GTest REQUIRED)
endif()

set(KG_TRACE_ROOT ${CMAKE_CURRENT_LIST_DIR}/../..)
add_executable(trace_parser_test
  ${CMAKE_CURRENT_LIST_DIR}/trace_parser_test.cc
  ${KG_TRACE_ROOT}/harness/src/trace_parser.cc
  ${KG_TRACE_ROOT}/harness/src/trace_format.cc
  ${KG_TRACE_ROOT}/harness/src/text_safety.cc
  ${KG_TRACE_ROOT}/policies/src/names.cc)
target_include_directories(trace_parser_test PRIVATE ${KG_TRACE_ROOT}/harness/include ${KG_TRACE_ROOT}/policies/include)
target_compile_features(trace_parser_test PRIVATE cxx_std_17)
target_link_libraries(trace_parser_test PRIVATE GTest::gtest_main)
gtest_discover_tests(trace_parser_test DISCOVERY_TIMEOUT 60)
