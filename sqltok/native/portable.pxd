# cython: language_level=3
"""The compiler intrinsics, declared once (portable.h: GCC/Clang builtins, MSVC intrinsics, plain C)."""
from libc.stdint cimport uint64_t


cdef extern from "portable.h" nogil:
    int ctz64 "sqltok_ctz64"(uint64_t x) noexcept              # the lowest set bit's index (x != 0)
    int msb64 "sqltok_msb64"(uint64_t x) noexcept              # the highest set bit's index (x != 0)
    int popcount64 "sqltok_popcount64"(uint64_t x) noexcept    # how many bits are set
    uint64_t le64 "sqltok_le64"(uint64_t x) noexcept           # a word from memory, as little-endian
    void prefetch "sqltok_prefetch"(const void* address) noexcept  # load a cache line early (a hint)
