# cython: language_level=3
"""Id rows to Arrow (list<int32> ids or int64 counts) and to Python lists of ints (`id_list` for
one row: the direct path of single texts).

The ids go to Arrow without a copy; when Arrow lets go of them, their vector goes back to the
encoder's `IdPool` for the next call, so that its pages are not faulted in and zeroed again.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.list cimport PyList_New
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_GetPointer, PyCapsule_New, PyCapsule_SetContext
from cpython.ref cimport PyObject
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector

from sqltok.native.id_lists cimport IdRows, IdVector


cdef enum:
    POOL_MAX_IDS = 1 << 24      # a spare vector is kept up to this capacity (64 MiB)


cdef cppclass IdPool:
    IdVector spare              # an emptied ids vector, its memory already touched
    int64_t refs                # the encoder and every Arrow buffer lent from it (all under the GIL)


cdef inline IdPool* id_pool_new():
    cdef IdPool* pool = new IdPool()
    pool.refs = 1
    return pool


cdef inline void id_pool_release(IdPool* pool) noexcept:
    pool.refs -= 1
    if pool.refs == 0:
        del pool


cdef inline void id_pool_take(IdPool* pool, IdVector& ids) noexcept:
    """Give `ids` the spare vector's memory, if there is one (call with the GIL)."""
    if pool.spare.capacity() > ids.capacity():
        ids.swap(pool.spare)


cdef inline void _return_ids(object capsule) noexcept:
    cdef IdVector* ids = <IdVector*>PyCapsule_GetPointer(capsule, NULL)
    cdef IdPool* pool = <IdPool*>PyCapsule_GetContext(capsule)
    if pool.refs > 1 and ids.capacity() <= POOL_MAX_IDS and ids.capacity() > pool.spare.capacity():
        ids.clear()
        pool.spare.swap(ids[0])
    del ids
    id_pool_release(pool)


cdef inline object ids_buffer(IdVector& ids, IdPool* pool):
    """An Arrow buffer over `ids`' memory, taken from the vector (swapped out, not copied); it goes
    back to `pool` with the buffer."""
    import pyarrow as pa
    cdef IdVector* own = new IdVector()
    own.swap(ids)
    if own.capacity() == 0:
        own.reserve(1)  # Arrow wants an address even for no values
    capsule = PyCapsule_New(own, NULL, <void(*)(object) noexcept>_return_ids)
    PyCapsule_SetContext(capsule, pool)
    pool.refs += 1
    return pa.foreign_buffer(<size_t>own.data(), own.size() * sizeof(int32_t), capsule)


cdef inline int64_t add_rows(const vector[int64_t]& lengths, int64_t row, int64_t* out, uint8_t* valid,
                             bint counts_only) noexcept:
    """Rows `row`.. of a list array from their lengths (-1: NULL): validity bits, and list offsets in
    out[row + 1..] (out[row] already set), or the lengths themselves with `counts_only`. Returns how
    many were NULL."""
    cdef int64_t ln, nulls = 0
    cdef size_t j
    for j in range(lengths.size()):
        ln = lengths[j]
        if ln < 0:
            nulls += 1
            ln = 0
        else:
            valid[row >> 3] |= 1 << (row & 7)
        if counts_only:
            out[row] = ln
        else:
            out[row + 1] = out[row] + ln
        row += 1
    return nulls


cdef inline void _copy_share(vector[IdRows]& parts, int w, int workers, int64_t n0, int32_t* dst) noexcept nogil:
    """Share w of `workers` of the copying of parts 1.. to dst[n0:]: an equal slice of their ids."""
    cdef int64_t tail = 0, at = n0, a, b, lo, hi
    cdef size_t k
    for k in range(1, parts.size()):
        tail += <int64_t>parts[k].ids.size()
    a = n0 + tail * w // workers
    b = n0 + tail * (w + 1) // workers
    for k in range(1, parts.size()):
        lo = max(a, at)
        hi = min(b, at + <int64_t>parts[k].ids.size())
        if hi > lo:
            memcpy(dst + lo, parts[k].ids.data() + (lo - at), (hi - lo) * sizeof(int32_t))
        at += <int64_t>parts[k].ids.size()


cdef inline void _gather_ids(vector[IdRows]& parts, int64_t total, int threads) noexcept nogil:
    """Append the ids of parts 1.. to part 0's vector, the copying (and the page faults of its new
    memory) shared among `threads` threads."""
    cdef int64_t n0 = <int64_t>parts[0].ids.size()
    cdef int w
    cdef size_t k
    parts[0].ids.resize(total)  # left unzeroed: the threads write every new element
    cdef int32_t* dst = parts[0].ids.data()
    for w in prange(threads, num_threads=threads, schedule="static"):
        _copy_share(parts, w, threads, n0, dst)
    for k in range(1, parts.size()):
        IdVector().swap(parts[k].ids)


