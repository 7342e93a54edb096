# cython: language_level=3
"""Pretokens and their ids shared by the threads of one encoder, insert-only and lock-free
(`shared_pieces.h`): what one thread merged, the others take instead of merging it again."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t


cdef extern from "shared_pieces.h" nogil:
    cdef cppclass SharedCursor "SqltokSharedCursor":  # a thread's block of the arena (starts empty)
        pass

    cdef cppclass SharedPieces "SqltokSharedPieces":
        bint ready() noexcept
        const void* start(uint64_t h) noexcept
        void init(int slot_bits, uint64_t arena_bytes) except +
        const int32_t* find(const uint8_t* p, int64_t n, uint64_t h, int64_t* count) noexcept
        void put(SharedCursor& c, const uint8_t* p, int64_t n, uint64_t h, const int32_t* ids, int64_t count) noexcept
