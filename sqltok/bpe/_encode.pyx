# cython: language_level=3
"""The byte-level BPE encoder: text -> pretokens -> token ids, over Arrow arrays, GIL released.

A pretoken whose bytes are a token that merging would reach anyway becomes that token directly (for
tiktoken and `ignore_merges` tokenizers: every token). Otherwise merging starts from the byte tokens
and repeatedly merges the adjacent pair of lowest rank (leftmost on ties) until no pair is in the
merge table: a quadratic scan for short pretokens, a heap over a linked list (O(n log n)) for long
ones. Reference models never go back to a rank below the last one applied (`rank_guard`).

Where the time goes, and what answers it: pretokens of up to 24 bytes are handled as three masked
words (hash and compares without calls). Those of up to 11 bytes (90% of English) are looked up in
the vocabulary index first, which holds that many bytes of each key in its 16-byte slot; the others,
and short ones that are no token, in a per-thread cache of the pretokens seen with their ids (64-byte
slots, up to 8 MiB), which so holds only what the index cannot answer in one slot. Both slots are
prefetched a few pretokens ahead. Short pretokens that need merging leave a placeholder and are
merged per text in a batch, sixteen side by side, so that the merge-table misses of one overlap with
the work of the others; the big tables, built at load, sit on huge pages (`huge_pages.h`); Python
list output shares one int object per id.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.list cimport PyList_New
from cpython.ref cimport PyObject
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, memmove, memset
from libcpp.queue cimport priority_queue
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.native.arrow_buffers cimport BinaryView, binary_view, row_split, row_threads, view_end, view_start, view_valid
from sqltok.bpe.long_cache cimport LongCache, long_cache_get, long_cache_put
from sqltok.native.id_lists cimport (IdListView, IdPool, IdRows, IdVector, add_rows, id_list_view, id_pool_new, id_pool_release,
                       id_pool_take, id_rows_arrow, id_rows_move, ids_buffer)
from sqltok.native.bytes_table cimport (KEY_WORDS_MAX, SLOT_KEY_MAX, BytesTable, bytes_hash, bytes_table_build,
                          bytes_table_get, bytes_table_get_hashed, bytes_table_get_words, key_words)
from sqltok.bpe.merge_table cimport (MergeSlot, MergeTable, merge_table_add, merge_table_init, merge_table_rank,
                          merge_table_rank_from, merge_table_start)
from sqltok.pretokenizer.matcher cimport pretokenize_pattern
from sqltok.native.row_chunks cimport ChunkClaims, chunk_count, owned_first

import gc

import pyarrow as pa

cdef enum:
    SHORT_PIECE = 48          # pretokens up to this many bytes merge by a plain scan
    NO_RANK = 0x7FFFFFFF
    CACHE_SLOTS = 131072      # pretokens seen, with their ids: 8 MiB at most, shared out among the threads
    BYTES_PER_SLOT = 32       # caches get a slot per this many input bytes (tiny calls, tiny caches)
    MIN_SLOTS = 64
    PREFETCH = 24             # pieces ahead whose table slots are requested early
    SHORT_KEY = SLOT_KEY_MAX  # pretokens up to this many bytes are looked up in the vocabulary first
    CACHE_IDS = 9
    PENDING = 255             # a cache slot's n_ids while its pretoken waits to be merged (ids[0]: which)
    LANES = 16                # pretokens merged side by side, so that their table lookups overlap
    VOCAB_PADDING = 24        # zero bytes after the last token, for word-wise key compares


cdef extern from *:
    void __builtin_prefetch(const void* address) noexcept nogil

cdef uint64_t NO_RANK_KEY = <uint64_t>NO_RANK << 32


cdef struct CacheSlot:         # 64 bytes, one cache line (the slots are 64-byte aligned)
    uint64_t key[3]           # the pretoken's bytes, zero-padded (see bytes_table.key_words)
    uint8_t length            # 0: empty
    uint8_t n_ids
    uint8_t unused[2]
    int32_t ids[CACHE_IDS]


cdef struct Pending:           # a pretoken deferred to the batched merge
    const uint8_t* p
    int64_t n
    int64_t key               # index in Workspace.keys, -1: none
    int64_t start             # its ids: Workspace.pending_ids[start:start + count]
    int64_t count


cdef struct Lane:             # one pretoken being merged (see Encoder._merge_pending)
    int32_t sym[SHORT_PIECE]
    int32_t ranks[SHORT_PIECE]
    int32_t results[SHORT_PIECE]
    size_t n
    int32_t last              # rank of the last merge applied
    int64_t q                 # its index in Workspace.pending, -1: idle
    int64_t look[2]           # pairs whose rank is to be looked up before the next scan, -1: none
    uint64_t start[2]         # where their lookups start in the merge table (prefetched)


cdef struct PieceKey:         # a pretoken of up to KEY_WORDS_MAX bytes as words, and its bytes_hash
    uint64_t w[3]
    uint64_t hash


cdef cppclass Workspace:          # one thread's scratch memory and pretoken cache
    IdVector sym
    vector[int32_t] nxt
    vector[int32_t] prv
    vector[int32_t] pair_rank     # heap merge: rank and result of the pair starting at each position
    vector[int32_t] pair_result
    vector[int64_t] ends
    priority_queue[uint64_t] heap
    vector[uint64_t] cache_memory  # the cache, 64-byte aligned within
    CacheSlot* cache
    uint64_t cache_mask
    LongCache long_cache          # pretokens over KEY_WORDS_MAX bytes
    vector[PieceKey] keys
    bint defer                    # pretokens that need merging wait for a batch (see _merge_pending)
    vector[Pending] pending
    vector[size_t] holes          # where their placeholders are in the output, in order
    vector[int32_t] pending_ids
    IdVector run
    vector[int32_t] piece_sizes   # when asked: how many ids each pretoken gave, in order
    bint keep_sizes


cdef struct CandidatesOut:
    vector[int32_t] units        # the units' token ids, candidate after candidate
    vector[int64_t] cand_units   # units per candidate
    vector[int64_t] row_cands    # candidates per row, -1 for NULL
    int64_t error_row
    int32_t error_code


cdef void workspace_init(Workspace& ws, int64_t text_bytes, int threads) noexcept nogil:
    """Ready `ws` for about `text_bytes` of input, one of `threads` threads: a cache of a slot per
    BYTES_PER_SLOT bytes (a few KiB for a short text), and of 8 MiB / threads at most, as the threads
    share the last-level cache. A cache at least that big is kept, with what it holds. It is made on
    small pages: a call that sizes it up faults it in, and faulting fresh huge pages took up to 13 ms
    (against 2 ms) whenever two threads did so at once."""
    cdef uint64_t slots = MIN_SLOTS
    while slots < CACHE_SLOTS // threads and slots * BYTES_PER_SLOT < <uint64_t>text_bytes:
        slots <<= 1
    if ws.cache_memory.size() < (slots + 1) * sizeof(CacheSlot) // 8:
        ws.cache_memory.assign((slots + 1) * sizeof(CacheSlot) // 8, 0)
        ws.cache = <CacheSlot*>((<uint64_t>ws.cache_memory.data() + 63) & ~<uint64_t>63)
        ws.cache_mask = slots - 1
    ws.keep_sizes = False
    ws.defer = False


cdef inline int64_t _bytes(const BinaryView& v, int64_t first, int64_t last) noexcept nogil:
    """The bytes of rows first..last-1."""
    return view_end(v, last - 1) - view_start(v, first) if last > first else 0


cdef inline bint _cache_get(const CacheSlot* slot, const PieceKey* key, int64_t n,
                            IdVector& out, vector[size_t]& holes) noexcept nogil:
    """Append the ids the cache slot holds for the pretoken `key` of n bytes (a placeholder, its
    position noted in `holes`, when it waits to be merged); False when the slot holds another."""
    cdef int k
    if (slot.length == n) & (slot.key[0] == key.w[0]) & (slot.key[1] == key.w[1]) & (slot.key[2] == key.w[2]):
        if slot.n_ids == PENDING:
            holes.push_back(out.size())
            out.push_back(-1 - slot.ids[0])
        else:
            for k in range(slot.n_ids):  # a few ids: no call to a range insert
                out.push_back(slot.ids[k])
        return True
    return False


cdef inline void _cache_put(CacheSlot* slot, const PieceKey* key, int64_t n,
                            const int32_t* ids, size_t count) noexcept nogil:
    """Remember the ids[:count] of the pretoken `key` of n bytes (when they fit in a slot; else the
    slot is emptied)."""
    cdef size_t k
    if count > CACHE_IDS:
        slot.length = 0
        return
    slot.key[0] = key.w[0]
    slot.key[1] = key.w[1]
    slot.key[2] = key.w[2]
    slot.length = <uint8_t>n
    slot.n_ids = <uint8_t>count
    for k in range(count):
        slot.ids[k] = ids[k]


cdef inline bint _merge_step(bint guard, int32_t* sym, int32_t* ranks, int32_t* results, size_t* n,
                             int32_t* last, int64_t* look) noexcept nogil:
    """Apply the merge of lowest rank (leftmost on ties; with `guard` never below `last`) to sym[:n],
    given every adjacent pair's rank and result; False when there is none. The ranks of the (at most
    two) pairs the merge creates are left for the caller to look up: their positions go to look[0..1]."""
    cdef int32_t best, floor = last[0] if guard else -1
    cdef size_t i, best_i, m = n[0]
    cdef uint64_t key, best_key = NO_RANK_KEY
    for i in range(m - 1):  # (rank, position) in one word: the least is the leftmost lowest rank, no branch
        key = (<uint64_t><uint32_t>ranks[i] << 32) | i
        key = key if ranks[i] >= floor else NO_RANK_KEY
        best_key = key if key < best_key else best_key
    best = <int32_t>(best_key >> 32)
    if best == NO_RANK:
        return False
    best_i = <size_t><uint32_t>best_key
    last[0] = best
    sym[best_i] = results[best_i]
    for i in range(best_i + 1, m - 1):  # short: a loop beats three calls to memmove (setup.py)
        sym[i] = sym[i + 1]
        ranks[i - 1] = ranks[i]
        results[i - 1] = results[i]
    n[0] = m - 1
    look[0] = <int64_t>best_i - 1
    look[1] = <int64_t>best_i if best_i + 1 < m - 1 else -1
    return True


cdef inline void _look_up(const MergeTable* table, int32_t* sym, int32_t* ranks, int32_t* results,
                          const int64_t* look) noexcept nogil:
    cdef int64_t i
    for i in look[:2]:
        if i >= 0:
            ranks[i] = merge_table_rank(table, sym[i], sym[i + 1], &results[i], NO_RANK)


cdef size_t _scan_merges(const MergeTable* table, bint guard, int32_t* sym, int32_t* ranks, int32_t* results,
                         size_t n, size_t stop=1) noexcept nogil:
    """Merge sym[:n] in place by rank (see `_merge_step`), until `stop` tokens are left or no pair
    merges. Returns the new n."""
    cdef int32_t last = -1
    cdef int64_t look[2]
    while n > stop and _merge_step(guard, sym, ranks, results, &n, &last, look):
        _look_up(table, sym, ranks, results, look)
    return n


cdef void _fill_placeholders(IdVector& out, Workspace& ws) noexcept nogil:
    """Replace each placeholder -1 - q (at the positions ws.holes, in order) by the ids of pending
    pretoken q: from the last one back, the ids after each move up by whole runs."""
    cdef size_t k, h, run, w, end = out.size(), extra = 0
    cdef const Pending* pend
    for h in ws.holes:
        extra += <size_t>ws.pending[-1 - out[h]].count - 1
    out.resize(end + extra)
    w = end + extra
    k = ws.holes.size()
    while k > 0:
        k -= 1
        h = ws.holes[k]
        pend = &ws.pending[-1 - out[h]]
        run = end - h - 1
        w -= run
        if w != h + 1:
            memmove(&out[w], &out[h + 1], run * sizeof(int32_t))
        w -= <size_t>pend.count
        memcpy(&out[w], ws.pending_ids.data() + pend.start, pend.count * sizeof(int32_t))
        end = h


cdef class Encoder:
    """Merge tables and vocabulary of one tokenizer, shared read-only by the encoding threads."""
    cdef MergeTable merges
    cdef MergeTable supers            # two-phase models: supermerges (rank = index), over whole tokens
    cdef vector[uint8_t] in_super     # 1 for tokens that take part in some supermerge
    cdef bint has_supers
    cdef vector[MergeSlot] byte_pairs  # rank and result of every pair of bytes: 512 KiB, stays in cache
    cdef int32_t byte_ids[256]
    cdef string vocab                 # every token's bytes; token t is vocab[starts[t]:ends[t]]
    cdef vector[int64_t] starts
    cdef vector[int64_t] ends
    cdef vector[uint8_t] valid
    cdef BytesTable direct
    cdef vector[int32_t] special_ids
    cdef vector[int32_t] always_ids
    cdef uint8_t special_first[256]
    cdef int pattern
    cdef bint rank_guard
    cdef readonly int32_t n_vocab
    cdef IdPool* pool                 # ids memory handed back by Arrow, for the next call
    cdef vector[Workspace*] spare     # workspaces of finished calls: their caches stay warm
    cdef list id_objects              # int objects of every id, for Python list output (built once)

    def __cinit__(self, tokens, pairs, byte_ids, bint direct_all, int pattern, bint rank_guard=False,
                  special_tokens=None, always_tokens=None, supermerges=None):
        """`tokens`: bytes (or None) by id; `pairs`: (left, right, rank, result) tuples; `byte_ids`: 256
        ids (-1 where missing); `special_tokens` are matched only when allowed, `always_tokens` (HF's
        non-special added tokens) always; `supermerges`: (left, right, rank, result) tuples of a
        two-phase model, applied over runs of pretokens that became one token each."""
        cdef int64_t i
        self.pool = id_pool_new()
        merge_table_init(&self.merges, len(pairs))
        supermerges = supermerges or ()
        merge_table_init(&self.supers, len(supermerges))
        self.has_supers = len(supermerges) > 0
        self.in_super.assign(len(tokens), 0)
        for left, right, rank, result in supermerges:
            merge_table_add(&self.supers, left, right, rank, result)
            self.in_super[left] = 1
            self.in_super[right] = 1
        self.pattern = pattern
        self.rank_guard = rank_guard
        for t in tokens:
            self.starts.push_back(self.vocab.size())
            if t is not None:
                self.vocab.append(<string>t)
            self.ends.push_back(self.vocab.size())
            self.valid.push_back(t is not None)
        for left, right, rank, result in pairs:
            merge_table_add(&self.merges, left, right, rank, result)
        for i in range(256):
            self.byte_ids[i] = byte_ids[i]
        self._build_byte_pairs()  # (pairs of bytes keep their ranks below: a 2-byte token forms from its bytes)
        if not rank_guard:
            self._keep_final_pairs()
        self._add_specials(special_tokens or {}, always_tokens or {})
        self.vocab.append(VOCAB_PADDING, 0)
        self.n_vocab = <int32_t>self.starts.size()
        self.in_super.resize(self.n_vocab, 0)
        self._build_direct(direct_all)

    def __dealloc__(self):
        if self.pool != NULL:
            id_pool_release(self.pool)
        for ws in self.spare:
            del ws

    cdef Workspace* _take_workspace(self):
        """A workspace for one thread of a call (with the GIL, so no two calls share one)."""
        if self.spare.empty():
            return new Workspace()
        cdef Workspace* ws = self.spare.back()
        self.spare.pop_back()
        return ws

    cdef void _give_back(self, Workspace* ws, bint failed):
        """Keep a call's workspace for the next one, unless the call failed (its cache may still
        hold slots of pretokens that were waiting to be merged)."""
        if failed:
            del ws
        else:
            self.spare.push_back(ws)

    cdef void _keep_final_pairs(self):
        """Drop the pairs that never merge. Without a rank guard, no merge crosses the edges of a part
        once it exists, so the merges inside it are those that merging its bytes alone makes: a token
        forms from one split only, the last merge of its own bytes (none when those do not merge into
        it). A .tiktoken file lists every split (o200k: 446k pairs for 200k tokens): this halves the
        table that first-seen pretokens look up."""
        cdef MergeTable kept
        cdef vector[int32_t] sym, ranks, results, final
        cdef int32_t t
        cdef int64_t n
        cdef size_t m, k
        with nogil:
            for t in range(<int32_t>self.starts.size()):
                n = self.ends[t] - self.starts[t]
                if n < 2:
                    continue
                sym.resize(n)
                ranks.resize(n)
                results.resize(n)
                if not self._load_bytes(<const uint8_t*>self.vocab.data() + self.starts[t], n, sym.data(),
                                        ranks.data(), results.data()):
                    continue
                m = _scan_merges(&self.merges, False, sym.data(), ranks.data(), results.data(), <size_t>n, 2)
                if m == 2 and ranks[0] != NO_RANK and results[0] == t:
                    final.push_back(sym[0])
                    final.push_back(sym[1])
                    final.push_back(ranks[0])
                    final.push_back(t)
            merge_table_init(&kept, final.size() // 4)
            k = 0
            while k < final.size():
                merge_table_add(&kept, final[k], final[k + 1], final[k + 2], final[k + 3])
                k += 4
            self.merges.slots.swap(kept.slots)
            self.merges.mask = kept.mask

    cdef void _build_byte_pairs(self):
        cdef int a, b
        cdef int32_t result = 0
        cdef MergeSlot* slot
        self.byte_pairs.resize(65536)
        for a in range(256):
            for b in range(256):
                slot = &self.byte_pairs[(a << 8) | b]
                slot.rank = NO_RANK
                slot.result = 0
                if self.byte_ids[a] >= 0 and self.byte_ids[b] >= 0:
                    slot.rank = self._rank(self.byte_ids[a], self.byte_ids[b], &result)
                    slot.result = result

    cdef void _add_specials(self, dict special, dict always):
        """Specials get their own entries after the vocabulary's bytes (at their ids)."""
        cdef vector[int32_t] keys
        for i in range(256):
            self.special_first[i] = 0
        for table in (special, always):
            for text, tid in table.items():
                b = text.encode("utf-8")
                if not b:
                    raise ValueError("a special token must not be empty")
                while self.starts.size() <= <size_t>tid:
                    self.starts.push_back(0)
                    self.ends.push_back(0)
                    self.valid.push_back(0)
                self.starts[tid] = self.vocab.size()
                self.vocab.append(<string>b)
                self.ends[tid] = self.vocab.size()
                self.valid[tid] = 1
                if table is special:
                    self.special_ids.push_back(tid)
                else:
                    self.always_ids.push_back(tid)
                keys.push_back(tid)
                self.special_first[b[0]] = 1


    cdef void _build_direct(self, bint direct_all):
        """Tokens a pretoken may map to directly: all of them, or those that merging reaches."""
        cdef vector[int32_t] keys
        cdef IdVector out
        cdef Workspace ws
        cdef int32_t t
        workspace_init(ws, 0, 1)
        cdef int64_t start
        cdef vector[uint8_t] is_special
        is_special.assign(self.starts.size(), 0)
        for t in self.special_ids:
            is_special[t] = 1
        for t in self.always_ids:
            is_special[t] = 1
        with nogil:
            for t in range(<int32_t>self.starts.size()):
                if not self.valid[t] or is_special[t]:
                    continue
                if direct_all:
                    keys.push_back(t)
                    continue
                out.clear()
                start = self.starts[t]
                if self._merge(<const uint8_t*>self.vocab.data() + start, self.ends[t] - start,
                               out, ws) == 0 and out.size() == 1 and out[0] == t:
                    keys.push_back(t)
            bytes_table_build(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                              self.ends.data(), keys)

    # -- one pretoken ------------------------------------------------------------------------------
    cdef inline int32_t _rank(self, int32_t left, int32_t right, int32_t* result) noexcept nogil:
        return merge_table_rank(&self.merges, left, right, result, NO_RANK)

    cdef int _merge(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Merge the bytes p[:n] into `out`; 1 when a byte has no token. Short pieces merge in arrays
        on the stack, the first ranks from the small byte-pair table; long ones through the heap."""
        cdef int32_t sym[SHORT_PIECE]
        cdef int32_t ranks[SHORT_PIECE]
        cdef int32_t results[SHORT_PIECE]
        cdef int64_t i
        cdef size_t m
        if n <= SHORT_PIECE:
            if not self._load_bytes(p, n, sym, ranks, results):
                return 1
            m = _scan_merges(&self.merges, self.rank_guard, sym, ranks, results, <size_t>n)
            out.insert(out.end(), sym, sym + m)
            return 0
        ws.sym.resize(n)
        for i in range(n):
            ws.sym[i] = self.byte_ids[p[i]]
            if ws.sym[i] < 0:
                return 1
        self._merge_heap(&self.merges, self.rank_guard, ws, out, p)
        return 0

    cdef inline bint _load_bytes(self, const uint8_t* p, int64_t n, int32_t* sym, int32_t* ranks,
                                 int32_t* results) noexcept nogil:
        """The byte tokens of p[:n] and the rank and result of each adjacent pair (from the small
        byte-pair table); False when a byte has no token."""
        cdef const MergeSlot* bp
        cdef int64_t i
        for i in range(n):
            sym[i] = self.byte_ids[p[i]]
            if sym[i] < 0:
                return False
        for i in range(n - 1):
            bp = &self.byte_pairs[(<size_t>p[i] << 8) | p[i + 1]]
            ranks[i] = bp.rank
            results[i] = bp.result
        return True

    cdef inline void _set_pair(self, Workspace& ws, int32_t pos, int32_t rank, int32_t result) noexcept nogil:
        """Record the rank and result of the pair starting at pos, and queue it when it merges."""
        ws.pair_rank[pos] = rank
        ws.pair_result[pos] = result
        if rank != NO_RANK:
            ws.heap.push(~((<uint64_t>rank << 32) | <uint64_t>pos))

    cdef void _push(self, const MergeTable* table, Workspace& ws, int32_t pos) noexcept nogil:
        cdef int32_t result = 0
        cdef int32_t nx = ws.nxt[pos]
        if nx < 0:
            ws.pair_rank[pos] = NO_RANK
            return
        cdef int32_t r = merge_table_rank(table, ws.sym[pos], ws.sym[nx], &result, NO_RANK)
        self._set_pair(ws, pos, r, result)  # (not in one call: C leaves the order of arguments open)

    cdef void _merge_heap(self, const MergeTable* table, bint guard, Workspace& ws,
                          IdVector& out, const uint8_t* p) noexcept nogil:
        """Merge ws.sym (any length) by rank in O(n log n): a heap of pairs over a linked list. Each
        position remembers its pair's rank and result, so a popped entry is checked without a lookup.
        `p`: the bytes ws.sym holds the tokens of (their first ranks come from the byte-pair table),
        or NULL."""
        cdef int32_t n = <int32_t>ws.sym.size()
        cdef int32_t i, pos, nx, r, last = -1
        cdef uint64_t key
        cdef const MergeSlot* bp
        ws.nxt.resize(n)
        ws.prv.resize(n)
        ws.pair_rank.resize(n)
        ws.pair_result.resize(n)
        for i in range(n):
            ws.nxt[i] = i + 1 if i + 1 < n else -1
            ws.prv[i] = i - 1
        ws.pair_rank[n - 1] = NO_RANK
        while not ws.heap.empty():
            ws.heap.pop()
        for i in range(n - 1):
            if p != NULL:
                bp = &self.byte_pairs[(<size_t>p[i] << 8) | p[i + 1]]
                self._set_pair(ws, i, bp.rank, bp.result)
            else:
                self._push(table, ws, i)
        while not ws.heap.empty():
            key = ~ws.heap.top()
            ws.heap.pop()
            pos = <int32_t>(key & <uint64_t>0xFFFFFFFFULL)
            r = <int32_t>(key >> 32)
            if ws.sym[pos] < 0 or ws.pair_rank[pos] != r or (guard and r < last):
                continue
            nx = ws.nxt[pos]
            last = r
            ws.sym[pos] = ws.pair_result[pos]
            ws.sym[nx] = -1
            ws.nxt[pos] = ws.nxt[nx]
            if ws.nxt[nx] >= 0:
                ws.prv[ws.nxt[nx]] = pos
            if ws.prv[pos] >= 0:
                self._push(table, ws, ws.prv[pos])
            self._push(table, ws, pos)
        pos = 0
        while pos >= 0:
            out.push_back(ws.sym[pos])
            pos = ws.nxt[pos]

    cdef int _encode_piece(self, const uint8_t* p, int64_t n, const PieceKey* key, IdVector& out,
                           Workspace& ws) noexcept nogil:
        """Ids of one pretoken p[:n]: from the thread's cache of pretokens seen, the vocabulary, or by
        merging. `key`: its words and hash (NULL when over KEY_WORDS_MAX bytes: no cache then)."""
        cdef CacheSlot* slot = NULL
        cdef size_t before = out.size()
        cdef int32_t t
        cdef uint64_t h = 0
        if key != NULL:
            slot = &ws.cache[key.hash & ws.cache_mask]
            if _cache_get(slot, key, n, out, ws.holes):
                return 0
            t = bytes_table_get_words(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                      key.w, n, key.hash)
        else:
            h = bytes_hash(p, n)
            if long_cache_get(ws.long_cache, p, n, h, out):
                return 0
            t = bytes_table_get_hashed(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                       self.ends.data(), p, n, h)
        if t >= 0:
            out.push_back(t)
        elif ws.defer and n <= SHORT_PIECE:
            self._defer(p, n, key, slot, out, ws)
            return 0
        elif self._merge(p, n, out, ws):
            return 1
        if slot != NULL and (t < 0 or n > SHORT_KEY):  # short tokens are looked up in the vocabulary first
            _cache_put(slot, key, n, out.data() + before, out.size() - before)
        elif t < 0:
            long_cache_put(ws.long_cache, p, n, h, out.data() + before, <int64_t>(out.size() - before))
        return 0

    cdef void _defer(self, const uint8_t* p, int64_t n, const PieceKey* key, CacheSlot* slot,
                     IdVector& out, Workspace& ws) noexcept nogil:
        """Leave a placeholder (-1 - q) for pretoken p[:n], the q-th waiting to be merged; its cache
        slot says so, so that it is merged once however often it occurs before the batch."""
        cdef Pending pend
        cdef int64_t q = <int64_t>ws.pending.size()
        cdef int32_t which = <int32_t>q
        pend.p = p
        pend.n = n
        pend.key = -1 if key == NULL else key - ws.keys.data()
        ws.pending.push_back(pend)
        ws.holes.push_back(out.size())
        out.push_back(<int32_t>(-1 - q))
        if slot != NULL:
            _cache_put(slot, key, n, &which, 1)
            slot.n_ids = PENDING

    cdef bint _lane_start(self, Lane* lane, int64_t q, const Pending* pend) noexcept nogil:
        """Load the bytes of pending pretoken q into `lane`; False when a byte has no token."""
        if not self._load_bytes(pend.p, pend.n, lane.sym, lane.ranks, lane.results):
            return False
        lane.n = pend.n
        lane.last = -1
        lane.q = q
        lane.look[0] = -1
        lane.look[1] = -1
        return True

    cdef int _merge_pending(self, Workspace& ws) noexcept nogil:
        """Merge the waiting pretokens LANES at a time: a lane looks up the pairs its last merge made
        (their slots were prefetched then), applies one merge and prefetches the next lookups, then
        the next lane runs, so memory latency overlaps across pretokens. Results go to
        ws.pending_ids and the caches. 1 when a byte has no token."""
        cdef Lane lanes[LANES]
        cdef Lane* lane
        cdef Pending* pend
        cdef int64_t nq = <int64_t>ws.pending.size(), next_q = 0, i
        cdef int j, k, active = 0
        cdef bint more
        cdef const PieceKey* key
        cdef const int32_t* ids
        ws.pending_ids.clear()
        for k in range(LANES):
            lanes[k].q = -1
            if next_q < nq:
                if not self._lane_start(&lanes[k], next_q, &ws.pending[next_q]):
                    return 1
                next_q += 1
                active += 1
        while active > 0:
            for k in range(LANES):
                lane = &lanes[k]
                if lane.q < 0:
                    continue
                for j in range(2):
                    i = lane.look[j]
                    if i >= 0:
                        lane.ranks[i] = merge_table_rank_from(&self.merges, lane.start[j], lane.sym[i],
                                                              lane.sym[i + 1], &lane.results[i], NO_RANK)
                more = lane.n > 1 and _merge_step(self.rank_guard, lane.sym, lane.ranks, lane.results,
                                                  &lane.n, &lane.last, lane.look)
                if more:
                    for j in range(2):
                        i = lane.look[j]
                        if i >= 0:
                            lane.start[j] = merge_table_start(&self.merges, lane.sym[i], lane.sym[i + 1])
                            __builtin_prefetch(&self.merges.slots[lane.start[j]])
                    continue
                pend = &ws.pending[lane.q]
                pend.start = <int64_t>ws.pending_ids.size()
                pend.count = <int64_t>lane.n
                ws.pending_ids.insert(ws.pending_ids.end(), lane.sym, lane.sym + lane.n)
                lane.q = -1
                active -= 1
                if next_q < nq:
                    if not self._lane_start(lane, next_q, &ws.pending[next_q]):
                        return 1
                    next_q += 1
                    active += 1
        for i in range(nq):  # every PENDING slot gets its ids (or is emptied)
            pend = &ws.pending[i]
            ids = ws.pending_ids.data() + pend.start
            if pend.key >= 0:
                key = &ws.keys[pend.key]
                _cache_put(&ws.cache[key.hash & ws.cache_mask], key, pend.n, ids, pend.count)
            else:
                long_cache_put(ws.long_cache, pend.p, pend.n, bytes_hash(pend.p, pend.n), ids, pend.count)
        return 0

    cdef void _supermerge_run(self, IdVector& out, size_t first, size_t count, size_t tail,
                              Workspace& ws) noexcept nogil:
        """Apply the supermerges, lowest index first, to the run out[first:first + count] of
        single-token pretokens; the ids from `tail` on (the piece that ended the run) move up after it."""
        cdef size_t i, m
        cdef int32_t result = 0
        ws.sym.assign(out.begin() + first, out.begin() + first + count)
        ws.run.clear()
        if count <= SHORT_PIECE:
            ws.nxt.resize(count - 1)
            ws.prv.resize(count - 1)
            for i in range(count - 1):
                ws.nxt[i] = merge_table_rank(&self.supers, ws.sym[i], ws.sym[i + 1], &result, NO_RANK)
                ws.prv[i] = result
            ws.sym.resize(_scan_merges(&self.supers, False, ws.sym.data(), ws.nxt.data(), ws.prv.data(), count))
            ws.run.swap(ws.sym)
        else:
            self._merge_heap(&self.supers, False, ws, ws.run, NULL)
        m = ws.run.size()
        if m == count:
            return
        for i in range(m):
            out[first + i] = ws.run[i]
        out.erase(out.begin() + first + m, out.begin() + first + count)

    cdef int _encode_ordinary(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Token ids of p[:n] (no special tokens) appended to `out`: the pieces, then the batch of
        deferred merges put in place of their placeholders."""
        cdef int rc = self._encode_pieces(p, n, out, ws)
        if rc == 0 and ws.pending.size() > 0:
            rc = self._merge_pending(ws)
            if rc == 0:
                _fill_placeholders(out, ws)
        ws.pending.clear()
        ws.holes.clear()
        return rc

    cdef int _encode_pieces(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Pretokenize p[:n], then encode the pieces; the table slots of the piece PREFETCH places
        ahead are requested early so that memory latency overlaps with work. Two-phase models then
        apply their supermerges to each run of pieces that became one token each."""
        cdef size_t k, first, m, before, run_first = 0, run_count = 0
        cdef int64_t start = 0, end
        cdef PieceKey* key
        cdef int32_t t
        if n == 0:
            return 0
        if self.pattern < 0:  # the caller split the text already: it is one pretoken
            return self._encode_piece(p, n, self._piece_key(p, n, p + n, ws), out, ws)
        first = ws.ends.size()
        if pretokenize_pattern(p, n, self.pattern, ws.ends) != 0:
            return 2
        m = ws.ends.size() - first
        if ws.keys.size() < m:  # grown only: resizing would zero the keys every text
            ws.keys.resize(m)
        for k in range(m):
            end = ws.ends[first + k]
            if end - start <= KEY_WORDS_MAX:
                key = &ws.keys[k]
                key.hash = key_words(p + start, end - start, p + n, key.w)
            else:
                ws.keys[k].hash = 0
            start = end
        for k in range(min(m, <size_t>PREFETCH)):
            self._prefetch(ws, ws.keys[k].hash)
        start = 0
        for k in range(m):
            if k + PREFETCH < m:
                self._prefetch(ws, ws.keys[k + PREFETCH].hash)
            end = ws.ends[first + k]
            before = out.size()
            key = &ws.keys[k] if end - start <= KEY_WORDS_MAX else NULL
            t = -1
            if end - start <= SHORT_KEY:  # most pretokens: short, and a token (found within its slot)
                t = bytes_table_get_words(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                          key.w, end - start, key.hash)
            if t >= 0:
                out.push_back(t)
            # else a cache hit without a call
            elif (key == NULL or not _cache_get(&ws.cache[key.hash & ws.cache_mask], key, end - start, out,
                                                ws.holes)) and self._encode_piece(p + start, end - start, key, out, ws):
                return 1
            start = end
            if ws.keep_sizes:
                ws.piece_sizes.push_back(<int32_t>(out.size() - before))
            if self.has_supers:
                if out.size() == before + 1 and self.in_super[out[before]]:
                    if run_count == 0:
                        run_first = before
                    run_count += 1
                else:
                    if run_count >= 2:
                        self._supermerge_run(out, run_first, run_count, before, ws)
                    run_count = 0
        if run_count >= 2:
            self._supermerge_run(out, run_first, run_count, out.size(), ws)
        ws.ends.resize(first)
        return 0

    cdef PieceKey* _piece_key(self, const uint8_t* p, int64_t n, const uint8_t* limit, Workspace& ws) noexcept nogil:
        """The key of one pretoken p[:n] in ws.keys[0], or NULL when it is too long to have one."""
        if n > KEY_WORDS_MAX:
            return NULL
        ws.keys.resize(1)
        ws.keys[0].hash = key_words(p, n, limit, ws.keys[0].w)
        return &ws.keys[0]

    cdef inline void _prefetch(self, Workspace& ws, uint64_t h) noexcept nogil:
        __builtin_prefetch(&ws.cache[h & ws.cache_mask])
        __builtin_prefetch(&self.direct.slots[h & self.direct.mask])

    cdef int32_t _special_at(self, const uint8_t* p, int64_t n, const uint8_t* allowed, int64_t* length) noexcept nogil:
        """The longest allowed special (or always-matched added) token starting at p, or -1."""
        cdef int32_t best = -1
        cdef int64_t best_len = 0, ln
        cdef size_t k, na = self.always_ids.size()
        cdef int32_t t
        cdef const uint8_t* v = <const uint8_t*>self.vocab.data()
        for k in range(na + (self.special_ids.size() if allowed != NULL else 0)):
            if k >= na and not allowed[k - na]:
                continue
            t = self.always_ids[k] if k < na else self.special_ids[k - na]
            ln = self.ends[t] - self.starts[t]
            if best_len < ln <= n and memcmp(v + self.starts[t], p, ln) == 0:
                best, best_len = t, ln
        length[0] = best_len
        return best

    cdef int encode_text(self, const uint8_t* p, int64_t n, const uint8_t* allowed, IdVector& out,
                         Workspace& ws) noexcept nogil:
        """Token ids of the UTF-8 text p[:n] appended to `out`; `allowed` (NULL: none) flags the special
        tokens, in `special_tokens` order, that are matched as such."""
        cdef int64_t i = 0, start = 0, ln = 0
        cdef int32_t t
        cdef int rc
        if self.always_ids.size() == 0 and (allowed == NULL or self.special_ids.size() == 0):
            return self._encode_ordinary(p, n, out, ws)
        while i < n:
            if self.special_first[p[i]]:
                t = self._special_at(p + i, n - i, allowed, &ln)
                if t >= 0:
                    rc = self._encode_ordinary(p + start, i - start, out, ws)
                    if rc:
                        return rc
                    out.push_back(t)
                    i += ln
                    start = i
                    continue
            i += 1
        return self._encode_ordinary(p + start, n - start, out, ws)

    # -- rows --------------------------------------------------------------------------------------
    cdef bint _encode_share(self, const BinaryView& v, int t, int threads, ChunkClaims& claims,
                            const uint8_t* allowed, bint keep_ids, vector[IdRows]& own, int* until,
                            vector[IdRows]& stolen, Workspace& ws) noexcept nogil:
        """Thread t's share of a call (see row_chunks): the chunks of its own run, front to back, into
        own[t] (until[t]: the first it did not take), then the chunks c left in the other runs, from
        their back, into stolen[c]. False when a row failed."""
        cdef int chunks = chunk_count(threads), c, d, u
        cdef int64_t first = row_split(v, owned_first(t, threads, chunks), chunks)
        cdef int64_t last = row_split(v, owned_first(t + 1, threads, chunks), chunks)
        workspace_init(ws, _bytes(v, first, last), threads)
        ws.defer = not self.has_supers
        if keep_ids:  # room for a token per 2 bytes (untouched pages cost address space only): growing copies
            own[t].ids.reserve(_bytes(v, first, last) // 2 + 16)
        c = owned_first(t, threads, chunks)
        while c < owned_first(t + 1, threads, chunks) and claims.claim(c):
            self._encode_rows(v, row_split(v, c, chunks), row_split(v, c + 1, chunks), allowed, keep_ids, own[t], ws)
            c += 1
            if own[t].error_row >= 0:
                break
        until[t] = c
        if own[t].error_row >= 0:
            return False
        for d in range(1, threads):
            u = (t + d) % threads
            c = owned_first(u + 1, threads, chunks) - 1
            while c >= owned_first(u, threads, chunks) and claims.claim(c):
                first = row_split(v, c, chunks)
                last = row_split(v, c + 1, chunks)
                if keep_ids:
                    stolen[c].ids.reserve(_bytes(v, first, last) // 2 + 16)
                self._encode_rows(v, first, last, allowed, keep_ids, stolen[c], ws)
                if stolen[c].error_row >= 0:
                    return False
                c -= 1
        return True

    cdef void _encode_rows(self, const BinaryView& v, int64_t first, int64_t last, const uint8_t* allowed,
                           bint keep_ids, IdRows& res, Workspace& ws) noexcept nogil:
        """Append rows first..last-1 to `res`: their ids (with keep_ids) and lengths; on a failure,
        where (res.error_row), and the rows after it are left."""
        cdef int64_t r, start, before
        cdef int rc
        for r in range(first, last):
            if not view_valid(v, r):
                res.lengths.push_back(-1)
                continue
            start = view_start(v, r)
            before = <int64_t>res.ids.size()
            rc = self.encode_text(v.values + start, view_end(v, r) - start, allowed, res.ids, ws)
            if rc:
                res.error_row = r
                res.error_code = rc
                return
            res.lengths.push_back(<int64_t>res.ids.size() - before)
            if not keep_ids:
                res.ids.clear()

    def encode_arrow(self, texts, allowed_special=None, int threads=1, bint counts_only=False,
                     bint as_lists=False):
        """Encode a pyarrow string array: a list<int32> array of ids (NULL stays NULL), or with
        `counts_only` an int64 array of token counts. `allowed_special`: None, "all", or a set of special
        token ids to match as such. Rows are split among `threads` threads. With `as_lists`, a Python
        list of id lists instead (None for NULL), built straight from the C buffers."""
        cdef vector[uint8_t] allowed_mask
        cdef uint8_t* allowed = NULL
        cdef bint every
        cdef int32_t sid
        cdef uint8_t flag
        if allowed_special is not None:
            every = allowed_special == "all"
            for sid in self.special_ids:
                flag = 1
                if not every and sid not in allowed_special:
                    flag = 0
                allowed_mask.push_back(flag)
            allowed = allowed_mask.data()
        cdef list keep = []
        cdef BinaryView v = binary_view(texts, keep)
        cdef int64_t n = v.length
        cdef int nt = row_threads(threads, n), chunks = chunk_count(nt)
        cdef vector[IdRows] own = vector[IdRows](nt)
        cdef vector[IdRows] stolen = vector[IdRows](chunks)
        cdef vector[IdRows] parts
        cdef vector[int] until = vector[int](nt)
        cdef vector[int] ok = vector[int](nt)
        cdef vector[Workspace*] workspaces
        cdef ChunkClaims claims
        cdef int k, c
        cdef bint keep_ids = not counts_only
        claims.reset(chunks)
        for k in range(nt):
            own[k].error_row = -1
            workspaces.push_back(self._take_workspace())
        for c in range(chunks):
            stolen[c].error_row = -1
        try:
            if keep_ids and not as_lists:  # the first part's vector ends up holding every id
                id_pool_take(self.pool, own[0].ids)
                own[0].ids.reserve(_bytes(v, 0, n) // 2 + 16)
            for k in prange(nt, nogil=True, num_threads=nt, schedule="static"):
                ok[k] = self._encode_share(v, k, nt, claims, allowed, keep_ids, own, until.data(), stolen,
                                           workspaces[k][0])
        finally:
            for k in range(nt):
                self._give_back(workspaces[k], not ok[k])
        for k in range(nt):  # the parts in row order
            id_rows_move(parts, own[k])
            for c in range(until[k], owned_first(k + 1, nt, chunks)):
                id_rows_move(parts, stolen[c])
        for k in range(<int>parts.size()):  # the first row that failed (any later chunk may be left)
            if parts[k].error_row >= 0:
                raise ValueError(f"row {parts[k].error_row}: " + (
                    "the text holds a byte that has no token in this vocabulary"
                    if parts[k].error_code == 1 else "pre-tokenization failed"))
        if as_lists:
            if self.id_objects is None:
                self.id_objects = list(range(self.n_vocab))
            collecting = gc.isenabled()
            gc.disable()  # lists of ints make no cycles: no collection passes over them while they grow
            try:
                return _rows_to_lists(parts, self.id_objects)
            finally:
                if collecting:
                    gc.enable()
        return id_rows_arrow(parts, counts_only, self.pool, nt)

    # -- supermerge candidates ---------------------------------------------------------------------
    cdef int _candidates_text(self, const uint8_t* p, int64_t n, const uint8_t* eligible,
                              CandidatesOut& res, IdVector& ids, Workspace& ws) noexcept nogil:
        """Append the supermerge candidates of p[:n] (maximal runs of two or more pretokens that each
        encode to one eligible token) to `res`; returns how many, or -1/-2 on a failure."""
        cdef size_t k, at = 0
        cdef int64_t run_len = 0, found = 0
        cdef int rc
        ids.clear()
        ws.piece_sizes.clear()
        ws.keep_sizes = True
        rc = self._encode_ordinary(p, n, ids, ws)
        ws.keep_sizes = False
        if rc:
            return -rc
        for k in range(ws.piece_sizes.size() + 1):
            if k < ws.piece_sizes.size():
                if ws.piece_sizes[k] == 1 and eligible[ids[at]]:
                    res.units.push_back(ids[at])
                    run_len += 1
                    at += 1
                    continue
                at += ws.piece_sizes[k]
            if run_len >= 2:
                res.cand_units.push_back(run_len)
                found += 1
            elif run_len == 1:  # a lone eligible pretoken is no candidate
                res.units.pop_back()
            run_len = 0
        return <int>found

    cdef void _candidates_rows(self, const BinaryView& v, int threads, int64_t first, int64_t last,
                               const uint8_t* eligible, CandidatesOut& res) noexcept nogil:
        cdef Workspace ws
        cdef IdVector ids
        cdef int64_t r, start
        cdef int found
        workspace_init(ws, _bytes(v, first, last), threads)
        for r in range(first, last):
            if not view_valid(v, r):
                res.row_cands.push_back(-1)
                continue
            start = view_start(v, r)
            found = self._candidates_text(v.values + start, view_end(v, r) - start, eligible, res, ids, ws)
            if found < 0:
                res.error_row = r
                res.error_code = -found
                return
            res.row_cands.push_back(found)

    def candidates_arrow(self, texts, bytes eligible, int threads=1):
        """The supermerge candidates of each text as a list<list<int32>> array (one list of unit token
        ids per candidate; NULL stays NULL). `eligible[t]` is 1 for the tokens a unit may be (phase-1
        tokens holding a letter); a pretoken is a unit when it encodes to exactly one eligible token."""
        if len(eligible) < <size_t>self.starts.size():
            raise ValueError("the eligibility mask must cover every token id")
        if self.pattern < 0:
            raise ValueError("candidates need one of the built-in pre-tokenization patterns")
        cdef const uint8_t* mask = <const uint8_t*><char*>eligible
        cdef list keep = []
        cdef BinaryView v = binary_view(texts, keep)
        cdef int64_t n = v.length
        cdef int nt = row_threads(threads, n)
        cdef vector[CandidatesOut] parts = vector[CandidatesOut](nt)
        cdef int k
        for k in range(nt):
            parts[k].error_row = -1
        for k in prange(nt, nogil=True, num_threads=nt, schedule="static"):
            self._candidates_rows(v, nt, row_split(v, k, nt), row_split(v, k + 1, nt), mask, parts[k])
        for k in range(nt):
            if parts[k].error_row >= 0:
                raise ValueError(f"row {parts[k].error_row}: " + (
                    "the text holds a byte that has no token in this vocabulary"
                    if parts[k].error_code == 1 else "pre-tokenization failed"))
        return _candidates_to_arrow(parts, n, self.pool)

    # -- ids -> bytes ------------------------------------------------------------------------------
    def decode_arrow(self, ids):
        """Bytes of each row of a list<integer> array (NULL stays NULL), as a large_binary array.
        Unknown ids raise ValueError."""
        cdef list keep = []
        cdef IdListView view = id_list_view(ids, keep)
        ids = keep[0]  # the array as read: large_list
        cdef const int32_t* tok = view.ids
        cdef const int64_t* loff = view.offsets
        cdef int64_t n = view.length, r, j, t, bad = -1
        cdef int64_t nv = <int64_t>self.starts.size()
        cdef string out
        cdef vector[int64_t] offs
        offs.push_back(0)
        cdef const char* vocab = self.vocab.data()
        with nogil:
            for r in range(n):
                for j in range(loff[r], loff[r + 1]):
                    t = tok[j]
                    if t < 0 or t >= nv or not self.valid[t]:
                        bad = j
                        break
                    out.append(vocab + self.starts[t], self.ends[t] - self.starts[t])
                if bad >= 0:
                    break
                offs.push_back(<int64_t>out.size())
        if bad >= 0:
            raise ValueError(f"token id {tok[bad]} is not in this vocabulary (ids 0..{nv - 1})")
        data = pa.Array.from_buffers(pa.large_binary(), offs.size() - 1,
                                     [None, pa.py_buffer(_int64_bytes(offs)), pa.py_buffer(out)])
        if ids.null_count:
            return pa.compute.if_else(ids.is_null(), pa.scalar(None, pa.large_binary()), data)
        return data

    def token_bytes(self, int32_t token_id) -> bytes:
        """The bytes of one token id."""
        if token_id < 0 or token_id >= <int32_t>self.starts.size() or not self.valid[token_id]:
            raise ValueError(f"token id {token_id} is not in this vocabulary")
        return self.vocab.substr(self.starts[token_id], self.ends[token_id] - self.starts[token_id])

    def token_id(self, bytes b):
        """The id of the token with bytes `b` that a pretoken maps to directly, or None."""
        cdef int32_t t = bytes_table_get(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                         self.ends.data(), <const uint8_t*><char*>b, len(b))
        return None if t < 0 else t


cdef bytes _int64_bytes(const vector[int64_t]& v):
    return (<const char*>v.data())[:v.size() * sizeof(int64_t)]


cdef extern from "Python.h":
    # borrowed / stolen references as raw pointers: no reference counting by Cython per id
    PyObject* _list_get "PyList_GET_ITEM"(object, Py_ssize_t)
    void _list_set "PyList_SET_ITEM"(object, Py_ssize_t, PyObject*)
    void _incref "Py_INCREF"(PyObject*)


cdef list _rows_to_lists(vector[IdRows]& parts, list id_objects):
    """The threads' outputs as Python lists of ints (what tiktoken-style callers want), each id the
    shared int object of `id_objects` (no int created per token)."""
    cdef list rows = []
    cdef list ids
    cdef size_t k, j
    cdef int64_t at, ln, i
    cdef PyObject* item
    for k in range(parts.size()):
        at = 0
        for j in range(parts[k].lengths.size()):
            ln = parts[k].lengths[j]
            if ln < 0:
                rows.append(None)
                continue
            ids = PyList_New(ln)
            for i in range(ln):
                item = _list_get(id_objects, parts[k].ids[at + i])
                _incref(item)
                _list_set(ids, i, item)
            at += ln
            rows.append(ids)
    return rows


cdef object _candidates_to_arrow(vector[CandidatesOut]& parts, int64_t n, IdPool* pool):
    """One list<list<int32>> Arrow array from the threads' candidate outputs."""
    cdef vector[int64_t] cand_off, row_off
    cdef IdVector units
    cdef size_t k, j
    cdef int64_t nulls = 0, row = 0
    cand_off.push_back(0)
    row_off.assign(n + 1, 0)
    validity = PyBytes_FromStringAndSize(NULL, (n + 7) // 8)
    cdef uint8_t* valid = <uint8_t*>PyBytes_AS_STRING(validity)
    memset(valid, 0, (n + 7) // 8)
    for k in range(parts.size()):
        units.insert(units.end(), parts[k].units.begin(), parts[k].units.end())
        for j in range(parts[k].cand_units.size()):
            cand_off.push_back(cand_off.back() + parts[k].cand_units[j])
        nulls += add_rows(parts[k].row_cands, row, row_off.data(), valid, False)
        row += <int64_t>parts[k].row_cands.size()
    ids = pa.Array.from_buffers(pa.int32(), units.size(), [None, ids_buffer(units, pool)])
    cands = pa.Array.from_buffers(pa.large_list(pa.int32()), cand_off.size() - 1,
                                  [None, pa.py_buffer(_int64_bytes(cand_off))], children=[ids])
    return pa.Array.from_buffers(pa.large_list(pa.large_list(pa.int32())), n,
                                 [pa.py_buffer(validity) if nulls else None, pa.py_buffer(_int64_bytes(row_off))],
                                 null_count=nulls, children=[cands])
