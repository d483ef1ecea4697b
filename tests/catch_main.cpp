// Catch2 v2's main, compiled once (Catch2 v3 brings Catch2::Catch2WithMain instead).
#define CATCH_CONFIG_MAIN
#include "keyplace_catch.hpp"
