# cython: language_level=3
"""Token ids in C vectors: a thread's output rows (lengths, -1 for NULL, and ids back to back), and a
zero-copy view of a list<integer> Arrow array of ids (the input of decoding and training).
Their Arrow output is `id_output.pxd`.
"""
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector


cdef extern from "id_allocator.h":
    cdef cppclass SqltokIdAllocator[T]:
        pass

ctypedef vector[int32_t, SqltokIdAllocator[int32_t]] IdVector  # resize() does not zero (id_allocator.h)


cdef struct IdRows:
    vector[int64_t] lengths     # tokens per row, -1 for a NULL row
    IdVector ids                # all rows' ids back to back (empty when only counting)
    int64_t error_row           # the first row that failed, or -1
    int32_t error_code          # what failed there (the encoder's own codes)


cdef inline void id_rows_move(vector[IdRows]& to, IdRows& rows) noexcept:
    """Append `rows` to `to`, its vectors moved (swapped), not copied."""
    to.push_back(IdRows())
    to.back().lengths.swap(rows.lengths)
    to.back().ids.swap(rows.ids)
    to.back().error_row = rows.error_row
    to.back().error_code = rows.error_code


cdef struct IdListView:
    # Row r of a list<integer> array is ids[offsets[r]:offsets[r + 1]] (NULL rows are empty), or
    # wide[...] when the caller took int64 ids as they are (`id_list_view(wide=True)`; ids is NULL then).
    const int32_t* ids
    const int64_t* wide
    const int64_t* offsets
    int64_t length


cdef inline IdListView id_list_view(object ids, list keep_alive, bint wide=False) except *:
    """A view of a list<integer> array as int32 ids and int64 offsets (cast when needed), or with `wide`
    int64 ids as they are (SQL's BIGINT[], which every id list DuckDB holds casts to: no copy); the
    arrays and buffers it reads are appended to `keep_alive`. NULL ids are an error, and so is an id
    that no int32 holds (`ids_error`: no vocabulary has it) when they are cast."""
    import pyarrow as pa
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    value_type = pa.int64() if wide and getattr(ids.type, "value_type", None) == pa.int64() else pa.int32()
    try:
        if not pa.types.is_large_list(ids.type):
            from sqltok.native.list_views import as_large_list
            ids = as_large_list(ids, value_type)
        flat = ids.values.cast(value_type)
    except pa.ArrowInvalid:
        if not pa.types.is_integer(ids.type.value_type):
            raise
        from sqltok.errors import ids_error
        raise ids_error(ids.values.drop_null().to_pylist()) from None
    if flat.null_count:
        raise ValueError("token ids must not be NULL")
    values, offsets = flat.buffers()[1], ids.buffers()[1]
    keep_alive.extend((ids, flat, values, offsets))
    cdef IdListView v
    v.ids = NULL
    v.wide = NULL
    if value_type == pa.int64():
        v.wide = (<const int64_t*><size_t>values.address) + <int64_t>flat.offset
    else:
        v.ids = (<const int32_t*><size_t>values.address) + <int64_t>flat.offset
    v.offsets = (<const int64_t*><size_t>offsets.address) + <int64_t>ids.offset
    v.length = len(ids)
    return v
