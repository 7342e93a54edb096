# cython: language_level=3
"""Supermerge candidates, the first step of training a two-phase (superword) model: the maximal runs
of two or more pretokens of each text that a phase-1 Encoder encodes to exactly one eligible token
each, as their token ids. Rows are shared among threads (parallel_rows), the GIL released."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memset
from libcpp.vector cimport vector

from sqltok.bpe._encode cimport Encoder, failure_message
from sqltok.bpe.workspace cimport Workspace, workspace_init
from sqltok.native.arrow_buffers cimport view_bytes, view_end, view_start, view_valid
from sqltok.native.id_lists cimport IdVector
from sqltok.native.id_output cimport add_rows, ids_buffer
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run

import pyarrow as pa

from sqltok.errors import SqltokError


cdef struct CandidatesOut:
    vector[int32_t] units        # the units' token ids, candidate after candidate
    vector[int64_t] cand_units   # units per candidate
    vector[int64_t] row_cands    # candidates per row, -1 for NULL
    int32_t error_code


cdef struct CandidatesCall:      # what the threads of one candidates_arrow call share
    void* encoder                # the Encoder (borrowed: the call holds it)
    const uint8_t* eligible
    CandidatesOut* parts


cdef int _text_candidates(Encoder encoder, const uint8_t* p, int64_t n, const uint8_t* eligible,
                          CandidatesOut& res, IdVector& ids, Workspace& ws) noexcept nogil:
    """Append the candidates of p[:n] to `res`; returns how many, or minus the encoder's failure code."""
    cdef size_t k, at = 0
    cdef int64_t run_len = 0, found = 0
    cdef int rc
    ids.clear()
    ws.piece_sizes.clear()
    ws.keep_sizes = True
    rc = encoder.encode_ordinary(p, n, ids, ws)
    ws.keep_sizes = False
    if rc:
        return -rc
    for k in range(ws.piece_sizes.size() + 1):
        if k < ws.piece_sizes.size():
            if ws.piece_sizes[k] == 1 and eligible[ids[at]]:
                res.units.push_back(ids[at])
                run_len += 1
                at += 1
                continue
            at += ws.piece_sizes[k]
        if run_len >= 2:
            res.cand_units.push_back(run_len)
            found += 1
        elif run_len == 1:  # a lone eligible pretoken is no candidate
            res.units.pop_back()
        run_len = 0
    return <int>found


cdef int64_t _candidates_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                              int64_t last) noexcept nogil:
    """Rows first..last-1 into part `part`; the row that failed, or -1."""
    cdef CandidatesCall* call = <CandidatesCall*>task
    cdef CandidatesOut* res = &call.parts[part]
    cdef Workspace ws
    cdef IdVector ids
    cdef int64_t r, start
    cdef int found
    workspace_init(ws, view_bytes(run.view, first, last), run.threads)
    for r in range(first, last):
        if not view_valid(run.view, r):
            res.row_cands.push_back(-1)
            continue
        start = view_start(run.view, r)
        found = _text_candidates(<Encoder>call.encoder, run.view.values + start, view_end(run.view, r) - start,
                                 call.eligible, res[0], ids, ws)
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
    cdef list keep = []
    cdef RowRun run
    rows_open(run, texts, keep, threads, False)
    cdef vector[CandidatesOut] parts = vector[CandidatesOut](run.parts)
    cdef CandidatesCall call
    call.encoder = <void*>encoder
    call.eligible = <const uint8_t*><char*>eligible
    call.parts = parts.data()
    rows_run(run, _candidates_rows, NULL, &call)
    if run.error_row >= 0:
        raise SqltokError(failure_message(run.error_row, parts[run.error_part].error_code))
    return _candidates_to_arrow(parts, run.view.length, encoder, keys)


cdef bytes _int64_bytes(const vector[int64_t]& v):
    return (<const char*>v.data())[:v.size() * sizeof(int64_t)]


cdef object _candidates_to_arrow(vector[CandidatesOut]& parts, int64_t n, Encoder encoder, bint keys):
    """One list<list<int32>> (with `keys`: list<binary>) Arrow array from the parts' candidates (in
    row order); the units' memory comes from, and goes back to, the encoder's id pool."""
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
                                      [None, pa.py_buffer(_int64_bytes(cand_off)), ids_buffer(units, encoder.pool)])
    else:
        ids = pa.Array.from_buffers(pa.int32(), units.size(), [None, ids_buffer(units, encoder.pool)])
        cands = pa.Array.from_buffers(pa.large_list(pa.int32()), cand_off.size() - 1,
                                      [None, pa.py_buffer(_int64_bytes(cand_off))], children=[ids])
    return pa.Array.from_buffers(pa.large_list(cands.type), n,
                                 [pa.py_buffer(validity) if nulls else None, pa.py_buffer(_int64_bytes(row_off))],
                                 null_count=nulls, children=[cands])
