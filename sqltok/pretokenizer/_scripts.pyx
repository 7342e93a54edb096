# cython: language_level=3
"""The dominant Unicode script of each text: the Script property value (Unicode 17.0) that the most
code points have, Common, Inherited and Unknown not counted; a text with none of another script is
`Common`. Ties go to the script that reached the count first. One pass over the UTF-8 bytes, GIL released."""
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.string cimport memset
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport (BinaryView, binary_view, int32_array, view_end, view_start,
                                          view_valid)
from sqltok.pretokenizer.matcher cimport (SC_COMMON, SC_COUNT, SC_INHERITED, SC_NAMES, SC_UNKNOWN,
                                          next_char, uc_entry)

import pyarrow as pa


cdef int32_t dominant(const unsigned char* s, Py_ssize_t n, int64_t* counts) noexcept nogil:
    """The script code most code points of s[0:n] have (see the module docstring)."""
    cdef Py_ssize_t i = 0
    cdef uint32_t cp
    cdef int script, best = SC_COMMON
    memset(counts, 0, SC_COUNT * sizeof(int64_t))
    while i < n:
        i = next_char(s, i, n, &cp)
        script = uc_entry(cp) >> 8
        if script == SC_COMMON or script == SC_INHERITED or script == SC_UNKNOWN:
            continue
        counts[script] += 1
        if best == SC_COMMON or counts[script] > counts[best]:
            best = script
    return best


def dominant_script_arrow(arr: "pa.Array") -> "pa.Array":
    """The dominant script's name (string) of every row of a (large_)string array; NULL stays NULL."""
    cdef list keep = []
    cdef BinaryView v = binary_view(arr, keep)
    cdef vector[int32_t] codes
    cdef vector[int64_t] counts
    cdef int64_t r, a
    codes.resize(v.length)
    counts.resize(SC_COUNT)
    with nogil:
        for r in range(v.length):
            a = view_start(v, r)
            codes[r] = dominant(v.values + a, view_end(v, r) - a, counts.data()) if view_valid(v, r) else 0
    names = pa.array([SC_NAMES[i].decode() for i in range(SC_COUNT)], pa.string())
    out = names.take(int32_array(codes))
    src = keep[0]
    return out if not src.null_count else pa.compute.if_else(pa.compute.is_valid(src), out, pa.scalar(None, pa.string()))
