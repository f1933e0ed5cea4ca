// parse_bounded_json's nesting limit, counted in a pass of its own (the parser's callback,
// which counted it before, was quadratic in a container's size: bench/bench_json.cpp).
#include <doctest/doctest.h>

#include <string>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/error.h"

using tg::json_nests_deeper_than;

TEST_CASE("json_nests_deeper_than: counts arrays and objects, not brackets in strings") {
  CHECK_FALSE(json_nests_deeper_than("{}", 1));
  CHECK(json_nests_deeper_than("{\"a\": [1]}", 1));
  CHECK_FALSE(json_nests_deeper_than("{\"a\": [1]}", 2));
  CHECK_FALSE(json_nests_deeper_than("[{}, {}, [], {}]", 2));                // siblings do not add up
  CHECK_FALSE(json_nests_deeper_than("{\"[[[[\": \"{{{{\"}", 1));          // in strings
  CHECK_FALSE(json_nests_deeper_than("{\"a\\\"[[[\": 1}", 1));             // an escaped quote stays in the string
  CHECK(json_nests_deeper_than("{\"a\\\\\": [[1]]}", 2));                  // an escaped backslash ends it
}

TEST_CASE("parse_bounded_json: 64 levels are read, 66 refused naming the file; many siblings parse") {
  const auto nested = [](int levels) { return std::string(levels, '[') + std::string(levels, ']'); };
  CHECK(tg::parse_bounded_json(nested(64), "x").is_array());
  CHECK_THROWS_WITH_AS(tg::parse_bounded_json(nested(66), "f.json"), doctest::Contains("f.json: the JSON nests deeper"),
                       tg::Error);
  std::string header = "{";
  for (int i = 0; i < 20000; ++i) header += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":{\"shape\":[1]}";
  header += "}";
  CHECK(tg::parse_bounded_json(header, "header").size() == 20000);
}
