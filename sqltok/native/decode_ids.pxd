# cython: language_level=3
"""Token ids from Python to bytes or str without Arrow: the direct path of `decode` and
`decode_bytes` for one sequence of ids (list, tuple or any sequence of integers), reading the same
pieces as `decode_arrow`."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.number cimport PyNumber_Index
from cpython.ref cimport PyObject
from cpython.sequence cimport (PySequence_Check, PySequence_Fast, PySequence_Fast_GET_SIZE,
                               PySequence_Fast_ITEMS)
from cpython.unicode cimport PyUnicode_AsUTF8, PyUnicode_DecodeUTF8
from libc.stdint cimport UINT32_MAX, int64_t
from libcpp.string cimport string

from sqltok.native.decode_arrow cimport TokenPieces, add_piece

cdef extern from "Python.h":
    bint _int_exact "PyLong_CheckExact"(PyObject*)


cdef inline int _raise_for(PyObject* token_id, int64_t n_ids) except -1:
    """Raise `token_id_error` of an id of a vocabulary of ids 0..n_ids-1."""
    from sqltok.errors import token_id_error  # (only when failing: an import costs a decode's time)
    raise token_id_error(PyNumber_Index(<object>token_id), n_ids)


cdef inline int _join_pieces(object ids, const TokenPieces& pieces, string& out) except -1:
    """The pieces of `ids` back to back into `out` (see `decode_arrow`). As tiktoken, which converts
    every id to an unsigned 32-bit integer before it decodes: TypeError for the first item that is not
    an integer (as `operator.index` says) or OverflowError for the first id no u32 holds, else
    UnknownTokenError (a KeyError and a ValueError) for the first id without a piece."""
    if not PySequence_Check(ids):  # (as tiktoken: no set, dict or generator, whose order is not the ids')
        raise TypeError(f"token ids must be a sequence of integers, not {type(ids).__name__}")
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
        if overflow or not (bad < 0 and add_piece(pieces, t, &first, out)):
            if overflow or t < 0 or t > UINT32_MAX:
                _raise_for(items[j], pieces.n_ids)
            if bad < 0:
                bad = j  # (the rest is only converted, to raise what it raises first)
    if bad >= 0:
        _raise_for(items[bad], pieces.n_ids)
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
