# cython: language_level=3
"""Supermerge candidates, the first step of training a two-phase (superword) model: the maximal runs
of two or more pretokens of each text that a phase-1 model encodes to exactly one eligible token
each, as their token ids. The units are found by the phase-1 Encoder, or, where phase 1 was just
trained on the same corpus, by `PretokenUnits`: what phase 1 made of each unique pretoken, looked up
(phase 1 merged each pretoken exactly as its encoder encodes it, so the candidates are the same).
Rows are shared among threads (parallel_rows), the GIL released. For counting, `*_candidate_counts`
give a batch's distinct candidates with their counts instead (`key_counts.pxd`), long texts read in
pieces cut where no candidate crosses (`cut_points.pxd`)."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector

from sqltok.bpe._encode cimport PRETOKENIZE_FAILED, Encoder, failure_message
from sqltok.bpe.key_counts cimport KeyCounts, KeySlot, key_counts_add, key_counts_init
from sqltok.bpe.workspace cimport Workspace, workspace_init
from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_bytes, view_end, view_start, view_valid
from sqltok.native.bytes_table cimport BytesTable, bytes_table_build, bytes_table_get_hashed, piece_hashes
from sqltok.native.id_lists cimport IdVector
from sqltok.native.id_output cimport IdPool, add_rows, id_pool_new, id_pool_release, ids_buffer
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.native.portable cimport prefetch
from sqltok.native.utf8 cimport valid_utf8_len
from sqltok.pretokenizer.cut_points cimport CUT_CANDIDATES, cut_after
from sqltok.pretokenizer.matcher cimport (PAT_O200K, PAT_SCRIPT_AWARE, UC_L, next_char, pretokenize_pattern,
                                          uc_entry)

import numpy as np
import pyarrow as pa

from sqltok.errors import SqltokError
from sqltok.native.first_row_counts import first_row_counts


cdef enum:
    PREFETCH = 16                # pretokens ahead whose table slots are requested early
    MIN_KEY_SLOTS = 1 << 10      # a counting table starts at about a slot per 32 bytes of its text,
    MAX_FIRST_KEY_SLOTS = 1 << 20   # within these, and grows with its distinct keys


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
    KeyCounts* tables            # counting: one per part, into which each piece's candidates go (else NULL)
    int64_t piece_bytes          # counting: texts longer than this are read in pieces (0: whole)


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


cdef int _piece_candidates(CandidatesCall* call, const uint8_t* p, int64_t n, CandidatesOut& res, IdVector& ids,
                           Workspace& ws, vector[int64_t]& ends, vector[int32_t]& units,
                           vector[uint64_t]& hashes) noexcept nogil:
    """Append the candidates of p[:n] to `res`; how many, or minus a failure code."""
    if call.encoder != NULL:
        return _text_candidates(<Encoder>call.encoder, p, n, call.eligible, res, ids, ws)
    return _pretoken_candidates(<PretokenUnits>call.units, p, n, res, ends, units, hashes)


cdef void _count_found(CandidatesOut& res, KeyCounts& table) noexcept nogil:
    """Move the candidates of `res` into the counts of `table`."""
    cdef size_t k
    cdef int64_t at = 0
    for k in range(res.cand_units.size()):
        key_counts_add(table, res.units.data() + at, res.cand_units[k])
        at += res.cand_units[k]
    res.units.clear()
    res.cand_units.clear()


cdef int64_t _candidates_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                              int64_t last) noexcept nogil:
    """Rows first..last-1 into part `part` (counting: into its table, piece by piece); the row that
    failed, or -1."""
    cdef CandidatesCall* call = <CandidatesCall*>task
    cdef CandidatesOut* res = &call.parts[part]
    cdef Workspace ws
    cdef IdVector ids
    cdef vector[int64_t] ends
    cdef vector[int32_t] units
    cdef vector[uint64_t] hashes
    cdef int64_t r, start, end, at, cut
    cdef int found
    if call.encoder != NULL:
        workspace_init(ws, view_bytes(run.view, first, last), run.threads)
    for r in range(first, last):
        if not view_valid(run.view, r):
            if call.tables == NULL:
                res.row_cands.push_back(-1)
            continue
        start = view_start(run.view, r)
        end = view_end(run.view, r)
        if call.tables == NULL:
            found = _piece_candidates(call, run.view.values + start, end - start, res[0], ids, ws, ends, units,
                                      hashes)
            if found < 0:
                res.error_code = -found
                return r
            res.row_cands.push_back(found)
            continue
        at = start
        while at < end:
            if call.piece_bytes <= 0 or end - at <= call.piece_bytes:
                cut = end
            else:  # cut points are found in the whole text: they look back across the piece's start
                cut = start + cut_after(run.view.values + start, at - start + call.piece_bytes, end - start,
                                        CUT_CANDIDATES, True, True)
            found = _piece_candidates(call, run.view.values + at, cut - at, res[0], ids, ws, ends, units, hashes)
            if found < 0:
                res.error_code = -found
                return r
            _count_found(res[0], call.tables[part])
            at = cut
    return -1


def candidates_arrow(Encoder encoder, texts, bytes eligible, int threads=1, bint keys=False):
    """The supermerge candidates of each text as a list<list<int32>> array (one list of unit token
    ids per candidate; NULL stays NULL), or with `keys` a list<binary> array (each candidate's ids as
    native int32 bytes: a key DuckDB groups by several times faster than a list). `eligible[t]` is 1
    for the tokens a unit may be (phase-1 tokens holding a letter); a pretoken is a unit when it
    encodes to exactly one eligible token."""
    return _extract(_encoder_call(encoder, eligible), texts, threads, -1, keys, encoder.pool)


def candidate_counts_arrow(Encoder encoder, texts, bytes eligible, int threads=1, int64_t piece_bytes=0):
    """The distinct supermerge candidates of all `texts` (as `candidates_arrow` finds them) with their
    counts, on the first row: list<struct<unit: large_binary, n: int64>> (each unit a candidate's
    ids as native int32 bytes; 32-bit list offsets, as DuckDB's UDFs take them); the other rows, and
    NULL texts, get empty lists. Texts longer than `piece_bytes` (> 0) are read in pieces cut where
    no candidate crosses; the counts are the same."""
    return _extract(_encoder_call(encoder, eligible), texts, threads, max(piece_bytes, 0), False, NULL)


cdef CandidatesCall _encoder_call(Encoder encoder, bytes eligible) except *:
    if len(eligible) < <size_t>encoder.starts.size():
        raise ValueError("the eligibility mask must cover every token id")
    if encoder.pattern < 0:
        raise ValueError("candidates need one of the built-in pre-tokenization patterns")
    cdef CandidatesCall call
    call.encoder = <void*>encoder
    call.units = NULL
    call.eligible = <const uint8_t*><char*>eligible
    return call


def pretoken_candidate_counts_arrow(PretokenUnits units, texts, int threads=1, int64_t piece_bytes=0):
    """`candidate_counts_arrow` with the units of each pretoken looked up in `units`."""
    return _extract(_units_call(units), texts, threads, max(piece_bytes, 0), False, NULL)


cdef CandidatesCall _units_call(PretokenUnits units):
    cdef CandidatesCall call
    call.encoder = NULL
    call.units = <void*>units
    call.eligible = NULL
    return call


cdef object _extract(CandidatesCall call, texts, int threads, int64_t piece_bytes, bint keys, IdPool* pool):
    """The candidates of `texts` per row (`_candidates_to_arrow`, its units from `pool`), or with
    `piece_bytes` >= 0 counted over them all (`_counts_to_arrow`)."""
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    cdef vector[CandidatesOut] parts = vector[CandidatesOut](run.parts)
    cdef vector[KeyCounts] tables
    cdef int k
    cdef size_t slots = MIN_KEY_SLOTS
    if piece_bytes >= 0:
        tables.resize(run.parts)
        while slots < MAX_FIRST_KEY_SLOTS and \
                slots * 32 * <size_t>run.parts < <size_t>view_bytes(run.view, 0, run.view.length):
            slots <<= 1
        for k in range(run.parts):
            key_counts_init(tables[k], slots)
    call.parts = parts.data()
    call.tables = tables.data() if piece_bytes >= 0 else NULL
    call.piece_bytes = piece_bytes
    rows_run(run, _candidates_rows, NULL, &call)
    if run.error_row >= 0:
        raise SqltokError(failure_message(run.error_row, parts[run.error_part].error_code))
    if piece_bytes >= 0:
        return _counts_to_arrow(tables, run.view.length)
    return _candidates_to_arrow(parts, run.view.length, pool, keys)


cdef object _counts_to_arrow(vector[KeyCounts]& tables, int64_t rows):
    """The tables' keys and counts, all on the first of `rows` rows (see `candidate_counts_arrow`);
    each table's arena holds its keys back to back in the order of `used`."""
    cdef int64_t n = 0, nbytes = 0, k, j, i = 0, at = 0
    for k in range(<int64_t>tables.size()):
        n += <int64_t>tables[k].used.size()
        nbytes += <int64_t>tables[k].arena.size() * <int64_t>sizeof(int32_t)
    offsets = np.empty(n + 1, np.int64)
    counts = np.empty(n, np.int64)
    data = PyBytes_FromStringAndSize(NULL, nbytes)
    cdef int64_t[::1] off = offsets
    cdef int64_t[::1] cnt = counts
    cdef char* out = PyBytes_AS_STRING(data)
    cdef const KeySlot* s
    off[0] = 0
    with nogil:
        for k in range(<int64_t>tables.size()):
            memcpy(out + at, tables[k].arena.data(), tables[k].arena.size() * sizeof(int32_t))
            at += <int64_t>(tables[k].arena.size() * sizeof(int32_t))
            for j in range(<int64_t>tables[k].used.size()):
                s = &tables[k].slots[tables[k].used[j]]
                off[i + 1] = off[i] + s.length * <int64_t>sizeof(int32_t)
                cnt[i] = s.count
                i += 1
    units = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return first_row_counts(units, counts, rows)


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
