#pragma once
// Whether this translation unit is built under AddressSanitizer (HDB_ASAN) or ThreadSanitizer
// (HDB_TSAN). GCC defines __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__; clang 14, which builds the
// AddressSanitizer pass of scripts/test, answers only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define HDB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HDB_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define HDB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HDB_TSAN 1
#endif
#endif
