/* The compiler intrinsics sqltok uses, each behind one portable name: GCC and Clang builtins, MSVC
   intrinsics, or plain C elsewhere (same results, slower). Declared for Cython in portable.pxd. */
#ifndef SQLTOK_PORTABLE_H
#define SQLTOK_PORTABLE_H

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#include <stdlib.h>
#define SQLTOK_MSVC 1
#if defined(_M_X64) || defined(_M_ARM64)
#define SQLTOK_MSVC_64 1
#endif
#endif

/* The index of the lowest set bit of x (x != 0). */
static inline int sqltok_ctz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#elif defined(SQLTOK_MSVC_64)
    unsigned long i;
    _BitScanForward64(&i, x);
    return (int)i;
#else
    int n = 0;
    while (!(x & 1)) { x >>= 1; n++; }
    return n;
#endif
}

/* The index of the highest set bit of x (x != 0). */
static inline int sqltok_msb64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(x);
#elif defined(SQLTOK_MSVC_64)
    unsigned long i;
    _BitScanReverse64(&i, x);
    return (int)i;
#else
    int n = 63;
    while (!(x >> 63)) { x <<= 1; n--; }
    return n;
#endif
}

/* How many bits of x are set. */
static inline int sqltok_popcount64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
#endif
}

/* The 8 bytes of a word read from memory as a little-endian number: byte i of the word in memory is
   bits 8i..8i+7 (x itself on little-endian machines). */
static inline uint64_t sqltok_le64(uint64_t x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

/* Ask for the cache line at `address` to be loaded, without waiting for it (a hint: no effect on
   results, none at all where the compiler has no such instruction). */
static inline void sqltok_prefetch(const void* address) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(address);
#elif defined(SQLTOK_MSVC) && (defined(_M_X64) || defined(_M_IX86))
    _mm_prefetch((const char*)address, _MM_HINT_T0);
#elif defined(SQLTOK_MSVC) && defined(_M_ARM64)
    __prefetch(address);
#else
    (void)address;
#endif
}

#if defined(__SSE2__)
/* A 16-bit mask of the bytes of v in [first, first + count): shifted to the bottom of the signed
   range, compared once. */
static inline uint64_t sqltok_in_range16(__m128i v, unsigned char first, unsigned char count) {
    __m128i shifted = _mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - first)));
    return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmplt_epi8(shifted, _mm_set1_epi8((char)(-128 + count))));
}
#endif

#endif
