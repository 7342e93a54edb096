# cython: language_level=3
"""Merges learned on top of an existing byte-level BPE model: the unique pretokens of a new corpus,
each already encoded by the base model, weighted by their counts, merged by sqltok's BPE merge loop
(`merge_state.pxi`: the same pair counting, best-pair order and left-to-right merging as training
from bytes). The base's tokens keep their ids; a merge whose bytes are a base token yields that token.
"""
from libc.stdint cimport int32_t, int64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport buffer_address, int64_array, int64_values

import pyarrow as pa

include "../bpe/merge_state.pxi"


def extend_merges(sequences, counts, list tokens, int64_t add, progress=None, int progress_every=256) -> dict:
    """Learn up to `add` merges over `sequences` (a large_list<int32> array: each unique pretoken as
    base token ids) weighted by `counts` (int64); `tokens` are the base's token bytes by id.

    Returns pyarrow arrays: merges (`left`, `right`, `new_id`, `count`, `flag`) in order, `tokens`
    (the bytes of the new ids, len(tokens) on; a base id whose entry is None has no token and cuts the
    sequences that hold it), `token_counts` (the weighted frequency of every id
    in the merged sequences). `progress(merges_done, tokens)` every `progress_every` merges."""
    cdef MergeState st = MergeState()
    cdef int32_t n_base = len(tokens)
    cdef int32_t i
    cdef list keep = []
    for t in tokens:
        if t is None:                   # an id without a mergeable token: held, never matched
            st.token_bytes.push_back(string())
        elif st.intern(t) != <int32_t>st.token_bytes.size() - 1:
            raise ValueError(f"the base vocabulary holds {t!r} twice")
    sequences = sequences.cast(pa.large_list(pa.int32()))
    if sequences.null_count or len(sequences) != len(counts):
        raise ValueError("sequences must be as many as counts, none NULL")
    values = sequences.values          # the offsets index it directly
    offsets_buf = sequences.buffers()[1]
    keep.extend((sequences, values, offsets_buf))
    cdef const int64_t* offsets = (<const int64_t*>buffer_address(offsets_buf)) + <int64_t>sequences.offset
    cdef const int32_t* ids = (<const int32_t*>buffer_address(values.buffers()[1])) + <int64_t>values.offset
    cdef const int64_t* cnt = int64_values(counts, keep)
    cdef int64_t n = len(sequences), w, j, bad = -1
    cdef int32_t length
    cdef bint cut
    with nogil:
        for w in range(n):
            cut = False
            for j in range(offsets[w], offsets[w + 1]):
                if ids[j] < 0 or ids[j] >= n_base:
                    bad = w
                    break
                cut = cut or st.token_bytes[ids[j]].size() == 0
            if bad >= 0:
                break
            # an id without a token (an HF added token the base matched in the pretoken) cuts the
            # sequence: HF splits added tokens out of the text first and merges the pieces apart
            length = 0
            for j in range(offsets[w], offsets[w + 1]):
                if st.token_bytes[ids[j]].size() == 0:
                    if length:
                        st.close_sequence(length)
                    length = 0
                    continue
                if length == 0:
                    st.add_sequence(cnt[w], cut)
                st.units.push_back(ids[j])
                length += 1
            if length:
                st.close_sequence(length)
    if bad >= 0:
        raise ValueError(f"sequence {bad} holds an id that is not a base token")
    cdef MergeLog log
    cdef vector[int64_t] freqs
    run_merges(st, log, add, -1, progress, progress_every)
    st.token_frequencies(freqs)
    return {**log_arrays(log), "token_counts": int64_array(freqs),
            "tokens": pa.array([bytes(st.token_bytes[i]) for i in range(n_base, <int32_t>st.token_bytes.size())],
                               pa.large_binary())}
