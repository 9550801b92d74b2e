// The instrumented build's access callbacks (traffic.hpp). GCC's -fsanitize=thread makes every load
// and store of the compiled code call __tsan_read<N>/__tsan_write<N> (an aggregate copy calls
// __tsan_read_range), and every atomic builtin call __tsan_atomic<bits>_<op>, which must then do the
// operation itself. The instrumented executables link this file instead of libtsan; it is compiled
// without instrumentation. The call site is the return address: one per load or store instruction.
#include <cstddef>
#include <cstdint>

#include "runtime/host/traffic.hpp"

namespace traffic = hdb::cuda::host::traffic;

namespace {

struct MarkInstrumented {
  MarkInstrumented() { traffic::set_instrumented(); }
} mark_instrumented;

inline void note(const void* site, const volatile void* address, std::size_t bytes, traffic::Kind kind) {
  if (traffic::active()) traffic::access(site, const_cast<const void*>(address), bytes, kind);
}

#define HDB_SITE __builtin_return_address(0)

}  // namespace

extern "C" {

void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
void __tsan_vptr_update(void**, void*) {}
void __tsan_vptr_read(void**) {}
void __tsan_ignore_thread_begin() {}
void __tsan_ignore_thread_end() {}

#define HDB_PLAIN_ACCESS(N)                                                                        \
  void __tsan_read##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Load); }                      \
  void __tsan_write##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Store); }                    \
  void __tsan_volatile_read##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Load); }             \
  void __tsan_volatile_write##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Store); }           \
  void __tsan_unaligned_read##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Load); }            \
  void __tsan_unaligned_write##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Store); }          \
  void __tsan_unaligned_volatile_read##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Load); }   \
  void __tsan_unaligned_volatile_write##N(void* a) { note(HDB_SITE, a, N, traffic::Kind::Store); } \
  void __tsan_read##N##_pc(void* a, void* pc) { note(pc, a, N, traffic::Kind::Load); }             \
  void __tsan_write##N##_pc(void* a, void* pc) { note(pc, a, N, traffic::Kind::Store); }
HDB_PLAIN_ACCESS(1)
HDB_PLAIN_ACCESS(2)
HDB_PLAIN_ACCESS(4)
HDB_PLAIN_ACCESS(8)
HDB_PLAIN_ACCESS(16)
#undef HDB_PLAIN_ACCESS

void __tsan_read_range(void* a, unsigned long n) { note(HDB_SITE, a, n, traffic::Kind::Load); }
void __tsan_write_range(void* a, unsigned long n) { note(HDB_SITE, a, n, traffic::Kind::Store); }

// The atomics do what the builtin they replace does; every one is sequentially consistent here,
// which is at least as strong as the order asked for. Loads and stores count as loads and stores
// (a GPU makes them plain ld/st); the read-modify-writes count as atomics.
#define HDB_ATOMICS(BITS, T)                                                                \
  T __tsan_atomic##BITS##_load(const volatile T* a, int) {                                  \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Load);                                      \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                            \
  }                                                                                         \
  void __tsan_atomic##BITS##_store(volatile T* a, T v, int) {                               \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Store);                                     \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                               \
  }                                                                                         \
  T __tsan_atomic##BITS##_exchange(volatile T* a, T v, int) {                               \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                     \
  }                                                                                         \
  T __tsan_atomic##BITS##_fetch_add(volatile T* a, T v, int) {                              \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##BITS##_fetch_sub(volatile T* a, T v, int) {                              \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##BITS##_fetch_and(volatile T* a, T v, int) {                              \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##BITS##_fetch_or(volatile T* a, T v, int) {                               \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                                       \
  }                                                                                         \
  T __tsan_atomic##BITS##_fetch_xor(volatile T* a, T v, int) {                              \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                                      \
  }                                                                                         \
  T __tsan_atomic##BITS##_fetch_nand(volatile T* a, T v, int) {                             \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                                     \
  }                                                                                         \
  int __tsan_atomic##BITS##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) {   \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
  }                                                                                         \
  int __tsan_atomic##BITS##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) {     \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
  }                                                                                         \
  T __tsan_atomic##BITS##_compare_exchange_val(volatile T* a, T c, T v, int, int) {         \
    note(HDB_SITE, a, sizeof(T), traffic::Kind::Atomic);                                    \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
    return c;                                                                               \
  }
HDB_ATOMICS(8, std::uint8_t)
HDB_ATOMICS(16, std::uint16_t)
HDB_ATOMICS(32, std::uint32_t)
HDB_ATOMICS(64, std::uint64_t)
#undef HDB_ATOMICS

void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

}  // extern "C"
