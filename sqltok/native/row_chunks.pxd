# cython: language_level=3
"""Rows shared among threads in chunks of about equal bytes (chunk c of n starts at row
`arrow_buffers.row_split(v, c, n)`). Thread t owns a run of chunks and takes them front to back, so
that its output stays in one piece; a thread done with its own takes the chunks left in the other
runs from their back, each into an output of its own. A thread that the machine slows down so hands
its last chunks to the others. Every chunk is claimed exactly once."""


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
