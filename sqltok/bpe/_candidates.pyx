# cython: language_level=3
"""Supermerge candidates, the first step of training a two-phase (superword) model: the maximal runs
of two or more pretokens of each text that a phase-1 model encodes to exactly one eligible token
each, as their token ids. The units are found by the phase-1 Encoder, or, where phase 1 was just
trained on the same corpus, by `PretokenUnits`: what phase 1 made of each unique pretoken, looked up
(phase 1 merged each pretoken exactly as its encoder encodes it, so the candidates are the same).
Rows are shared among threads (parallel_rows), the GIL released."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memset
from libcpp.vector cimport vector

from sqltok.bpe._encode cimport PRETOKENIZE_FAILED, Encoder, failure_message
from sqltok.bpe.workspace cimport Workspace, workspace_init
from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_bytes, view_end, view_start, view_valid
from sqltok.native.bytes_table cimport BytesTable, bytes_table_build, bytes_table_get_hashed, piece_hashes
from sqltok.native.id_lists cimport IdVector
from sqltok.native.id_output cimport IdPool, add_rows, id_pool_new, id_pool_release, ids_buffer
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.native.portable cimport prefetch
from sqltok.native.utf8 cimport valid_utf8_len
from sqltok.pretokenizer.matcher cimport (PAT_O200K, PAT_SCRIPT_AWARE, UC_L, next_char, pretokenize_pattern,
                                          uc_entry)

import numpy as np
import pyarrow as pa

from sqltok.errors import SqltokError


cdef enum:
    PREFETCH = 16                # pretokens ahead whose table slots are requested early


cdef struct CandidatesOut:
    vector[int32_t] units        # the units' token ids, candidate after candidate
    vector[int64_t] cand_units   # units per candidate
    vector[int64_t] row_cands    # candidates per row, -1 for NULL
    int32_t error_code


cdef struct CandidatesCall:      # what the threads of one candidates_arrow call share
    void* encoder                # the Encoder (borrowed: the call holds it), or NULL
    void* units                  # else the PretokenUnits (borrowed)
    const uint8_t* eligible
    CandidatesOut* parts


def token_letters(tokens) -> bytes:
    """1 for each token of `tokens` (a binary Arrow array by id; NULL for an unused id) that is UTF-8
    text holding a letter (\\p{L}), else 0: the tokens a candidate unit may be."""
    cdef list keep = []
    cdef BinaryView v = binary_view(tokens, keep)
    flags = PyBytes_FromStringAndSize(NULL, v.length)
    cdef uint8_t* flag = <uint8_t*>PyBytes_AS_STRING(flags)
    cdef int64_t i, start
    with nogil:
        for i in range(v.length):
            start = view_start(v, i)
            flag[i] = view_valid(v, i) and _holds_letter(v.values + start, view_end(v, i) - start)
    return flags


cdef bint _holds_letter(const uint8_t* p, int64_t n) noexcept nogil:
    """Whether p[:n] is valid UTF-8 holding a letter."""
    cdef int64_t i = 0, k
    cdef uint32_t cp
    cdef bint letter = False
    while i < n:
        k = valid_utf8_len(p + i, n - i)
        if k == 0:
            return False
        if not letter:
            next_char(p, i, n, &cp)
            letter = (uc_entry(cp) & UC_L) != 0
        i += k
    return letter


cdef class PretokenUnits:
    """The candidate units of a phase-1 run by pretoken: the pretokens `pretokens[i]` that phase 1
    merged into one token `singles[i]` holding a letter (`letters[t]`), found by their bytes (the
    others: -1), with the pretokenizer phase 1 counted them with (`script_aware`). A token's bytes
    are its pretoken's, so no two pretokens share a token, and the table gives the token itself.
    Read-only once built: any number of threads may look up at once."""
    cdef object keep                 # the pretokens' buffers
    cdef const uint8_t* data
    cdef vector[int64_t] starts      # per unit token: its pretoken's bytes in `data`
    cdef vector[int64_t] ends
    cdef BytesTable table            # the unit pretokens' bytes -> their token
    cdef int pattern
    cdef IdPool* pool

    def __cinit__(self):
        self.pool = id_pool_new()

    def __dealloc__(self):
        if self.pool != NULL:
            id_pool_release(self.pool)

    def __init__(self, pretokens, singles, bytes letters, bint script_aware):
        self.keep = []
        cdef BinaryView v = binary_view(pretokens, self.keep)
        cdef const int32_t[:] single = np.ascontiguousarray(singles, dtype=np.int32)
        if single.shape[0] != v.length:
            raise ValueError("pretokens and singles differ in length")
        cdef const uint8_t* letter = <const uint8_t*><char*>letters
        cdef int64_t n_letters = len(letters), i
        cdef int32_t t
        cdef vector[int32_t] keys
        self.data = v.values
        self.pattern = PAT_SCRIPT_AWARE if script_aware else PAT_O200K
        with nogil:
            self.starts.assign(n_letters, 0)
            self.ends.assign(n_letters, 0)
            for i in range(v.length):
                t = single[i]
                if 0 <= t < n_letters and letter[t]:
                    keys.push_back(t)
                    self.starts[t] = view_start(v, i)
                    self.ends[t] = view_end(v, i)
            bytes_table_build(&self.table, self.data, self.starts.data(), self.ends.data(), keys)


cdef int _found_units(const int32_t* ids, int64_t n_pieces, CandidatesOut& res) noexcept nogil:
    """Append the candidates of a text whose k-th pretoken is unit ids[k] (-1: none) to `res`;
    how many."""
    cdef int64_t k, run_len = 0
    cdef int found = 0
    for k in range(n_pieces + 1):
        if k < n_pieces and ids[k] >= 0:
            res.units.push_back(ids[k])
            run_len += 1
            continue
        if run_len >= 2:
            res.cand_units.push_back(run_len)
            found += 1
        elif run_len == 1:  # a lone eligible pretoken is no candidate
            res.units.pop_back()
        run_len = 0
    return found


cdef int _pretoken_candidates(PretokenUnits units, const uint8_t* p, int64_t n, CandidatesOut& res,
                              vector[int64_t]& ends, vector[int32_t]& ids, vector[uint64_t]& hashes) noexcept nogil:
    """Append the candidates of p[:n] to `res`, its units looked up by pretoken (the table slot of
    the pretoken PREFETCH places ahead requested early, so that the misses overlap); how many, or
    minus a failure code."""
    cdef size_t k, m
    cdef int64_t start = 0
    cdef const BytesTable* table = &units.table
    ends.clear()
    if pretokenize_pattern(p, n, units.pattern, ends) != 0:
        return -PRETOKENIZE_FAILED
    m = ends.size()
    if table.slots.size() == 0:  # (no unit at all)
        return 0
    ids.resize(m)
    piece_hashes(p, n, ends, hashes)
    for k in range(min(m, <size_t>PREFETCH)):
        prefetch(&table.slots[hashes[k] & table.mask])
    for k in range(m):
        if k + PREFETCH < m:
            prefetch(&table.slots[hashes[k + PREFETCH] & table.mask])
        ids[k] = bytes_table_get_hashed(table, units.data, units.starts.data(), units.ends.data(), p + start,
                                        ends[k] - start, hashes[k])
        start = ends[k]
    return _found_units(ids.data(), <int64_t>m, res)


cdef int _text_candidates(Encoder encoder, const uint8_t* p, int64_t n, const uint8_t* eligible,
                          CandidatesOut& res, IdVector& ids, Workspace& ws) noexcept nogil:
    """Append the candidates of p[:n] to `res`; returns how many, or minus the encoder's failure code."""
    cdef size_t k, at = 0
    cdef int32_t t
    cdef int rc
    ids.clear()
    ws.piece_sizes.clear()
    ws.keep_sizes = True
    rc = encoder.encode_ordinary(p, n, ids, ws)
    ws.keep_sizes = False
    if rc:
        return -rc
    for k in range(ws.piece_sizes.size()):  # each pretoken's unit, in place of its first id
        t = ids[at]
        ids[k] = t if ws.piece_sizes[k] == 1 and eligible[t] else -1
        at += ws.piece_sizes[k]
    return _found_units(ids.data(), <int64_t>ws.piece_sizes.size(), res)


