// Split-KV's partition (contract/split_kv.hpp) against FA2's rule written out per split, and the
// rule for which forwards may be split.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flashlab/contract/split_kv.hpp"

using namespace flashlab;

TEST_CASE("split_kv_range: every K/V block in exactly one split, in order, ceil(T_c / splits) each") {
  for (std::int64_t t_c = 1; t_c <= 70; ++t_c)
    for (std::int64_t splits = 1; splits <= 128; ++splits) {
      // FA2 (flash_fwd_kernel.h): n_blocks_per_split = (num_n_block + num_splits - 1) / num_splits,
      // split s starts at s * that and stops at the end of the row
      const std::int64_t per = (t_c + splits - 1) / splits;
      std::vector<int> owner(std::size_t(t_c), -1);
      std::int64_t next = 0;
      for (std::int64_t s = 0; s < splits; ++s) {
        const SplitRange r = split_kv_range(t_c, splits, s);
        REQUIRE(r.first == (s * per < t_c ? s * per : t_c));
        if (r.empty()) continue;
        REQUIRE(r.first == next);
        REQUIRE(r.end - r.first <= per);
        for (std::int64_t j = r.first; j < r.end; ++j) owner[std::size_t(j)] = int(s);
        next = r.end;
      }
      REQUIRE(next == t_c);
      for (int o : owner) REQUIRE(o >= 0);
    }
  // a worked case: T_c = 10 in 4 splits takes 3, 3, 3, 1 blocks; in 6, 2 each and an empty sixth
  CHECK(split_kv_range(10, 4, 3).first == 9);
  CHECK(split_kv_range(10, 4, 3).end == 10);
  CHECK(split_kv_range(10, 6, 5).empty());
  CHECK(split_kv_blocks_per_split(10, 6) == 2);
}

TEST_CASE("split_kv_refusal: 1 to 128 splits (0: auto) of V2's forward only") {
  CHECK(split_kv_refusal(1, false, false) == nullptr);  // no split is always allowed
  CHECK(split_kv_refusal(0, true, true) == nullptr);
  CHECK(split_kv_refusal(128, true, true) == nullptr);
  CHECK(std::string(split_kv_refusal(129, true, true)).find("1 to 128") != std::string::npos);
  CHECK(std::string(split_kv_refusal(-1, true, true)).find("1 to 128") != std::string::npos);
  CHECK(std::string(split_kv_refusal(2, false, true)).find("V2's loop") != std::string::npos);
  CHECK(std::string(split_kv_refusal(0, false, true)).find("V2's loop") != std::string::npos);
  CHECK(std::string(split_kv_refusal(2, true, false)).find("--pass forward") != std::string::npos);
}
