# cython: language_level=3
"""Token ids to text over Arrow: each row of a list<integer> array becomes its tokens' pieces back to
back (BPE: each token's bytes; WordPiece: a token's text at the start of a sequence or after it, with
special tokens left out), built from one offsets and one values buffer, the GIL released."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport UINT32_MAX, int32_t, int64_t, uint8_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.id_lists cimport IdListView, id_list_view


cdef struct TokenPieces:
    const char* data            # piece k is data[starts[k]:ends[k]]
    const int64_t* starts
    const int64_t* ends
    int64_t n_ids               # ids 0..n_ids-1
    int64_t later               # id t after a row's first piece is piece t + later (0: piece t)
    const uint8_t* valid        # 0 for the ids below n_ids that have no piece (NULL: all have one)
    const uint8_t* skip         # 1 for the ids that decode to nothing (NULL: none)


cdef inline bint add_piece(const TokenPieces& pieces, int64_t t, bint* first, string& out) noexcept nogil:
    """Append the piece of id t to `out` (nothing for a skipped id; `first`: none yet in this
    sequence, updated); False when t has no piece."""
    cdef int64_t piece
    if t < 0 or t >= pieces.n_ids or (pieces.valid != NULL and not pieces.valid[t]):
        return False
    if pieces.skip != NULL and pieces.skip[t]:
        return True
    piece = t if first[0] else t + pieces.later
    out.append(pieces.data + pieces.starts[piece], pieces.ends[piece] - pieces.starts[piece])
    first[0] = False
    return True


ctypedef fused token_id:
    int32_t
    int64_t


cdef inline int64_t _join_rows(const token_id* tok, const int64_t* loff, int64_t n, const TokenPieces& pieces,
                               string& out, vector[int64_t]& offs, int64_t* row) noexcept nogil:
    """The pieces of rows 0..n-1 of ids `tok` (offsets `loff`) into `out`, each row's end in `offs`; -1,
    or the index of the first id without a piece (its row in `row`)."""
    cdef int64_t r, j
    cdef bint first
    for r in range(n):
        first = True
        for j in range(loff[r], loff[r + 1]):
            if not add_piece(pieces, tok[j], &first, out):
                row[0] = r
                return j
        offs.push_back(<int64_t>out.size())
    return -1


cdef inline int64_t _id_at(const IdListView& view, int64_t j) noexcept nogil:
    return view.wide[j] if view.wide != NULL else view.ids[j]


cdef inline object decode_arrow(object ids, const TokenPieces& pieces, object out_type):
    """The pieces of each row of the list<integer> array `ids` as an `out_type` array (large_binary or
    large_string); NULL stays NULL. The first row with an id without a piece raises `token_id_error`
    of its first id outside 0..2**32-1 (an OverflowError), if any, as tiktoken converts a row's ids
    before it decodes them, else of that id (UnknownTokenError, a ValueError and a KeyError). int64
    ids (SQL's BIGINT[]) are read as they are."""
    import pyarrow as pa
    cdef list keep = []
    cdef IdListView view = id_list_view(ids, keep, True)
    ids = keep[0]  # the array as read: large_list
    cdef const int64_t* loff = view.offsets
    cdef int64_t n = view.length, r = 0, j, bad
    cdef string out
    cdef vector[int64_t] offs
    offs.push_back(0)
    with nogil:
        if view.wide != NULL:
            bad = _join_rows(view.wide, loff, n, pieces, out, offs, &r)
        else:
            bad = _join_rows(view.ids, loff, n, pieces, out, offs, &r)
    if bad >= 0:
        from sqltok.errors import token_id_error
        for j in range(loff[r], loff[r + 1]):
            if not 0 <= _id_at(view, j) <= UINT32_MAX:
                bad = j
                break
        raise token_id_error(_id_at(view, bad), pieces.n_ids)
    off_bytes = PyBytes_FromStringAndSize(<const char*>offs.data(), offs.size() * sizeof(int64_t))
    data = pa.Array.from_buffers(out_type, n, [None, pa.py_buffer(off_bytes), pa.py_buffer(out)])
    if ids.null_count:
        return pa.compute.if_else(ids.is_null(), pa.scalar(None, out_type), data)
    return data
