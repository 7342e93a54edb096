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
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport (BinaryView, binary_view, int8_array, int32_array, int64_array,
                                          int64_values, large_binary_array, view_end, view_start)
from sqltok.native.id_lists cimport IdListView, id_list_view

include "merge_state.pxi"

from sqltok.bpe.boundary_sketch cimport (SKETCH_LOOKAHEAD, BoundarySketch, sketch_add, sketch_at_most, sketch_free,
                                        sketch_init, sketch_prefetch, sketch_slot)


cdef struct Candidates:
    const int64_t* offsets      # candidate i is units[offsets[i]:offsets[i + 1]]
    const int32_t* units        # phase-1 token ids
    const int64_t* counts
    int64_t n


cdef Candidates _view(object candidates, object counts, list keep) except *:
    if candidates.null_count or len(candidates) != len(counts):
        raise ValueError("candidates must be non-NULL and as many as their counts")
    cdef IdListView v = id_list_view(candidates, keep)
    cdef Candidates c
    c.offsets = v.offsets
    c.units = v.ids
    c.counts = int64_values(counts, keep)
    c.n = v.length
    return c


cdef int _count_boundaries(const Candidates& c, BoundarySketch* sketch) except -1:
    """Add how often each two units stand side by side in one batch's candidates (weighted), from
    above (see boundary_sketch.pxd)."""
    cdef int64_t i, u, ahead = (c.offsets[c.n] if c.n else 0) - 1 - SKETCH_LOOKAHEAD
    with nogil:
        for i in range(c.n):
            for u in range(c.offsets[i], c.offsets[i + 1] - 1):
                if u < ahead:
                    sketch_prefetch(sketch, sketch_slot(sketch, c.units[u + SKETCH_LOOKAHEAD],
                                                        c.units[u + SKETCH_LOOKAHEAD + 1]))
                sketch_add(sketch, sketch_slot(sketch, c.units[u], c.units[u + 1]), c.counts[i])
    return 0


cdef int _cuts(const Candidates& c, const BoundarySketch* sketch, int64_t prune_below,
               vector[uint8_t]& cut) except -1 nogil:
    """cut[j] = 1 after the batch's unit j where its boundary is rare: counted, from above, at most
    `prune_below` times."""
    cdef int64_t i, u, first = c.offsets[0] if c.n else 0
    cdef int64_t ahead = (c.offsets[c.n] if c.n else 0) - 1 - SKETCH_LOOKAHEAD
    cut.assign(c.offsets[c.n] - first if c.n else 0, 0)
    for i in range(c.n):
        for u in range(c.offsets[i], c.offsets[i + 1] - 1):
            if u < ahead:
                sketch_prefetch(sketch, sketch_slot(sketch, c.units[u + SKETCH_LOOKAHEAD],
                                                    c.units[u + SKETCH_LOOKAHEAD + 1]))
            cut[u - first] = sketch_at_most(sketch, sketch_slot(sketch, c.units[u], c.units[u + 1]), prune_below)
    return 0


