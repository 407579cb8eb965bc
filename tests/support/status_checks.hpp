// Status checks for tests that call the C ABI: on failure they show the call, the status and
// the runtime's message (nanort_last_error).
#pragma once

#include <gtest/gtest.h>
#include <nanort/nanort.h>

#define ASSERT_OK(expr)                                                                 \
  do {                                                                                  \
    const nanort_status status_ = (expr);                                               \
    ASSERT_EQ(status_, NANORT_SUCCESS) << #expr << ": " << nanort_status_string(status_) \
                                       << ": " << nanort_last_error();                  \
  } while (0)
#define EXPECT_OK(expr)                                                                 \
  do {                                                                                  \
    const nanort_status status_ = (expr);                                               \
    EXPECT_EQ(status_, NANORT_SUCCESS) << #expr << ": " << nanort_status_string(status_) \
                                       << ": " << nanort_last_error();                  \
  } while (0)
