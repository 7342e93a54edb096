# cython: language_level=3
"""SentencePiece's text normalizer over Arrow, for the Unigram trainer: the encoder's own
(`sqltok/sentencepiece/normalizer.pxd`: the precompiled charsmap, then the whitespace rules), with no
user-defined symbols (the trainer replaces meta pieces afterwards). Rows are normalized with the GIL
released."""
from libc.stdint cimport int64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, large_binary_array, view_end, view_start
from sqltok.native.arrow_buffers cimport view_valid
from sqltok.sentencepiece.charsmap cimport charsmap_build
from sqltok.sentencepiece.normalizer cimport Normalizer, normalize


def normalize_array(texts, bytes charsmap, bint add_dummy_prefix=True, bint remove_extra_whitespaces=True,
                    bint escape_whitespaces=True, bint treat_whitespace_as_suffix=False):
    """Each text of a (large_)string array normalized as SentencePiece does, as large_binary (NULL
    becomes empty). `charsmap` is a precompiled charsmap blob (b"": no rules)."""
    cdef list keep = []
    cdef BinaryView v = binary_view(texts, keep)
    cdef Normalizer m
    cdef int64_t i
    cdef vector[string] out
    charsmap_build(&m.charsmap, charsmap)
    m.user = NULL
    m.user_root = 0
    m.add_dummy_prefix = add_dummy_prefix
    m.remove_extra_whitespaces = remove_extra_whitespaces
    m.escape_whitespaces = escape_whitespaces
    m.suffix = treat_whitespace_as_suffix
    m.spaces_only_trailing = False
    out.resize(v.length)
    with nogil:
        for i in range(v.length):
            if view_valid(v, i):
                normalize(&m, v.values + view_start(v, i), view_end(v, i) - view_start(v, i), out[i], NULL)
    return large_binary_array(out)
