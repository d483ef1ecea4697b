// The one way tests include Catch2: works with Catch2 v2.13 (Debian 12) and Catch2 v3.
#ifndef KEYPLACE_TESTS_KEYPLACE_CATCH_HPP_INCLUDED
#define KEYPLACE_TESTS_KEYPLACE_CATCH_HPP_INCLUDED

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif

#endif
