# cython: language_level=3
"""Phase-1 BPE training: merge pairs over unique pretokens weighted by their counts.

Input comes from DuckDB as Arrow (pretoken VARCHAR, n BIGINT); output is the merge list and the
vocabulary as Arrow arrays, ready to be inserted into the model's tables.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport (BinaryView, binary_view, int64_array, int64_values, large_binary_array,
                            view_end, view_start)

include "merge_state.pxi"

#: Bytes that can occur in UTF-8, in the order of the initial vocabulary (ids 0..242).
BYTE_ALPHABET = tuple(list(range(0x00, 0xC0)) + list(range(0xC2, 0xF5)))


cdef int _load_pretokens(MergeState st, const int32_t* byte_id, object pretokens, object counts) except -1:
    cdef list keep = []
    cdef BinaryView v = binary_view(pretokens, keep)
    cdef int64_t n = len(pretokens)
    if len(counts) != n:
        raise ValueError("pretokens and counts differ in length")
    if pretokens.null_count:
        raise ValueError("pretokens must not be NULL")
    cdef const int64_t* cnt = int64_values(counts, keep)
    cdef int64_t i, j, start, end, bad = -1
    st.units.reserve(view_end(v, n - 1) - view_start(v, 0) if n else 0)
    with nogil:
        for i in range(n):
            start = view_start(v, i)
            end = view_end(v, i)
            st.add_sequence(cnt[i])
            for j in range(start, end):
                if byte_id[v.values[j]] < 0:
                    bad = i
                    break
                st.units.push_back(byte_id[v.values[j]])
            st.close_sequence(<int32_t>(end - start))
            if bad >= 0:
                break
    if bad >= 0:
        raise ValueError(f"pretoken {pretokens[bad].as_py()!r} holds a byte that never occurs in UTF-8")
    return 0


def train_bpe(pretokens, counts, int vocab_size, progress=None, int progress_every=256) -> dict:
    """Learn merges until the vocabulary (243 byte tokens included) has `vocab_size` tokens or no pair
    is left. `pretokens` is a pyarrow binary/string array of unique pretokens, `counts` an int64 array.

    `progress(merges_done, vocab_size_now)` is called every `progress_every` merges, if given.
    Returns pyarrow arrays: merges (`left`, `right`, `new_id`, `count`, `flag`) in order, the
    vocabulary (`tokens` by id, `token_counts`: final frequency of each token), and `singles`: per
    pretoken, the one token it was merged into, or -1 when it stayed more than one.
    """
    if vocab_size < len(BYTE_ALPHABET):
        raise ValueError(f"vocab_size must be at least {len(BYTE_ALPHABET)} (the byte tokens)")
    cdef MergeState st = MergeState()
    cdef int32_t byte_id[256]
    cdef int k
    for k in range(256):
        byte_id[k] = -1
    for k, b in enumerate(BYTE_ALPHABET):
        byte_id[b] = st.intern(bytes([b]))
    _load_pretokens(st, byte_id, pretokens, counts)

    cdef MergeLog log
    cdef vector[int64_t] freqs
    cdef vector[int32_t] singles
    run_merges(st, log, -1, vocab_size, progress, progress_every)
    st.token_frequencies(freqs)
    st.single_tokens(singles)
    return {**log_arrays(log), "tokens": large_binary_array(st.token_bytes), "token_counts": int64_array(freqs),
            "singles": int32_array(singles)}
