# cython: language_level=3
"""Token ids from Python to bytes or str without Arrow: the direct path of `decode` and
`decode_bytes` for one sequence of ids (list, tuple or any sequence of integers), reading the same
pieces as `decode_arrow`."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.number cimport PyNumber_Index
from cpython.ref cimport PyObject
from cpython.sequence cimport PySequence_Fast, PySequence_Fast_GET_SIZE, PySequence_Fast_ITEMS
from cpython.unicode cimport PyUnicode_AsUTF8, PyUnicode_DecodeUTF8
from libcpp.string cimport string

from sqltok.native.decode_arrow cimport TokenPieces, add_piece

cdef extern from "Python.h":
    bint _int_exact "PyLong_CheckExact"(PyObject*)


cdef inline int _join_pieces(object ids, const TokenPieces& pieces, string& out) except -1:
    """The pieces of `ids` back to back into `out` (see `decode_arrow`). TypeError for an item that is
    not an integer (as `operator.index` says), else UnknownTokenError (a KeyError, as tiktoken raises,
    and a ValueError) for the first id without a piece."""
    cdef object seq = PySequence_Fast(ids, "token ids must be a sequence of integers")
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), j, bad = -1
    cdef PyObject** items = PySequence_Fast_ITEMS(seq)
    cdef long long t
    cdef int overflow = 0
    cdef bint first = True
    if n > 4:  # (shorter ones fit the string's own buffer more often than not)
        out.reserve(n * 4)
    for j in range(n):
        if _int_exact(items[j]):
            t = PyLong_AsLongLongAndOverflow(<object>items[j], &overflow)
        else:
            t = PyLong_AsLongLongAndOverflow(PyNumber_Index(<object>items[j]), &overflow)
        if bad < 0 and (overflow or not add_piece(pieces, t, &first, out)):
            bad = j  # (the rest is only checked for items that are no integers, as before)
    if bad >= 0:
        from sqltok.errors import UnknownTokenError  # (only when failing: an import costs a decode's time)
        raise UnknownTokenError(f"token id {PyNumber_Index(<object>items[bad])} is not in this vocabulary "
                                f"(ids 0..{pieces.n_ids - 1})")
    return 0


cdef inline bytes decode_ids(object ids, const TokenPieces& pieces):
    """The pieces of `ids` back to back as bytes (errors: see `_join_pieces`)."""
    cdef string out
    _join_pieces(ids, pieces, out)
    return PyBytes_FromStringAndSize(out.data(), out.size())


cdef inline str decode_text(object ids, const TokenPieces& pieces, str errors):
    """`decode_ids(ids, pieces).decode("utf-8", errors)` in one step: the str straight from the joined
    pieces (the same decoder, so the same text, errors and messages)."""
    cdef string out
    _join_pieces(ids, pieces, out)
    return PyUnicode_DecodeUTF8(<char*>out.data(), out.size(), <char*>PyUnicode_AsUTF8(errors))
