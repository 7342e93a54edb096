# cython: language_level=3
"""Zero-copy views of Arrow buffers and Arrow arrays built from C vectors (offsets + values).

Header-only helpers shared by the Cython modules: no Python object per element either way.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libcpp.string cimport string
from libcpp.vector cimport vector


cdef inline const uint8_t* buffer_address(object buf):
    """The address of a pyarrow Buffer (or NULL for None); the caller keeps `buf` alive."""
    if buf is None:
        return NULL
    return <const uint8_t*><size_t>buf.address


cdef inline object int32_array(const vector[int32_t]& v):
    import pyarrow as pa
    data = PyBytes_FromStringAndSize(<const char*>v.data(), v.size() * sizeof(int32_t))
    return pa.Array.from_buffers(pa.int32(), v.size(), [None, pa.py_buffer(data)])


cdef inline object int64_array(const vector[int64_t]& v):
    import pyarrow as pa
    data = PyBytes_FromStringAndSize(<const char*>v.data(), v.size() * sizeof(int64_t))
    return pa.Array.from_buffers(pa.int64(), v.size(), [None, pa.py_buffer(data)])


cdef inline object int8_array(const vector[int8_t]& v):
    import pyarrow as pa
    data = PyBytes_FromStringAndSize(<const char*>v.data(), v.size())
    return pa.Array.from_buffers(pa.int8(), v.size(), [None, pa.py_buffer(data)])


cdef inline object large_binary_array(const vector[string]& items):
    """A large_binary array of `items`, built from one offsets and one values buffer."""
    import pyarrow as pa
    cdef vector[int64_t] offsets
    cdef string values
    cdef size_t i
    offsets.push_back(0)
    for i in range(items.size()):
        values.append(items[i])
        offsets.push_back(<int64_t>values.size())
    off = PyBytes_FromStringAndSize(<const char*>offsets.data(), offsets.size() * sizeof(int64_t))
    val = PyBytes_FromStringAndSize(values.data(), values.size())
    return pa.Array.from_buffers(pa.large_binary(), items.size(),
                                 [None, pa.py_buffer(off), pa.py_buffer(val)])


cdef struct BinaryView:
    # Element i of a (large_)binary/string array is values[start(i):end(i)], NULL where its
    # validity bit is 0 (validity is NULL when no element is NULL).
    const uint8_t* offsets
    const uint8_t* values
    const uint8_t* validity
    int64_t base
    int64_t length
    bint large


cdef inline int64_t view_start(const BinaryView& v, int64_t i) noexcept nogil:
    if v.large:
        return (<const int64_t*>v.offsets)[v.base + i]
    return (<const int32_t*>v.offsets)[v.base + i]


cdef inline int64_t view_end(const BinaryView& v, int64_t i) noexcept nogil:
    return view_start(v, i + 1)


cdef inline int64_t view_bytes(const BinaryView& v, int64_t first, int64_t last) noexcept nogil:
    """The bytes of rows first..last-1."""
    return view_end(v, last - 1) - view_start(v, first) if last > first else 0


cdef inline bint view_valid(const BinaryView& v, int64_t i) noexcept nogil:
    cdef int64_t bit = v.base + i
    return v.validity == NULL or (v.validity[bit >> 3] >> (bit & 7)) & 1


cdef inline BinaryView binary_view(object arr, list keep_alive) except *:
    """A view of a (large_)binary/string array; its buffers are appended to `keep_alive`."""
    arr, off_buf, val_buf, large = binary_offsets_and_data(arr)
    keep_alive.extend((arr, off_buf, val_buf))
    cdef BinaryView v
    v.offsets = buffer_address(off_buf)
    v.values = buffer_address(val_buf)
    v.validity = buffer_address(arr.buffers()[0]) if arr.null_count else NULL
    v.base = arr.offset
    v.length = len(arr)
    v.large = large
    return v


cdef inline const int64_t* int64_values(object arr, list keep_alive) except NULL:
    """The values of an int64 array (cast when it is another integer type); no NULLs allowed."""
    import pyarrow as pa
    if not pa.types.is_int64(arr.type):
        arr = arr.cast(pa.int64())
    if arr.null_count:
        raise ValueError("counts must not be NULL")
    buf = arr.buffers()[1]
    keep_alive.extend((arr, buf))
    return (<const int64_t*>buffer_address(buf)) + <int64_t>arr.offset


cdef inline object binary_offsets_and_data(object arr):
    """(array, offsets buffer, values buffer, is_large) for a pyarrow (large_)binary or (large_)string
    array; string_view and binary_view arrays are cast to their large forms first."""
    import pyarrow as pa
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_string_view(t):
        arr = arr.cast(pa.large_string())
    elif pa.types.is_binary_view(t):
        arr = arr.cast(pa.large_binary())
    t = arr.type
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        large = True
    elif pa.types.is_string(t) or pa.types.is_binary(t):
        large = False
    else:
        raise TypeError(f"expected a string or binary array, got {t}")
    bufs = arr.buffers()
    return arr, bufs[1], bufs[2], large