cdef inline object id_rows_arrow(vector[IdRows]& parts, bint counts_only, IdPool* pool, int threads):
    """One Arrow array of the parts' rows in order: list<int32> ids, or int64 counts. The ids of later
    parts are appended to the first part's vector (callers that reserve room for all save a move) by
    `threads` threads, and its memory then goes to Arrow."""
    import pyarrow as pa
    cdef int64_t n = 0, total = 0, nulls = 0, row = 0
    cdef size_t k
    for k in range(parts.size()):
        n += <int64_t>parts[k].lengths.size()
        total += <int64_t>parts[k].ids.size()
    if not counts_only and parts.size() > 1:
        with nogil:
            _gather_ids(parts, total, threads)
    validity = PyBytes_FromStringAndSize(NULL, (n + 7) // 8)
    cdef uint8_t* valid = <uint8_t*>PyBytes_AS_STRING(validity)
    memset(valid, 0, (n + 7) // 8)
    lengths = PyBytes_FromStringAndSize(NULL, (n + (0 if counts_only else 1)) * sizeof(int64_t))
    cdef int64_t* out = <int64_t*>PyBytes_AS_STRING(lengths)
    if not counts_only:
        out[0] = 0
    for k in range(parts.size()):
        nulls += add_rows(parts[k].lengths, row, out, valid, counts_only)
        row += <int64_t>parts[k].lengths.size()
    bitmap = pa.py_buffer(validity) if nulls else None
    if counts_only:
        return pa.Array.from_buffers(pa.int64(), n, [bitmap, pa.py_buffer(lengths)], null_count=nulls)
    values = pa.Array.from_buffers(pa.int32(), total, [None, ids_buffer(parts[0].ids, pool)])
    return pa.Array.from_buffers(pa.large_list(pa.int32()), n, [bitmap, pa.py_buffer(lengths)],
                                 null_count=nulls, children=[values])




cdef extern from "Python.h":
    # borrowed / stolen references as raw pointers: no reference counting by Cython per id
    PyObject* _list_get "PyList_GET_ITEM"(object, Py_ssize_t)
    void _list_set "PyList_SET_ITEM"(object, Py_ssize_t, PyObject*)
    void _incref "Py_INCREF"(PyObject*)


cdef inline void id_list_fill(list out, int64_t at, const int32_t* ids, int64_t n, list id_objects):
    """Put ids[:n] in the new list `out` from item `at` on, each id the shared int object of `id_objects`."""
    cdef int64_t i
    cdef PyObject* item
    for i in range(n):
        item = _list_get(id_objects, ids[i])
        _incref(item)
        _list_set(out, at + i, item)


cdef inline list id_list(const int32_t* ids, int64_t n, list id_objects):
    """ids[:n] as a Python list, each id the shared int object of `id_objects` (no int made per token)."""
    cdef list out = PyList_New(n)
    id_list_fill(out, 0, ids, n, id_objects)
    return out


cdef inline void id_rows_into(list rows, int64_t at, IdRows& part, list id_objects):
    """Put the rows of `part` in the new list `rows` from item `at` on, as `id_rows_lists` makes them,
    then free the part's ids."""
    cdef size_t j
    cdef int64_t start = 0, ln
    cdef object item
    for j in range(part.lengths.size()):
        ln = part.lengths[j]
        if ln < 0:
            item = None
        else:
            item = id_list(part.ids.data() + start, ln, id_objects)
            start += ln
        _incref(<PyObject*>item)
        _list_set(rows, at + <int64_t>j, <PyObject*>item)
    IdVector().swap(part.ids)


cdef inline list _rows_to_lists(vector[IdRows]& parts, list id_objects):
    cdef size_t k
    cdef int64_t n = 0
    for k in range(parts.size()):
        n += <int64_t>parts[k].lengths.size()
    cdef list rows = PyList_New(n)
    n = 0
    for k in range(parts.size()):
        id_rows_into(rows, n, parts[k], id_objects)
        n += <int64_t>parts[k].lengths.size()
    return rows


cdef inline bint collector_pause():
    """Pause Python's garbage collector while lists of ints are built: they make no cycles, so no
    collection need pass over them as they grow. True when it was on (give it to `collector_resume`)."""
    import gc
    collecting = gc.isenabled()
    gc.disable()
    return collecting


cdef inline void collector_resume(bint collecting):
    if collecting:
        import gc
        gc.enable()


cdef inline list id_rows_lists(vector[IdRows]& parts, list id_objects):
    """The parts' rows in order as Python lists of ints (what tiktoken-style callers want; None for
    NULL), each id the shared int object of `id_objects` (no int created per token); the parts' ids
    are freed on the way. The collector pauses meanwhile (`collector_pause`)."""
    cdef bint collecting = collector_pause()
    try:
        return _rows_to_lists(parts, id_objects)
    finally:
        collector_resume(collecting)
