# cython: language_level=3
"""Rows shared among threads in chunks of about equal bytes. Thread t owns a run of chunks and takes
them front to back, so that its output stays in one piece; a thread done with its own takes the
chunks left in the other runs from their back, each into an output of its own. A thread that the
machine slows down so hands its last chunks to the others. Every chunk is claimed exactly once."""
from libc.stdint cimport int64_t

from arrow_buffers cimport BinaryView, row_split


cdef extern from "chunk_claims.h":
    cdef cppclass ChunkClaims "SqltokChunkClaims":
        void reset(int chunks) except +
        bint claim(int chunk) noexcept nogil


cdef enum:
    CHUNKS_PER_THREAD = 16


cdef inline int chunk_count(int threads) noexcept nogil:
    return 1 if threads <= 1 else threads * CHUNKS_PER_THREAD


cdef inline int owned_first(int t, int threads, int chunks) noexcept nogil:
    """The first chunk of thread t's run (t = threads: the chunk count)."""
    return t * chunks // threads


cdef inline int64_t chunk_row(const BinaryView& v, int c, int chunks) noexcept nogil:
    """The first row of chunk c (c = chunks: the row count)."""
    return row_split(v, c, chunks)
