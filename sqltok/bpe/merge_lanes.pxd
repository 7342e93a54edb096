# cython: language_level=3
"""The batched merge of the short pretokens of a text that need merging: each left a placeholder in
the output (-1 - q for the q-th waiting); they are merged LANES side by side, so that the merge-table
misses of one overlap with the work of the others, and their ids then put in place of the
placeholders."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, memmove
from libcpp.vector cimport vector

from sqltok.bpe.char_atoms cimport TOO_MANY, CharAtoms, has_atoms, load_symbols
from sqltok.bpe.merge_scan cimport NO_RANK, SHORT_PIECE, ByteMerges, load_bytes, merge_step
from sqltok.bpe.merge_table cimport MergeTable, merge_table_rank_from, merge_table_start
from sqltok.native.id_lists cimport IdVector
from sqltok.native.portable cimport prefetch


cdef enum:
    LANES = 16                # pretokens merged side by side, so that their table lookups overlap


cdef struct Pending:          # a pretoken waiting to be merged
    const uint8_t* p
    int64_t n
    uint64_t hash             # its bytes_hash
    int64_t key               # its key's index in the caller's keys, -1: none
    int64_t start             # its ids: ids[start:start + count] of `merge_lanes`; -1: not yet known
    int64_t count
    bint merged               # merge_lanes merged it (its ids did not come from elsewhere)


cdef struct Lane:             # one pretoken being merged
    int32_t sym[SHORT_PIECE]
    int32_t ranks[SHORT_PIECE]
    int32_t results[SHORT_PIECE]
    size_t n
    int32_t last              # rank of the last merge applied
    int64_t q                 # its index in the pending ones, -1: idle
    int64_t look[2]           # pairs whose rank is to be looked up before the next scan, -1: none
    uint64_t start[2]         # where their lookups start in the merge table (prefetched)


cdef enum:
    LANE_READY = 0
    LANE_NO_TOKEN = 1         # a byte has no token
    LANE_TOO_LONG = 2         # over SHORT_PIECE tokens even with atoms: left for the caller


cdef inline int _lane_start(const MergeTable* table, const ByteMerges* b, const CharAtoms* atoms, Lane* lane,
                            int64_t q, const Pending* pend) noexcept nogil:
    """Load the tokens of pending pretoken q into `lane` (its bytes, or its atoms: `char_atoms`)."""
    cdef int64_t m, stop
    if has_atoms(atoms, pend.p, pend.n):
        m = load_symbols(b, atoms, table, pend.p, pend.n, 0, False, &stop, lane.sym, lane.ranks, lane.results)
        if m == TOO_MANY:
            return LANE_TOO_LONG
        if m < 0:
            return LANE_NO_TOKEN
        lane.n = <size_t>m
    elif pend.n > SHORT_PIECE:
        return LANE_TOO_LONG
    elif not load_bytes(b, pend.p, pend.n, lane.sym, lane.ranks, lane.results):
        return LANE_NO_TOKEN
    else:
        lane.n = pend.n
    lane.last = -1
    lane.q = q
    lane.look[0] = -1
    lane.look[1] = -1
    return LANE_READY


cdef inline int _next_lane(const MergeTable* table, const ByteMerges* b, const CharAtoms* atoms, Lane* lane,
                           vector[Pending]& pending, int64_t* next_q) noexcept nogil:
    """Start `lane` on the next waiting pretoken that fits (those that do not stay waiting); 1 when
    one was started, 0 when none is left, -1 when a byte has no token."""
    cdef int64_t nq = <int64_t>pending.size()
    cdef int r
    while True:
        next_q[0] = _waiting(pending, next_q[0])
        if next_q[0] >= nq:
            return 0
        r = _lane_start(table, b, atoms, lane, next_q[0], &pending[next_q[0]])
        next_q[0] += 1
        if r == LANE_READY:
            return 1
        if r == LANE_NO_TOKEN:
            return -1


cdef inline int64_t _waiting(const vector[Pending]& pending, int64_t q) noexcept nogil:
    """The first pending pretoken from q on whose ids are not known yet (pending.size(): none)."""
    while q < <int64_t>pending.size() and pending[q].start >= 0:
        q += 1
    return q


cdef inline int merge_lanes(const MergeTable* table, const ByteMerges* b, const CharAtoms* atoms, bint guard,
                            vector[Pending]& pending, vector[int32_t]& ids) noexcept nogil:
    """Merge the `pending` pretokens (of up to SHORT_PIECE tokens to start from: bytes, or atoms;
    longer ones stay waiting, `start` < 0, for the caller) LANES at a time: a lane looks up the
    pairs its last merge made (their slots were prefetched then), applies one merge and prefetches
    the next lookups, then the next lane runs, so memory latency overlaps across pretokens. Their ids
    go to `ids` after those already there (each Pending says where). Pretokens whose ids are known
    already (`start` >= 0) are left as they are. 1 when a byte has no token."""
    cdef Lane lanes[LANES]
    cdef Lane* lane
    cdef Pending* pend
    cdef int64_t next_q = 0, i
    cdef int j, k, r, active = 0
    cdef bint more
    for k in range(LANES):
        lanes[k].q = -1
        r = _next_lane(table, b, atoms, &lanes[k], pending, &next_q)
        if r < 0:
            return 1
        active += r
    while active > 0:
        for k in range(LANES):
            lane = &lanes[k]
            if lane.q < 0:
                continue
            for j in range(2):
                i = lane.look[j]
                if i >= 0:
                    lane.ranks[i] = merge_table_rank_from(table, lane.start[j], lane.sym[i], lane.sym[i + 1],
                                                          &lane.results[i], NO_RANK)
            more = lane.n > 1 and merge_step(guard, lane.sym, lane.ranks, lane.results, &lane.n, &lane.last,
                                             lane.look)
            if more:
                for j in range(2):
                    i = lane.look[j]
                    if i >= 0:
                        lane.start[j] = merge_table_start(table, lane.sym[i], lane.sym[i + 1])
                        prefetch(&table.slots[lane.start[j]])
                continue
            pend = &pending[lane.q]
            pend.start = <int64_t>ids.size()
            pend.count = <int64_t>lane.n
            pend.merged = True
            ids.insert(ids.end(), lane.sym, lane.sym + lane.n)
            lane.q = -1
            active -= 1
            r = _next_lane(table, b, atoms, lane, pending, &next_q)
            if r < 0:
                return 1
            active += r
    return 0


cdef inline void fill_placeholders(IdVector& out, const vector[size_t]& holes, const vector[Pending]& pending,
                                   const vector[int32_t]& ids) noexcept nogil:
    """Replace each placeholder -1 - q (at the positions `holes`, in order) by the ids of pending
    pretoken q: from the last one back, the ids after each move up by whole runs."""
    cdef size_t k, h, run, w, end = out.size(), extra = 0
    cdef const Pending* pend
    for k in range(holes.size()):
        extra += <size_t>pending[-1 - out[holes[k]]].count - 1
    out.resize(end + extra)
    w = end + extra
    k = holes.size()
    while k > 0:
        k -= 1
        h = holes[k]
        pend = &pending[-1 - out[h]]
        run = end - h - 1
        w -= run
        if w != h + 1:
            memmove(&out[w], &out[h + 1], run * sizeof(int32_t))
        w -= <size_t>pend.count
        memcpy(&out[w], ids.data() + pend.start, pend.count * sizeof(int32_t))
        end = h