cdef class Phase2Units:
    """Phase 2's weighted unit sequences, read from batches of candidates (so no whole table is held):
    `Phase2Units(phase1_tokens, batches, prune_below, n_candidates)`, where `phase1_tokens` is a binary
    Arrow array of the phase-1 tokens' bytes by id and `batches()` gives a fresh
    iterable of (candidates, counts) Arrow arrays (list<int32>, int64) each time it is called, about
    `n_candidates` rows in all.

    With `prune_below` >= 0 the batches are read twice: first how often every two units stand side by
    side, counted from above (`boundary_sketch.pxd`), then each candidate cut where that count is at
    most `prune_below` (no supermerge BoundlessBPE can still choose has a count that low, and every
    pair across such a boundary occurs at most as often). Pieces of two or more units become
    sequences (marked partial when cut), single units never merge and only count (`frozen`). The bound assumes a token's bytes come from one unit
    sequence only; `train` returns None when a supermerge's bytes were a token already, and the caller
    loads again without cuts. Training consumes the sequences: `train` runs once.
    """
    cdef MergeState st
    cdef vector[string] p1_tokens
    cdef vector[int32_t] state_id       # phase-1 token id -> its unit token in `st` (-1: not seen)
    cdef vector[int64_t] frozen         # phase-1 token id -> count of its single-unit pieces
    cdef readonly int64_t prune_below

    def __init__(self, phase1_tokens, batches, int64_t prune_below=-1, int64_t n_candidates=0):
        cdef list keep = []  # what a view reads (the tokens', then each batch's, released with it)
        cdef BinaryView tokens = binary_view(phase1_tokens, keep)
        cdef int64_t t
        self.p1_tokens.resize(tokens.length)
        for t in range(tokens.length):
            self.p1_tokens[t].assign(<const char*>tokens.values + view_start(tokens, t),
                                     view_end(tokens, t) - view_start(tokens, t))
        self.st = MergeState()
        self.prune_below = prune_below
        self.state_id.assign(self.p1_tokens.size(), -1)
        self.frozen.assign(self.p1_tokens.size(), 0)
        cdef BoundarySketch sketch
        if prune_below < 0:
            for candidates, counts in batches():
                keep = []
                self._add(_view(candidates, counts, keep), NULL)
            return
        sketch_init(&sketch, n_candidates, prune_below)
        try:
            for candidates, counts in batches():
                keep = []
                _count_boundaries(_view(candidates, counts, keep), &sketch)
            for candidates, counts in batches():
                keep = []
                self._add(_view(candidates, counts, keep), &sketch)
        finally:
            sketch_free(&sketch)

    cdef int _add(self, const Candidates& c, const BoundarySketch* sketch) except -1:
        """Append the candidates of one batch as sequences, cut at rare boundaries when `sketch`."""
        cdef int32_t t, nt = <int32_t>self.p1_tokens.size()
        cdef int64_t i, u, start, end, n_units = c.offsets[c.n] if c.n else 0
        cdef vector[uint8_t] cut
        cdef MergeState st = self.st
        with nogil:
            for u in range(c.offsets[0] if c.n else 0, n_units):
                t = c.units[u]
                if t < 0 or t >= nt:
                    with gil:
                        raise ValueError(f"candidate unit {t} is not a phase-1 token id")
                if self.state_id[t] < 0:
                    self.state_id[t] = st.intern(self.p1_tokens[t])
            if sketch != NULL:
                _cuts(c, sketch, self.prune_below, cut)
            for i in range(c.n):
                start = c.offsets[i]
                while start < c.offsets[i + 1]:
                    end = start + 1
                    while end < c.offsets[i + 1] and (sketch == NULL or not cut[end - 1 - c.offsets[0]]):
                        end += 1
                    if end - start == 1:
                        self.frozen[c.units[start]] += c.counts[i]
                    else:
                        st.add_sequence(c.counts[i], end - start < c.offsets[i + 1] - c.offsets[i])
                        for u in range(start, end):
                            st.units.push_back(self.state_id[c.units[u]])
                        st.close_sequence(<int32_t>(end - start))
                    start = end
        return 0

    def train(self, const int32_t[::1] phase1_new, const int64_t[::1] phase1_count, int vocab_size, str mode,
              int supermerges=0, progress=None, int progress_every=256):
        """Learn the supermerges over these units.

        The phase-1 model is given by its tokens (bytes by id, at construction) and, for each merge in
        order, the id of the token it makes and its count (int32 and int64 arrays). `mode`
        "boundless": replay the phase-1 merges from the 243 byte tokens, a supermerge winning only with
        a strictly higher count, until `vocab_size` tokens or no candidate pair is left. `mode`
        "superbpe": keep every phase-1 token (ids unchanged) and add `supermerges` supermerges. Returns
        Arrow arrays: the final vocabulary (`tokens`, `is_super`, `token_counts`: each token's
        frequency in the candidates after phase 2), `regular` (how many phase-1 merges were kept, in
        order), the supermerges (`left`, `right`, `new_id`, `count`, `flag`) in final ids and
        `phase1_ids`, each phase-1 token's final id (-1: not kept); None when cut and a supermerge's
        bytes were a token already (the cuts may not hold: load again without them).
        """
        if mode not in ("boundless", "superbpe"):
            raise ValueError(f"unknown phase-2 mode {mode!r}")
        if self.st is None:
            raise ValueError("these phase-2 units were trained on already")
        cdef vector[int32_t] p1_new
        cdef vector[int64_t] p1_count
        if phase1_new.shape[0] != phase1_count.shape[0]:
            raise ValueError("the phase-1 merge arrays differ in length")
        if phase1_new.shape[0]:
            p1_new.assign(&phase1_new[0], &phase1_new[0] + phase1_new.shape[0])
            p1_count.assign(&phase1_count[0], &phase1_count[0] + phase1_count.shape[0])
        cdef MergeState st = self.st
        self.st = None  # its memory goes with the run
        return _train(st, self.frozen, self.p1_tokens, p1_new, p1_count, vocab_size, mode == "boundless",
                      supermerges, self.prune_below >= 0, progress, progress_every)


cdef class _Vocabulary:
    """The final model's tokens in creation order, by bytes."""
    cdef vector[string] tokens
    cdef vector[int8_t] is_super
    cdef vector[int32_t] ids            # the tokens' index (token_index.pxd)

    cdef int32_t add(self, const string& b, int8_t is_super) except -2 nogil:
        """The id of `b`, added at the end when it is new."""
        cdef int32_t tid = token_add(self.ids, self.tokens, b)
        if tid == <int32_t>self.is_super.size():
            self.is_super.push_back(is_super)
        return tid

    cdef int32_t get(self, const string& b) noexcept nogil:
        return token_find(self.ids, self.tokens, b)


cdef object _train(MergeState st, const vector[int64_t]& frozen, const vector[string]& p1_tokens,
                   const vector[int32_t]& p1_new, const vector[int64_t]& p1_count, int vocab_size, bint boundless,
                   int supermerges, bint pruned, object progress, int progress_every):
    """One phase-2 run on loaded sequences (see `Phase2Units.train`)."""
    cdef _Vocabulary voc = _Vocabulary()
    cdef size_t t
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
    cdef int64_t collisions = 0
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
                if st.token_id(merged) >= 0:
                    collisions += 1
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
    if pruned and collisions:
        return None
    if progress is not None:
        progress(s_new.size(), voc.tokens.size())

    cdef vector[int64_t] freqs, final_counts
    cdef vector[int32_t] p1_final
    st.token_frequencies(freqs)
    final_counts.assign(voc.tokens.size(), 0)
    cdef int32_t fid
    for t in range(freqs.size()):
        fid = voc.get(st.token_bytes[t])
        if fid >= 0:
            final_counts[fid] = freqs[t]
    p1_final.resize(p1_tokens.size())
    for t in range(p1_tokens.size()):  # (frozen is by phase-1 token too)
        fid = voc.get(p1_tokens[t])
        p1_final[t] = fid
        if fid >= 0:
            final_counts[fid] += frozen[t]
    return {
        "tokens": large_binary_array(voc.tokens), "is_super": int8_array(voc.is_super),
        "token_counts": int64_array(final_counts), "regular": j if boundless else m,
        "left": int32_array(s_left), "right": int32_array(s_right), "new_id": int32_array(s_new),
        "count": int64_array(s_count), "flag": int8_array(s_flag), "phase1_ids": int32_array(p1_final),
    }
