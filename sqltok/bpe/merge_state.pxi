# Included by the training modules (a Cython include: the class is compiled into each module that
# trains, so no cross-module cimport is needed).
"""Weighted token sequences and the incremental pair counts that BPE training merges over.

Shared by phase 1 (sequences = unique pretokens, units = bytes) and phase 2 (sequences = supermerge
candidates, units = whole pretoken tokens). Semantics are the reference's: pairs are counted without
overlap inside a run of equal tokens, a merge applies left to right without overlap, and the best pair
has the highest count, ties going to the smallest left token bytes, then the smallest right token bytes.
Each merge costs time in proportion to the sequences that hold the pair (a pair -> sequences index).
"""
from cpython.exc cimport PyErr_CheckSignals
from cython.operator cimport dereference as deref
from libc.stdint cimport int8_t, int32_t, int64_t
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from sqltok.bpe.pair_table cimport (PairTable, pack_pair, pair_table_free, pair_table_get,
                         pair_table_get_or_insert, pair_table_init)
from sqltok.native.arrow_buffers cimport int8_array, int32_array, int64_array


cdef struct MergeLog:
    # The merges done, in order: the pair, the token it became, its count then, its flag.
    vector[int32_t] left
    vector[int32_t] right
    vector[int32_t] new_id
    vector[int64_t] count
    vector[int8_t] flag


cdef dict log_arrays(const MergeLog& log):
    """The merges as pyarrow arrays `left`, `right`, `new_id`, `count`, `flag`."""
    return {"left": int32_array(log.left), "right": int32_array(log.right), "new_id": int32_array(log.new_id),
            "count": int64_array(log.count), "flag": int8_array(log.flag)}


cdef int run_merges(MergeState st, MergeLog& log, int64_t max_merges, int64_t max_tokens, object progress,
                    int progress_every) except -1:
    """Count the pairs, then merge the best pair until `max_merges` merges are logged, the vocabulary
    holds `max_tokens` tokens (-1: no such limit) or no pair is left, the GIL released;
    `progress(merges, tokens)` every `progress_every` merges and at the end."""
    cdef bint more = True
    with nogil:
        st.count_all_pairs()
        while more and (max_merges < 0 or <int64_t>log.left.size() < max_merges) and \
                (max_tokens < 0 or <int64_t>st.token_bytes.size() < max_tokens):
            more = st.merge_best(log) >= 0
            if more and log.left.size() % progress_every == 0:
                with gil:
                    PyErr_CheckSignals()
                    if progress is not None:
                        progress(log.left.size(), st.token_bytes.size())
    if progress is not None:
        progress(log.left.size(), st.token_bytes.size())
    return 0


cdef struct HeapEntry:
    int64_t count
    int32_t pair


