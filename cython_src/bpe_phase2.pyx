# cython: language_level=3
"""Phase 2 of superword training: supermerges over aggregated supermerge candidates.

A candidate is a run of pretokens that phase 1 made single tokens; its units are those tokens. The
same merge loop as phase 1 (`merge_state.pxi`) runs over the unique candidates weighted by count.
BoundlessBPE (paper Algorithm 1) replays the phase-1 merges from the byte vocabulary and lets a
supermerge in only when its count is strictly higher than the next regular merge's; SuperBPE adds a
fixed number of supermerges on top of the whole phase-1 vocabulary.
"""
from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from arrow_buffers cimport int8_array, int32_array, int64_array, int64_values, large_binary_array

include "merge_state.pxi"

import pyarrow as pa


cdef int _load_candidates(MergeState st, object candidates, object counts,
                          const vector[string]& p1_tokens) except -1:
    """Each candidate (a list of phase-1 token ids) becomes one weighted sequence of unit tokens."""
    if isinstance(candidates, pa.ChunkedArray):
        candidates = candidates.combine_chunks()
    if not pa.types.is_large_list(candidates.type) or not pa.types.is_int32(candidates.type.value_type):
        candidates = candidates.cast(pa.large_list(pa.int32()))
    if candidates.null_count or len(candidates) != len(counts):
        raise ValueError("candidates must be non-NULL and as many as their counts")
    ids = candidates.values
    if ids.null_count:
        raise ValueError("candidate units must not be NULL")
    cdef list keep = [candidates, ids]
    list_offsets, id_values = candidates.buffers()[1], ids.buffers()[1]
    keep.extend((list_offsets, id_values))
    cdef const int64_t* loff = (<const int64_t*><size_t>list_offsets.address) + <int64_t>candidates.offset
    cdef const int32_t* unit = (<const int32_t*><size_t>id_values.address) + <int64_t>ids.offset
    cdef const int64_t* cnt = int64_values(counts, keep)
    cdef int64_t n = len(candidates), i, u
    cdef int32_t t, nt = <int32_t>p1_tokens.size()
    cdef vector[int32_t] state_id
    state_id.assign(nt, -1)
    cdef int64_t bad = -1
    with nogil:
        for i in range(n):
            st.add_sequence(cnt[i])
            for u in range(loff[i], loff[i + 1]):
                t = unit[u]
                if t < 0 or t >= nt:
                    bad = t
                    break
                if state_id[t] < 0:
                    state_id[t] = st.intern(p1_tokens[t])
                st.units.push_back(state_id[t])
            if bad >= 0:
                break
            st.seq_len[i] = <int32_t>(loff[i + 1] - loff[i])
    if bad >= 0:
        raise ValueError(f"candidate unit {bad} is not a phase-1 token id")
    return 0


cdef class _Vocabulary:
    """The final model's tokens in creation order, by bytes."""
    cdef vector[string] tokens
    cdef vector[int8_t] is_super
    cdef unordered_map[string, int32_t] ids

    cdef int32_t add(self, const string& b, int8_t is_super) except -2 nogil:
        """The id of `b`, added at the end when it is new."""
        cdef unordered_map[string, int32_t].iterator it = self.ids.find(b)
        if it != self.ids.end():
            return deref(it).second
        cdef int32_t tid = <int32_t>self.tokens.size()
        self.tokens.push_back(b)
        self.is_super.push_back(is_super)
        self.ids[b] = tid
        return tid

    cdef int32_t get(self, const string& b) except -2 nogil:
        cdef unordered_map[string, int32_t].iterator it = self.ids.find(b)
        if it == self.ids.end():
            return -1
        return deref(it).second


