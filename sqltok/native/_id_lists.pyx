# cython: language_level=3
"""Arrow lists of token ids as Python lists of ints, each id the shared int object of a list the
tokenizer keeps (`id_objects`), so that no int is made per token: what `encode_batch` and
`encode_ordinary_batch` return for the families whose encoders give Arrow. pyarrow's `to_pylist`
makes an int per id, about 45 ns each; this is a reference count per id."""
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from libc.stdint cimport int32_t, int64_t, uint8_t

import pyarrow as pa

from sqltok.native.arrow_buffers cimport buffer_address
from sqltok.native.id_output cimport collector_pause, collector_resume, id_list


def id_lists(ids, list id_objects not None) -> list:
    """The rows of a (large_)list<int32> array as lists of the `id_objects` (None for NULL), the
    collector paused meanwhile; ValueError for an id out of their range."""
    cdef int64_t n = len(ids), r, start, end, k, size = len(id_objects)
    if not (pa.types.is_list(ids.type) or pa.types.is_large_list(ids.type)) or ids.type.value_type != pa.int32():
        raise TypeError(f"expected list<int32> ids, not {ids.type}")
    offsets = ids.offsets.cast(pa.int64())  # adjusted for a slice: they index the unsliced values
    values = ids.values
    if values.null_count:
        raise ValueError("an id is NULL")
    cdef const int64_t* off = <const int64_t*>buffer_address(offsets.buffers()[1]) + <int64_t>offsets.offset
    cdef const int32_t* val = <const int32_t*>buffer_address(values.buffers()[1]) + <int64_t>values.offset
    cdef const uint8_t* valid = buffer_address(ids.buffers()[0]) if ids.null_count else NULL
    cdef int64_t base = ids.offset
    cdef list rows = PyList_New(n)  # (items set below, each once: a row that fails leaves NULLs, as lists allow)
    cdef object row
    cdef bint collecting = collector_pause()
    try:
        for r in range(n):
            if valid != NULL and not (valid[(base + r) >> 3] >> ((base + r) & 7)) & 1:
                row = None
            else:
                start = off[r]
                end = off[r + 1]
                for k in range(start, end):
                    if val[k] < 0 or val[k] >= size:
                        raise ValueError(f"token id {val[k]} is out of range")
                row = id_list(val + start, end - start, id_objects)
            Py_INCREF(row)
            PyList_SET_ITEM(rows, r, row)
    finally:
        collector_resume(collecting)
    return rows