cdef int64_t _candidates_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                              int64_t last) noexcept nogil:
    """Rows first..last-1 into part `part`; the row that failed, or -1."""
    cdef CandidatesCall* call = <CandidatesCall*>task
    cdef CandidatesOut* res = &call.parts[part]
    cdef Workspace ws
    cdef IdVector ids
    cdef vector[int64_t] ends
    cdef vector[int32_t] units
    cdef vector[uint64_t] hashes
    cdef int64_t r, start
    cdef int found
    if call.encoder != NULL:
        workspace_init(ws, view_bytes(run.view, first, last), run.threads)
    for r in range(first, last):
        if not view_valid(run.view, r):
            res.row_cands.push_back(-1)
            continue
        start = view_start(run.view, r)
        if call.encoder != NULL:
            found = _text_candidates(<Encoder>call.encoder, run.view.values + start,
                                     view_end(run.view, r) - start, call.eligible, res[0], ids, ws)
        else:
            found = _pretoken_candidates(<PretokenUnits>call.units, run.view.values + start,
                                         view_end(run.view, r) - start, res[0], ends, units, hashes)
        if found < 0:
            res.error_code = -found
            return r
        res.row_cands.push_back(found)
    return -1


def candidates_arrow(Encoder encoder, texts, bytes eligible, int threads=1, bint keys=False):
    """The supermerge candidates of each text as a list<list<int32>> array (one list of unit token
    ids per candidate; NULL stays NULL), or with `keys` a list<binary> array (each candidate's ids as
    native int32 bytes: a key DuckDB groups by several times faster than a list). `eligible[t]` is 1
    for the tokens a unit may be (phase-1 tokens holding a letter); a pretoken is a unit when it
    encodes to exactly one eligible token."""
    if len(eligible) < <size_t>encoder.starts.size():
        raise ValueError("the eligibility mask must cover every token id")
    if encoder.pattern < 0:
        raise ValueError("candidates need one of the built-in pre-tokenization patterns")
    cdef CandidatesCall call
    call.encoder = <void*>encoder
    call.units = NULL
    call.eligible = <const uint8_t*><char*>eligible
    return _candidates(call, texts, threads, keys, encoder.pool)


