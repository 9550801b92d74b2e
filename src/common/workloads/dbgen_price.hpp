#pragma once
// P_RETAILPRICE in cents (TPC-H clause 4.2.3; ssb-dbgen's rpb_routine computes the same), shared by
// the TPC-H and SSB generators and their tests.
#include <cstdint>

namespace hdb {

constexpr std::uint32_t retail_price_cents(std::uint64_t partkey) {
  return static_cast<std::uint32_t>(90000 + ((partkey / 10) % 20001) + 100 * (partkey % 1000));
}

}  // namespace hdb