cdef class MergeState:
    cdef vector[string] token_bytes
    cdef unordered_map[string, int32_t] token_ids
    cdef vector[int32_t] units          # all sequences, back to back; a sequence only shrinks
    cdef vector[int32_t] pair_at        # pair_at[j]: the pair index of (units[j], units[j + 1])
    cdef vector[int64_t] seq_start
    cdef vector[int32_t] seq_len
    cdef vector[int64_t] weights
    cdef vector[int8_t] partial         # 1: a piece of a longer unit, so it never counts as whole
    cdef PairTable table
    cdef vector[int32_t] pair_left
    cdef vector[int32_t] pair_right
    cdef vector[int64_t] pair_count
    cdef vector[int32_t] pair_first     # the first sequence that holds the pair (-1: none)
    cdef vector[int32_t] pair_more      # index into more_seqs of the others (-1: none yet)
    cdef vector[vector[int32_t]] more_seqs
    cdef vector[int32_t] pair_stamp
    cdef vector[int32_t] touched        # pairs a merge changed, with their counts before it
    cdef vector[int64_t] touched_before
    cdef vector[int32_t] seq_stamp
    cdef vector[int32_t] scratch
    cdef vector[HeapEntry] heap
    cdef int32_t step

    def __cinit__(self):
        pair_table_init(&self.table, 1 << 16)
        self.step = 0

    def __dealloc__(self):
        pair_table_free(&self.table)

    # -- tokens ------------------------------------------------------------------------------------
    cdef int32_t intern(self, const string& b) except -2 nogil:
        """The id of the token with bytes `b`, created at the end of the vocabulary when new."""
        cdef unordered_map[string, int32_t].iterator it = self.token_ids.find(b)
        if it != self.token_ids.end():
            return deref(it).second
        cdef int32_t tid = <int32_t>self.token_bytes.size()
        self.token_bytes.push_back(b)
        self.token_ids[b] = tid
        return tid

    # -- heap: max by count, then min left bytes, then min right bytes ------------------------------
    cdef inline bint _before(self, const HeapEntry& a, const HeapEntry& b) noexcept nogil:
        if a.count != b.count:
            return a.count > b.count
        cdef int c = self.token_bytes[self.pair_left[a.pair]].compare(
            self.token_bytes[self.pair_left[b.pair]])
        if c != 0:
            return c < 0
        c = self.token_bytes[self.pair_right[a.pair]].compare(self.token_bytes[self.pair_right[b.pair]])
        if c != 0:
            return c < 0
        return a.pair < b.pair

    cdef void _push(self, int32_t pair) noexcept nogil:
        cdef HeapEntry e
        e.count = self.pair_count[pair]
        e.pair = pair
        self.heap.push_back(e)
        cdef size_t i = self.heap.size() - 1
        cdef size_t parent
        while i > 0:
            parent = (i - 1) >> 1
            if not self._before(e, self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = e

    cdef void _pop(self) noexcept nogil:
        cdef HeapEntry last = self.heap.back()
        self.heap.pop_back()
        cdef size_t n = self.heap.size()
        if n == 0:
            return
        cdef size_t i = 0
        cdef size_t child
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and self._before(self.heap[child + 1], self.heap[child]):
                child += 1
            if not self._before(self.heap[child], last):
                break
            self.heap[i] = self.heap[child]
            i = child
        self.heap[i] = last

    # -- pairs -------------------------------------------------------------------------------------
    cdef int32_t _pair_index(self, int32_t left, int32_t right) except -2 nogil:
        cdef int32_t idx = <int32_t>self.pair_left.size()
        cdef int32_t found = pair_table_get_or_insert(&self.table, pack_pair(left, right), idx)
        if found >= 0:
            return found
        self.pair_left.push_back(left)
        self.pair_right.push_back(right)
        self.pair_count.push_back(0)
        self.pair_first.push_back(-1)
        self.pair_more.push_back(-1)
        self.pair_stamp.push_back(-1)
        return idx

    cdef int add_sequence(self, int64_t weight, bint partial=False) except -1 nogil:
        """Open a new sequence; its units are then appended to `units` by the caller. A `partial`
        sequence is a piece of a longer one: becoming one token does not set a merge's flag."""
        self.seq_start.push_back(<int64_t>self.units.size())
        self.seq_len.push_back(0)
        self.weights.push_back(weight)
        self.partial.push_back(partial)
        return 0

    cdef inline int32_t* _seq(self, size_t w) noexcept nogil:
        return self.units.data() + self.seq_start[w]

    cdef int _counted_pairs(self, size_t w, vector[int32_t]& out) noexcept nogil:
        """The pairs of sequence `w` as counted (a run of n equal tokens gives n // 2 pairs), as pair
        indices, read from `pair_at`."""
        out.clear()
        cdef const int32_t* s = self._seq(w)
        cdef const int32_t* pa = self.pair_at.data() + self.seq_start[w]
        cdef size_t n = self.seq_len[w]
        cdef size_t i = 0
        while i + 1 < n:
            out.push_back(pa[i])
            if s[i] == s[i + 1] and i + 2 < n and s[i + 2] == s[i]:
                i += 2
            else:
                i += 1
        return 0

    cdef int count_all_pairs(self) except -1 nogil:
        """Initial pair counts and pair -> sequence index over all sequences, then the heap."""
        cdef size_t w, k, j, start, n
        cdef int32_t p
        self.seq_stamp.assign(self.seq_len.size(), -1)
        self.pair_at.assign(self.units.size(), -1)
        for w in range(self.seq_len.size()):
            start = self.seq_start[w]
            n = self.seq_len[w]
            for j in range(start, start + n - 1 if n > 0 else start):
                self.pair_at[j] = self._pair_index(self.units[j], self.units[j + 1])
            self._counted_pairs(w, self.scratch)
            for k in range(self.scratch.size()):
                p = self.scratch[k]
                self.pair_count[p] += self.weights[w]
                if self.pair_stamp[p] != <int32_t>w:
                    self.pair_stamp[p] = <int32_t>w
                    self._add_seq(p, <int32_t>w)
        self.pair_stamp.assign(self.pair_stamp.size(), -1)
        for k in range(self.pair_count.size()):
            if self.pair_count[k] > 0:
                self._push(<int32_t>k)
        return 0

    cdef int32_t best_pair(self) except -2 nogil:
        """The pair to merge next (left on the heap), or -1 when no pair has a positive count."""
        cdef HeapEntry top
        while self.heap.size() > 0:
            top = self.heap[0]
            if top.count == self.pair_count[top.pair]:
                return top.pair
            self._pop()
            if 0 < self.pair_count[top.pair] < top.count:
                self._push(top.pair)
        return -1

    cdef int32_t merge_best(self, MergeLog& log) except -2 nogil:
        """Merge the best pair into the token of its bytes (made when new) and log it; the new token's
        id, or -1 when no pair is left."""
        cdef int32_t pair = self.best_pair()
        if pair < 0:
            return -1
        cdef int32_t new_id = self.intern(self.token_bytes[self.pair_left[pair]] + self.token_bytes[self.pair_right[pair]])
        log.left.push_back(self.pair_left[pair])
        log.right.push_back(self.pair_right[pair])
        log.new_id.push_back(new_id)
        log.count.push_back(self.pair_count[pair])
        log.flag.push_back(self.merge(pair, new_id))
        return new_id

    cdef void _touch(self, int32_t pair) noexcept nogil:
        if self.pair_stamp[pair] != self.step:
            self.pair_stamp[pair] = self.step
            self.touched.push_back(pair)
            self.touched_before.push_back(self.pair_count[pair])

    cdef void _add_seq(self, int32_t pair, int32_t w) noexcept nogil:
        """Index sequence `w` under `pair` (most pairs are held by one sequence: no list for those)."""
        if self.pair_first[pair] < 0:
            self.pair_first[pair] = w
            return
        if self.pair_more[pair] < 0:
            self.pair_more[pair] = <int32_t>self.more_seqs.size()
            self.more_seqs.push_back(vector[int32_t]())
        self.more_seqs[self.pair_more[pair]].push_back(w)

    cdef void _take_seqs(self, int32_t pair, vector[int32_t]& out) noexcept nogil:
        """Move the sequences indexed under `pair` into `out` (the pair's index is left empty)."""
        out.clear()
        if self.pair_first[pair] >= 0:
            out.push_back(self.pair_first[pair])
            self.pair_first[pair] = -1
        if self.pair_more[pair] >= 0:
            out.insert(out.end(), self.more_seqs[self.pair_more[pair]].begin(),
                       self.more_seqs[self.pair_more[pair]].end())
            vector[int32_t]().swap(self.more_seqs[self.pair_more[pair]])

    cdef int8_t merge(self, int32_t pair, int32_t new_id) except -1 nogil:
        """Apply `pair` -> `new_id` in every sequence that holds it; 1 when some sequence became one token."""
        cdef int32_t a = self.pair_left[pair]
        cdef int32_t b = self.pair_right[pair]
        cdef vector[int32_t] seq_list
        self._take_seqs(pair, seq_list)
        cdef int8_t flag = 0
        cdef size_t j, k, i, n, out_len
        cdef int32_t w, p
        cdef int64_t wt
        cdef int32_t* s
        cdef int32_t* pa
        cdef bint changed
        self.step += 1
        self.touched.clear()
        self.touched_before.clear()
        for j in range(seq_list.size()):
            w = seq_list[j]
            if self.seq_stamp[w] == self.step:
                continue
            self.seq_stamp[w] = self.step
            s = self._seq(w)
            n = self.seq_len[w]
            # Apply the merge in place, left to right, without overlap.
            changed = False
            i = 0
            out_len = 0
            while i < n:
                if i + 1 < n and s[i] == a and s[i + 1] == b:
                    changed = True
                    break
                i += 1
            if not changed:
                continue
            wt = self.weights[w]
            self._counted_pairs(w, self.scratch)
            for k in range(self.scratch.size()):
                p = self.scratch[k]
                self._touch(p)
                self.pair_count[p] -= wt
            # Rewrite in place; a kept token keeps its pair unless a merged token is next to it.
            pa = self.pair_at.data() + self.seq_start[w]
            i = 0
            while i < n:
                if i + 1 < n and s[i] == a and s[i + 1] == b:
                    s[out_len] = new_id
                    i += 2
                else:
                    s[out_len] = s[i]
                    pa[out_len] = pa[i]
                    i += 1
                out_len += 1
            for i in range(out_len - 1 if out_len > 0 else 0):
                if s[i] == new_id or s[i + 1] == new_id:
                    pa[i] = self._pair_index(s[i], s[i + 1])
            self.seq_len[w] = <int32_t>out_len
            if out_len == 1 and n > 1 and not self.partial[w]:
                flag = 1
            self._counted_pairs(w, self.scratch)
            for k in range(self.scratch.size()):
                p = self.scratch[k]
                self._touch(p)
                self.pair_count[p] += wt
                if self.pair_left[p] == new_id or self.pair_right[p] == new_id:
                    self._add_seq(p, w)
        for k in range(self.touched.size()):
            p = self.touched[k]
            if self.pair_count[p] > self.touched_before[k]:
                self._push(p)
        return flag

    cdef void token_frequencies(self, vector[int64_t]& out) noexcept nogil:
        """How often each token occurs in the sequences, weighted."""
        cdef size_t w, i
        cdef const int32_t* s
        out.assign(self.token_bytes.size(), 0)
        for w in range(self.seq_len.size()):
            s = self._seq(w)
            for i in range(<size_t>self.seq_len[w]):
                out[s[i]] += self.weights[w]