def pretoken_candidates_arrow(PretokenUnits units, texts, int threads=1, bint keys=False):
    """`candidates_arrow` with the units of each pretoken looked up in `units`."""
    cdef CandidatesCall call
    call.encoder = NULL
    call.units = <void*>units
    call.eligible = NULL
    return _candidates(call, texts, threads, keys, units.pool)


cdef object _candidates(CandidatesCall& call, texts, int threads, bint keys, IdPool* pool):
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    cdef vector[CandidatesOut] parts = vector[CandidatesOut](run.parts)
    call.parts = parts.data()
    rows_run(run, _candidates_rows, NULL, &call)
    if run.error_row >= 0:
        raise SqltokError(failure_message(run.error_row, parts[run.error_part].error_code))
    return _candidates_to_arrow(parts, run.view.length, pool, keys)


cdef bytes _int64_bytes(const vector[int64_t]& v):
    return (<const char*>v.data())[:v.size() * sizeof(int64_t)]


cdef object _candidates_to_arrow(vector[CandidatesOut]& parts, int64_t n, IdPool* pool, bint keys):
    """One list<list<int32>> (with `keys`: list<binary>) Arrow array from the parts' candidates (in
    row order); the units' memory comes from, and goes back to, the id pool `pool`."""
    cdef int64_t unit_bytes = sizeof(int32_t) if keys else 1
    cdef vector[int64_t] cand_off, row_off
    cdef IdVector units
    cdef size_t k, j
    cdef int64_t nulls = 0, row = 0
    cand_off.push_back(0)
    row_off.assign(n + 1, 0)
    validity = PyBytes_FromStringAndSize(NULL, (n + 7) // 8)
    cdef uint8_t* valid = <uint8_t*>PyBytes_AS_STRING(validity)
    memset(valid, 0, (n + 7) // 8)
    for k in range(parts.size()):
        units.insert(units.end(), parts[k].units.begin(), parts[k].units.end())
        for j in range(parts[k].cand_units.size()):
            cand_off.push_back(cand_off.back() + parts[k].cand_units[j] * unit_bytes)
        nulls += add_rows(parts[k].row_cands, row, row_off.data(), valid, False)
        row += <int64_t>parts[k].row_cands.size()
    if keys:
        cands = pa.Array.from_buffers(pa.large_binary(), cand_off.size() - 1,
                                      [None, pa.py_buffer(_int64_bytes(cand_off)), ids_buffer(units, pool)])
    else:
        ids = pa.Array.from_buffers(pa.int32(), units.size(), [None, ids_buffer(units, pool)])
        cands = pa.Array.from_buffers(pa.large_list(pa.int32()), cand_off.size() - 1,
                                      [None, pa.py_buffer(_int64_bytes(cand_off))], children=[ids])
    return pa.Array.from_buffers(pa.large_list(cands.type), n,
                                 [pa.py_buffer(validity) if nulls else None, pa.py_buffer(_int64_bytes(row_off))],
                                 null_count=nulls, children=[cands])
