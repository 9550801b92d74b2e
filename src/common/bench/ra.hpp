#pragma once
// ra: the benchmark of the relational-algebra primitives. Its contract (operators, backend
// interface) is model/ra.hpp; ra.cpp declares the cases and drives backends only through it.
#include "harness/main.hpp"
#include "model/ra.hpp"

namespace hdb::ra {

int ra_main(int argc, char** argv, Platform& platform, RaBackend& backend);

}  // namespace hdb::ra
