# cython: language_level=3
"""The BPE encoder's declaration, for the modules that encode through it (`_candidates`)."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.bpe.backtrack cimport Backtrack
from sqltok.bpe.char_atoms cimport CharAtoms
from sqltok.bpe.merge_scan cimport ByteMerges
from sqltok.bpe.merge_table cimport MergeTable
from sqltok.bpe.pretoken_cache cimport CacheSlot, PieceKey
from sqltok.bpe.workspace cimport Workspace
from sqltok.native.added_match cimport AddedTokens
from sqltok.native.arrow_buffers cimport BinaryView
from sqltok.native.bytes_table cimport BytesTable
from sqltok.native.decode_arrow cimport TokenPieces
from sqltok.native.id_lists cimport IdRows, IdVector
from sqltok.native.id_output cimport IdPool
from sqltok.native.shared_pieces cimport SharedPieces


cdef enum:
    NO_TOKEN = 1              # failure codes of encoding: a byte has no token in the vocabulary
    PRETOKENIZE_FAILED = 2
    INTERRUPTED = 3           # a signal handler raised between segments (its exception is set)


cdef inline str failure_message(int64_t row, int code):
    """What went wrong at `row` (code: NO_TOKEN or PRETOKENIZE_FAILED)."""
    return f"row {row}: " + ("the text holds a byte that has no token in this vocabulary" if code == NO_TOKEN
                             else "pre-tokenization failed")


cdef class Encoder:
    cdef MergeTable merges
    cdef CharAtoms atoms              # characters that start out whole (char_atoms.pxd); empty: none
    cdef bint use_atoms
    cdef MergeTable supers            # two-phase models: supermerges (rank = index), over whole tokens
    cdef vector[uint8_t] in_super     # 1 for tokens that take part in some supermerge
    cdef bint has_supers
    cdef Backtrack backtrack          # longest-prefix tokens with backtracking (where it is exact)
    cdef readonly int64_t backtrack_from  # pretokens of at least this many bytes backtrack; -1: none do
    cdef ByteMerges byte_merges       # each byte's token, and the rank and result of every pair of bytes
    cdef string vocab                 # every token's bytes; token t is vocab[starts[t]:ends[t]]
    cdef vector[int64_t] starts
    cdef vector[int64_t] ends
    cdef vector[uint8_t] valid
    cdef BytesTable direct
    cdef vector[int32_t] special_ids
    cdef vector[uint8_t] special_skip       # 1 for each special token's id (decoding may leave them out)
    cdef vector[int32_t] always_ids
    cdef AddedTokens added            # the special and always-matched tokens, with HF's flags
    cdef readonly int pattern
    cdef bint cuts                    # texts over `segment_bytes` are encoded in segments, cut at the
    cdef bint cut_script_aware        # pattern's cut points (`cut_points.pxd`: candidates' with
    cdef bint cut_newlines            # supermerges), so that their work vectors stay that small
    cdef public int64_t segment_bytes
    cdef bint rank_guard
    cdef readonly int32_t n_vocab
    cdef IdPool* pool                 # ids memory handed back by Arrow, for the next call
    cdef vector[Workspace*] spare     # workspaces of finished calls: their caches stay warm
    cdef SharedPieces shared          # what the threads of a call merged, for the others (made on first use)
    cdef int shared_slot_bits         # its size (`share_merges`)
    cdef int64_t shared_bytes
    cdef list id_objects              # int objects of every id, for Python list output (built once)

    cdef Workspace* _take_workspace(self)
    cdef void _give_back(self, Workspace* ws, bint failed)
    cdef void _keep_final_pairs(self)
    cdef void _build_byte_pairs(self)
    cdef void _add_specials(self, dict special, dict always, dict flags, str normalizer)
    cdef void _build_direct(self, bint direct_all)
    cdef int _merge(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil
    cdef int _encode_piece(self, const uint8_t* p, int64_t n, const PieceKey* key, IdVector& out,
                           Workspace& ws) noexcept nogil
    cdef void _defer(self, const uint8_t* p, int64_t n, uint64_t h, const PieceKey* key, CacheSlot* slot,
                     IdVector& out, Workspace& ws) noexcept nogil
    cdef int _merge_pending(self, Workspace& ws) noexcept nogil
    cdef void _supermerge_run(self, IdVector& out, size_t first, size_t count, size_t tail,
                              Workspace& ws) noexcept nogil
    cdef int encode_ordinary(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil
    cdef int _encode_segment(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil
    cdef int _encode_pieces(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil
    cdef PieceKey* _piece_key(self, const uint8_t* p, int64_t n, const uint8_t* limit, Workspace& ws) noexcept nogil
    cdef int encode_text(self, const uint8_t* p, int64_t n, const uint8_t* allowed, IdVector& out,
                         Workspace& ws) noexcept nogil
    cdef void _encode_rows(self, const BinaryView& v, int64_t first, int64_t last, const uint8_t* allowed,
                           bint keep_ids, IdRows& res, Workspace& ws) noexcept nogil
    cdef const uint8_t* _allowed_mask(self, allowed_special, vector[uint8_t]& mask)
    cdef object _encode_one(self, str text, const uint8_t* allowed, bint counts_only, Workspace* ws)
    cdef TokenPieces _pieces(self, bint skip_special)
