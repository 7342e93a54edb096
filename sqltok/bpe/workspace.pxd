# cython: language_level=3
"""One encoding thread's memory: its pretoken cache, its merge scratch vectors and the pretokens of
the text at hand. An Encoder keeps the workspaces of finished calls for the next ones, so that SQL
batches and repeated short calls find the cache warm."""
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

from sqltok.bpe.merge_heap cimport MergeScratch
from sqltok.bpe.merge_lanes cimport Pending
from sqltok.bpe.pretoken_cache cimport PieceKey, PretokenCache, pretoken_cache_size
from sqltok.native.id_lists cimport IdVector
from sqltok.native.shared_pieces cimport SharedCursor, SharedPieces


cdef cppclass Workspace:
    PretokenCache cache
    SharedPieces* shared          # the pretokens the call's threads share (NULL: one thread, none)
    SharedCursor shared_at        # where this thread writes to it
    MergeScratch scratch
    vector[int64_t] ends          # the pretoken ends of the text
    vector[PieceKey] keys         # and their keys
    bint defer                    # pretokens that need merging wait for a batch (merge_lanes)
    vector[Pending] pending
    vector[size_t] holes          # where their placeholders are in the output, in order
    vector[int32_t] pending_ids
    IdVector run                  # a run of pretokens being supermerged
    IdVector leftover             # the ids of a waiting pretoken too long for merge_lanes
    vector[int32_t] piece_sizes   # when asked: how many ids each pretoken gave, in order
    bint keep_sizes
    IdVector out                  # the direct path: the ids of the text at hand
    int64_t direct_bytes          # the direct path: bytes of the texts encoded so far (sizes the cache)
    bint check_signals            # on the caller's (main) thread: look for Ctrl-C between a long text's segments


cdef inline void workspace_init(Workspace& ws, int64_t text_bytes, int threads) noexcept nogil:
    """Ready `ws` for about `text_bytes` of input, one of `threads` threads (see pretoken_cache_size)."""
    pretoken_cache_size(ws.cache, text_bytes, threads)
    ws.shared = NULL
    ws.keep_sizes = False
    ws.defer = False
    ws.check_signals = False