def train_phase2(candidates, counts, phase1_tokens, phase1_left, phase1_right, phase1_new, phase1_count,
                 int vocab_size, str mode, int supermerges=0, progress=None, int progress_every=256) -> dict:
    """Learn supermerges over unique candidates (`candidates`: a list<int32> array of phase-1 token
    ids, `counts`: int64).

    The phase-1 model is given by its tokens (bytes by id) and its merges (left, right, new token id,
    count), all in its own ids. `mode` "boundless": replay the phase-1 merges from the 243 byte tokens,
    a supermerge winning only with a strictly higher count, until `vocab_size` tokens or no candidate
    pair is left. `mode` "superbpe": keep every phase-1 token (ids unchanged) and add `supermerges`
    supermerges. Returns Arrow arrays: the final vocabulary (`tokens`, `is_super`, `token_counts`: each
    token's frequency in the candidates after phase 2), `regular` (how many phase-1 merges were kept,
    in order) and the supermerges (`left`, `right`, `new_id`, `count`, `flag`) in final ids.
    """
    if mode not in ("boundless", "superbpe"):
        raise ValueError(f"unknown phase-2 mode {mode!r}")
    cdef vector[string] p1_tokens
    for tok in phase1_tokens:
        p1_tokens.push_back(tok)
    cdef MergeState st = MergeState()
    _load_candidates(st, candidates, counts, p1_tokens)
    cdef _Vocabulary voc = _Vocabulary()
    cdef vector[int32_t] p1_left = phase1_left
    cdef vector[int32_t] p1_right = phase1_right
    cdef vector[int32_t] p1_new = phase1_new
    cdef vector[int64_t] p1_count = phase1_count
    cdef size_t t
    cdef bint boundless = mode == "boundless"
    if boundless:
        for t in range(243):
            voc.add(p1_tokens[t], 0)
    else:
        for t in range(p1_tokens.size()):
            if voc.add(p1_tokens[t], 0) != <int32_t>t:
                raise ValueError("the phase-1 tokens must be distinct")

    cdef vector[int32_t] s_left, s_right, s_new
    cdef vector[int64_t] s_count
    cdef vector[int8_t] s_flag
    cdef size_t j = 0, m = p1_new.size(), steps = 0
    cdef int32_t pair, new_id, left, right
    cdef int64_t cs, cr
    cdef string merged
    cdef int bad = 0
    with nogil:
        st.count_all_pairs()
        while True:
            if boundless and <int64_t>voc.tokens.size() >= vocab_size:
                break
            if not boundless and <int64_t>s_new.size() >= supermerges:
                break
            pair = st.best_pair()
            if pair < 0:
                break
            cs = st.pair_count[pair]
            cr = p1_count[j] if boundless and j < m else -1
            if cs > cr:  # a supermerge (ties go to the regular merge)
                left = voc.get(st.token_bytes[st.pair_left[pair]])
                right = voc.get(st.token_bytes[st.pair_right[pair]])
                if left < 0 or right < 0:
                    bad = 1
                    break
                merged = st.token_bytes[st.pair_left[pair]] + st.token_bytes[st.pair_right[pair]]
                new_id = st.intern(merged)
                s_left.push_back(left)
                s_right.push_back(right)
                s_count.push_back(cs)
                s_flag.push_back(st.merge(pair, new_id))
                s_new.push_back(voc.add(merged, 1))
            else:
                voc.add(p1_tokens[p1_new[j]], 0)
                j += 1
            steps += 1
            if steps % progress_every == 0:
                with gil:
                    PyErr_CheckSignals()
                    if progress is not None:
                        progress(s_new.size(), voc.tokens.size())
    if bad:
        raise RuntimeError("a supermerge joins a token that phase 1 has not made yet (inconsistent input)")
    if progress is not None:
        progress(s_new.size(), voc.tokens.size())

    cdef vector[int64_t] freqs, final_counts
    st.token_frequencies(freqs)
    final_counts.assign(voc.tokens.size(), 0)
    cdef int32_t fid
    for t in range(freqs.size()):
        fid = voc.get(st.token_bytes[t])
        if fid >= 0:
            final_counts[fid] = freqs[t]
    return {
        "tokens": large_binary_array(voc.tokens), "is_super": int8_array(voc.is_super),
        "token_counts": int64_array(final_counts), "regular": j if boundless else m,
        "left": int32_array(s_left), "right": int32_array(s_right), "new_id": int32_array(s_new),
        "count": int64_array(s_count), "flag": int8_array(s_flag),
    }
