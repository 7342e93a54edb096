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
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.bpe.token_index cimport token_add, token_find
from sqltok.bpe.pair_table cimport (PairTable, pack_pair, pair_table_free,
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


cdef struct SeqInfo:
    # One weighted sequence: its units are units[start:start + length]; `stamp` is the last merge
    # step that visited it; `pair_bits`: bit pair % 32 set for each pair it holds (a pair whose bit is
    # clear is not there: a merge skips the sequence without reading its units); `partial`: a piece
    # of a longer unit, so it never counts as whole.
    int64_t start
    int64_t weight
    int32_t length
    int32_t stamp
    uint32_t pair_bits
    bint partial


# The merge loop's arrays and pair table sit on ordinary pages: on huge pages the merge loop itself ran
# 12% faster, but in a fresh process (one training) their first touch cost more than that and varied
# from run to run (a virtual machine backs each fresh 2 MiB block on first use): BPE on en100, phase 1
# 1.33 s on small pages against 2.28-2.38 s on huge ones, BoundlessBPE 6.7 s against 8.3 s.


cdef extern from *:
    """
    #define sqltok_prefetch(p) __builtin_prefetch((const void*)(p))
    """
    void prefetch "sqltok_prefetch"(const void* p) noexcept nogil


cdef enum:
    HEAP_PAD = 3        # the root's children (nodes 1-4) start at heap[4], 64 bytes in


cdef struct HeapEntry:
    int64_t count
    int32_t pair
    uint32_t left_key   # the left token's first 4 bytes, big-endian, zero-padded: orders as its bytes do


cdef inline uint32_t _pair_bits(const vector[int32_t]& pairs) noexcept nogil:
    """SeqInfo.pair_bits of a sequence with these counted pairs (a run of equal tokens holds one pair,
    so its uncounted positions add no bit)."""
    cdef uint32_t bits = 0
    cdef size_t k
    for k in range(pairs.size()):
        bits |= <uint32_t>1 << (pairs[k] & 31)
    return bits


cdef inline uint32_t _prefix_key(const string& b) noexcept nogil:
    cdef uint32_t k = 0
    cdef size_t i
    for i in range(4):
        k = (k << 8) | (<uint8_t>b[i] if i < b.size() else 0)
    return k


cdef class MergeState:
    cdef vector[string] token_bytes
    cdef vector[int32_t] token_ids      # token_bytes' index (token_index.pxd)
    cdef vector[int32_t] units         # all sequences, back to back; a sequence only shrinks
    cdef vector[int32_t] pair_at       # pair_at[j]: the pair index of (units[j], units[j + 1])
    cdef vector[SeqInfo] seqs
    cdef PairTable table
    cdef vector[int32_t] pair_left
    cdef vector[int32_t] pair_right
    cdef vector[int64_t] pair_count
    cdef vector[int64_t] first_start   # a pair counted at the start: its sequences then are
    cdef vector[int32_t] first_seqs    # first_seqs[first_start[p]:first_start[p + 1]] (until merged)
    cdef vector[int32_t] pair_first    # the first sequence indexed under the pair after that (-1: none)
    cdef vector[int32_t] pair_more     # index into more_seqs of the others (-1: none yet)
    cdef vector[vector[int32_t]] more_seqs
    cdef vector[int32_t] pair_stamp
    cdef int32_t table_pairs           # pairs 0..table_pairs - 1 are in `table`
    cdef int32_t placed_max            # no token above this id has been in a sequence (new ids grow)
    cdef vector[uint64_t] new_as_left  # per token t: (step << 32) | pair index of (new token, t), made
    cdef vector[uint64_t] new_as_right # by merge `step`; as_right: of (t, new token)
    cdef vector[int32_t] touched        # pairs a merge made gain, with their counts before they first did
    cdef vector[int64_t] touched_before
    cdef vector[int32_t] scratch
    cdef vector[int32_t] fresh
    cdef vector[int32_t] holders        # the sequences the current merge visits
    cdef vector[HeapEntry] heap        # HEAP_PAD unused entries, then the nodes
    cdef int32_t step

    def __cinit__(self):
        pair_table_init(&self.table, 1 << 16)
        self.heap.resize(HEAP_PAD)
        self.step = 0
        self.table_pairs = 0
        self.placed_max = -1

    def __dealloc__(self):
        pair_table_free(&self.table)

    # -- tokens ------------------------------------------------------------------------------------
    cdef int32_t token_id(self, const string& b) noexcept nogil:
        """The id of the token with bytes `b`, or -1."""
        return token_find(self.token_ids, self.token_bytes, b)

    cdef int32_t intern(self, const string& b) except -2 nogil:
        """The id of the token with bytes `b`, created at the end of the vocabulary when new."""
        return token_add(self.token_ids, self.token_bytes, b)

    # -- heap: max by count, then min left bytes, then min right bytes; 4-ary (half the depth of a
    # binary heap), node i at heap[HEAP_PAD + i]: the four children of a node share a cache line once
    # the heap is big (its block is then 2 MiB-aligned, on huge pages: no TLB miss a level) --------
    cdef inline bint _before(self, const HeapEntry& a, const HeapEntry& b) noexcept nogil:
        if a.count != b.count:
            return a.count > b.count
        if a.left_key != b.left_key:
            return a.left_key < b.left_key
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
        e.left_key = _prefix_key(self.token_bytes[self.pair_left[pair]])
        self.heap.push_back(e)
        cdef HeapEntry* h = self.heap.data() + HEAP_PAD
        cdef size_t i = self.heap.size() - HEAP_PAD - 1
        cdef size_t parent
        while i > 0:
            parent = (i - 1) >> 2
            if not self._before(e, h[parent]):
                break
            h[i] = h[parent]
            i = parent
        h[i] = e

    cdef void _sift_down(self, HeapEntry e) noexcept nogil:
        """Put `e` at the root, whose entry is gone, and restore the heap below it."""
        cdef size_t n = self.heap.size() - HEAP_PAD
        cdef HeapEntry* h = self.heap.data() + HEAP_PAD
        cdef size_t i = 0
        cdef size_t child, best, end
        while True:
            child = 4 * i + 1
            if child >= n:
                break
            best = child
            end = child + 4 if child + 4 < n else n
            child += 1
            while child < end:
                if self._before(h[child], h[best]):
                    best = child
                child += 1
            if not self._before(h[best], e):
                break
            h[i] = h[best]
            i = best
        h[i] = e

    cdef void _pop(self) noexcept nogil:
        """Drop the root: its hole goes down along the best children to a leaf, where the last entry
        comes in and rises (it mostly belongs near the leaves: a comparison a level fewer than
        sifting it down from the root)."""
        cdef HeapEntry last = self.heap.back()
        self.heap.pop_back()
        cdef size_t n = self.heap.size() - HEAP_PAD
        if n == 0:
            return
        cdef HeapEntry* h = self.heap.data() + HEAP_PAD
        cdef size_t i = 0
        cdef size_t child, best, end, parent
        while True:
            child = 4 * i + 1
            if child >= n:
                break
            best = child
            end = child + 4 if child + 4 < n else n
            child += 1
            while child < end:
                if self._before(h[child], h[best]):
                    best = child
                child += 1
            h[i] = h[best]
            i = best
        while i > 0:
            parent = (i - 1) >> 2
            if not self._before(last, h[parent]):
                break
            h[i] = h[parent]
            i = parent
        h[i] = last

    # -- pairs -------------------------------------------------------------------------------------
    cdef int32_t _append_pair(self, int32_t left, int32_t right) except -2 nogil:
        """A new pair (left, right) with no count and no sequences; its index."""
        cdef int32_t idx = <int32_t>self.pair_left.size()
        self.pair_left.push_back(left)
        self.pair_right.push_back(right)
        self.pair_count.push_back(0)
        self.pair_first.push_back(-1)
        self.pair_more.push_back(-1)
        self.pair_stamp.push_back(-1)
        return idx

    cdef int32_t _pair_index(self, int32_t left, int32_t right) except -2 nogil:
        """The index of pair (left, right), made when new (`table` must hold every pair made so far)."""
        cdef int32_t idx = <int32_t>self.pair_left.size()
        cdef int32_t found = pair_table_get_or_insert(&self.table, pack_pair(left, right), idx)
        if found >= 0:
            return found
        self.table_pairs = idx + 1
        return self._append_pair(left, right)

    cdef int32_t _new_token_pair(self, int32_t left, int32_t right, int32_t new_id) except -2 nogil:
        """The index of pair (left, right), one of them `new_id`, a token no sequence held before this
        merge: so the pair is new to this merge, and found again through the other token (no lookup in
        the big `table`, which catches up before a merge that needs it)."""
        cdef uint64_t* made = &self.new_as_left[right] if left == new_id else &self.new_as_right[left]
        if (made[0] >> 32) == <uint64_t><uint32_t>self.step:
            return <int32_t>(made[0] & 0xFFFFFFFFULL)
        cdef int32_t idx = self._append_pair(left, right)
        made[0] = (<uint64_t><uint32_t>self.step << 32) | <uint32_t>idx
        return idx

    cdef int _sync_table(self) except -1 nogil:
        """Put the pairs made since `table` was last complete into it."""
        cdef int32_t k
        for k in range(self.table_pairs, <int32_t>self.pair_left.size()):
            pair_table_get_or_insert(&self.table, pack_pair(self.pair_left[k], self.pair_right[k]), k)
        self.table_pairs = <int32_t>self.pair_left.size()
        return 0

    cdef int add_sequence(self, int64_t weight, bint partial=False) except -1 nogil:
        """Open a new sequence; its units are then appended to `units` by the caller. A `partial`
        sequence is a piece of a longer one: becoming one token does not set a merge's flag."""
        cdef SeqInfo q
        q.start = <int64_t>self.units.size()
        q.weight = weight
        q.length = 0
        q.stamp = -1
        q.pair_bits = 0
        q.partial = partial
        self.seqs.push_back(q)
        return 0

    cdef inline void close_sequence(self, int32_t length) noexcept nogil:
        """Set the length of the sequence opened last, once its units are appended."""
        self.seqs.back().length = length

    cdef inline int32_t* _seq(self, size_t w) noexcept nogil:
        return self.units.data() + self.seqs[w].start

    cdef int _counted_pairs(self, size_t w, vector[int32_t]& out) noexcept nogil:
        """The pairs of sequence `w` as counted (a run of n equal tokens gives n // 2 pairs), as pair
        indices, read from `pair_at`."""
        out.clear()
        cdef const int32_t* s = self._seq(w)
        cdef const int32_t* pa = self.pair_at.data() + self.seqs[w].start
        cdef size_t n = self.seqs[w].length
        cdef size_t i = 0
        while i + 1 < n:
            out.push_back(pa[i])
            if s[i] == s[i + 1] and i + 2 < n and s[i + 2] == s[i]:
                i += 2
            else:
                i += 1
        return 0

    cdef int count_all_pairs(self) except -1 nogil:
        """Initial pair counts and pair -> sequence index over all sequences, then the heap. Two
        passes: the counts and how many sequences hold each pair, then the index in one array
        (`first_seqs`, each pair's part at its size, filled from the end so each part is in sequence
        order)."""
        cdef size_t w, k, j, start, n
        cdef int32_t p
        cdef int64_t total = 0
        self.pair_at.assign(self.units.size(), -1)
        for w in range(self.seqs.size()):
            start = self.seqs[w].start
            n = self.seqs[w].length
            for j in range(start, start + n - 1 if n > 0 else start):
                self.pair_at[j] = self._pair_index(self.units[j], self.units[j + 1])
            self._counted_pairs(w, self.scratch)
            self.seqs[w].pair_bits = _pair_bits(self.scratch)
            for k in range(self.scratch.size()):
                p = self.scratch[k]
                self.pair_count[p] += self.seqs[w].weight
                if self.pair_stamp[p] != <int32_t>w:
                    self.pair_stamp[p] = <int32_t>w
                    if <size_t>p >= self.first_start.size():
                        self.first_start.resize(self.pair_count.size() + 1, 0)
                    self.first_start[p] += 1
        self.first_start.resize(self.pair_count.size() + 1, 0)
        for k in range(self.first_start.size()):  # each pair's count of sequences -> the end of its part
            total += self.first_start[k]
            self.first_start[k] = total
        self.first_seqs.resize(total)
        self.pair_stamp.assign(self.pair_stamp.size(), -1)
        for w in reversed(range(self.seqs.size())):
            self._counted_pairs(w, self.scratch)
            for k in range(self.scratch.size()):
                p = self.scratch[k]
                if self.pair_stamp[p] != <int32_t>w:
                    self.pair_stamp[p] = <int32_t>w
                    self.first_start[p] -= 1
                    self.first_seqs[self.first_start[p]] = <int32_t>w
        self.pair_stamp.assign(self.pair_stamp.size(), -1)
        self.placed_max = <int32_t>self.token_bytes.size() - 1
        for k in range(self.pair_count.size()):
            if self.pair_count[k] > 0:
                self._push(<int32_t>k)
        return 0

    cdef int32_t best_pair(self) except -2 nogil:
        """The pair to merge next (left on the heap), or -1 when no pair has a positive count."""
        cdef HeapEntry top
        while self.heap.size() > HEAP_PAD:
            top = self.heap[HEAP_PAD]
            if top.count == self.pair_count[top.pair]:
                return top.pair
            if 0 < self.pair_count[top.pair] < top.count:   # stale: back in the heap at its count
                top.count = self.pair_count[top.pair]
                self._sift_down(top)
            else:
                self._pop()
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
            self.more_seqs.back().reserve(4)  # no reallocation until the fifth sequence
        self.more_seqs[self.pair_more[pair]].push_back(w)

    cdef void _take_seqs(self, int32_t pair, vector[int32_t]& out) noexcept nogil:
        """Move the sequences indexed under `pair` into `out` (the pair's index is left empty)."""
        out.clear()
        cdef int64_t begin, end
        if <size_t>pair + 1 < self.first_start.size():
            begin = self.first_start[pair]
            end = self.first_start[pair + 1]
            if begin < end:
                out.insert(out.end(), self.first_seqs.begin() + begin, self.first_seqs.begin() + end)
                self.first_start[pair] = end
        if self.pair_first[pair] >= 0:
            out.push_back(self.pair_first[pair])
            self.pair_first[pair] = -1
        if self.pair_more[pair] >= 0:
            out.insert(out.end(), self.more_seqs[self.pair_more[pair]].begin(),
                       self.more_seqs[self.pair_more[pair]].end())
            vector[int32_t]().swap(self.more_seqs[self.pair_more[pair]])

    cdef void _recount(self, const vector[int32_t]& old, const vector[int32_t]& new, int64_t wt, int32_t new_id,
                       int32_t w) noexcept nogil:
        """Move weight `wt` of sequence `w` from its `old` counted pairs to its `new` ones. Only the
        part between their common prefix and suffix changes (a merge is local); a pair that is new
        there holds `new_id` and gets `w` in its index. Only pairs that gain are touched: one that
        only loses keeps its heap entry, which is then above its count (`best_pair` checks)."""
        cdef size_t no = old.size(), nn = new.size(), lo = 0, k
        cdef int32_t p
        while lo < no and lo < nn and old[lo] == new[lo]:
            lo += 1
        while no > lo and nn > lo and old[no - 1] == new[nn - 1]:
            no -= 1
            nn -= 1
        for k in range(lo, no):
            self.pair_count[old[k]] -= wt
        for k in range(lo, nn):
            p = new[k]
            self._touch(p)
            self.pair_count[p] += wt
            if self.pair_left[p] == new_id or self.pair_right[p] == new_id:
                self._add_seq(p, w)

    cdef int8_t merge(self, int32_t pair, int32_t new_id) except -1 nogil:
        """Apply `pair` -> `new_id` in every sequence that holds it; 1 when some sequence became one token."""
        cdef int32_t a = self.pair_left[pair]
        cdef int32_t b = self.pair_right[pair]
        self._take_seqs(pair, self.holders)
        cdef const int32_t* seq_list = self.holders.data()
        cdef size_t held = self.holders.size()
        cdef int8_t flag = 0
        cdef size_t j, k, i, n, out_len
        cdef int32_t w, p
        cdef int64_t wt
        cdef int32_t* s
        cdef int32_t* pa
        cdef bint changed
        cdef SeqInfo* q
        cdef bint new_token = new_id > self.placed_max
        self.step += 1
        if new_token:
            self.placed_max = new_id
            if self.new_as_left.size() < self.token_bytes.size():
                self.new_as_left.resize(self.token_bytes.size(), 0)
                self.new_as_right.resize(self.token_bytes.size(), 0)
        else:
            self._sync_table()
        self.touched.clear()
        self.touched_before.clear()
        for j in range(held):
            w = seq_list[j]
            if j + 16 < held:
                prefetch(&self.seqs[seq_list[j + 16]])
            if j + 8 < held and (self.seqs[seq_list[j + 8]].pair_bits >> (pair & 31)) & 1:
                prefetch(self.units.data() + self.seqs[seq_list[j + 8]].start)
                prefetch(self.pair_at.data() + self.seqs[seq_list[j + 8]].start)
            q = &self.seqs[w]
            if q.stamp == self.step or not (q.pair_bits >> (pair & 31)) & 1:
                continue
            q.stamp = self.step
            s = self.units.data() + q.start
            n = q.length
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
            wt = q.weight
            self._counted_pairs(w, self.scratch)
            # Rewrite in place from the first occurrence; a kept token keeps its pair unless a merged
            # token is next to it.
            pa = self.pair_at.data() + q.start
            out_len = i
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
                    pa[i] = self._new_token_pair(s[i], s[i + 1], new_id) if new_token else \
                        self._pair_index(s[i], s[i + 1])
            q.length = <int32_t>out_len
            if out_len == 1 and n > 1 and not q.partial:
                flag = 1
            self._counted_pairs(w, self.fresh)
            q.pair_bits = _pair_bits(self.fresh)
            self._recount(self.scratch, self.fresh, wt, new_id, <int32_t>w)
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
        for w in range(self.seqs.size()):
            s = self._seq(w)
            for i in range(<size_t>self.seqs[w].length):
                out[s[i]] += self.seqs[w].weight

    cdef void single_tokens(self, vector[int32_t]& out) noexcept nogil:
        """Per sequence, the one token it became, or -1 when it is more than one."""
        cdef size_t w
        out.resize(self.seqs.size())
        for w in range(self.seqs.size()):
            out[w] = self.units[self.seqs[w].start] if self.seqs[w].length == 1 else -1
