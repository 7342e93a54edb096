# cython: language_level=3
"""The byte-level BPE encoder: text -> pretokens -> token ids, over Arrow arrays, GIL released.

A pretoken whose bytes are a token that merging would reach anyway becomes that token directly (for
tiktoken and `ignore_merges` tokenizers: every token). Otherwise merging starts from the byte tokens
and repeatedly merges the adjacent pair of lowest rank (leftmost on ties) until no pair is in the
merge table: a quadratic scan for short pretokens, a heap over a linked list (O(n log n)) for long
ones. Reference models never go back to a rank below the last one applied (`rank_guard`).
"""
from cython.operator cimport dereference as deref
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcmp
from libcpp.queue cimport priority_queue
from libcpp.string cimport string
from libcpp.vector cimport vector

from arrow_buffers cimport BinaryView, binary_view, view_end, view_start
from bytes_table cimport BytesTable, bytes_table_build, bytes_table_get
from pair_table cimport PairTable, pack_pair, pair_table_free, pair_table_get, pair_table_get_or_insert, pair_table_init
from pretokenize cimport pretokenize_pattern

import pyarrow as pa

cdef enum:
    SHORT_PIECE = 48          # pretokens up to this many bytes merge by a plain scan
    NO_RANK = 0x7FFFFFFF


cdef struct Workspace:
    vector[int32_t] sym
    vector[int32_t] nxt
    vector[int32_t] prv
    vector[int64_t] ends
    priority_queue[uint64_t] heap


cdef struct RowsOut:
    vector[int32_t] ids
    vector[int64_t] lengths      # tokens per row, -1 for NULL
    int64_t error_row            # first row that failed (-1: none)
    int32_t error_code


cdef class Encoder:
    """Merge tables and vocabulary of one tokenizer, shared read-only by the encoding threads."""
    cdef PairTable pairs
    cdef vector[int32_t] merge_rank
    cdef vector[int32_t] merge_result
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

    def __cinit__(self, tokens, pairs, byte_ids, bint direct_all, int pattern, bint rank_guard=False,
                  special_tokens=None, always_tokens=None):
        """`tokens`: bytes (or None) by id; `pairs`: (left, right, rank, result) tuples; `byte_ids`: 256
        ids (-1 where missing); `special_tokens` are matched only when allowed, `always_tokens` (HF's
        non-special added tokens) always."""
        cdef int64_t i
        pair_table_init(&self.pairs, len(pairs))
        self.pattern = pattern
        self.rank_guard = rank_guard
        for t in tokens:
            self.starts.push_back(self.vocab.size())
            if t is not None:
                self.vocab.append(<string>t)
            self.ends.push_back(self.vocab.size())
            self.valid.push_back(t is not None)
        for left, right, rank, result in pairs:
            if pair_table_get_or_insert(&self.pairs, pack_pair(left, right), <int32_t>self.merge_rank.size()) < 0:
                self.merge_rank.push_back(rank)
                self.merge_result.push_back(result)
        for i in range(256):
            self.byte_ids[i] = byte_ids[i]
        self._add_specials(special_tokens or {}, always_tokens or {})
        self.n_vocab = <int32_t>self.starts.size()
        self._build_direct(direct_all)

    def __dealloc__(self):
        pair_table_free(&self.pairs)

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
        cdef vector[int32_t] out
        cdef Workspace ws
        cdef int32_t t
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
        cdef int32_t k = pair_table_get(&self.pairs, pack_pair(left, right))
        if k < 0:
            return NO_RANK
        result[0] = self.merge_result[k]
        return self.merge_rank[k]

    cdef int _merge(self, const uint8_t* p, int64_t n, vector[int32_t]& out, Workspace& ws) noexcept nogil:
        """Merge the bytes p[:n] into `out`; 1 when a byte has no token."""
        cdef int64_t i
        ws.sym.resize(n)
        for i in range(n):
            ws.sym[i] = self.byte_ids[p[i]]
            if ws.sym[i] < 0:
                return 1
        if n <= SHORT_PIECE:
            self._merge_scan(ws.sym)
            out.insert(out.end(), ws.sym.begin(), ws.sym.end())
        else:
            self._merge_heap(ws, out)
        return 0

    cdef void _merge_scan(self, vector[int32_t]& sym) noexcept nogil:
        cdef int32_t best, best_result, r, result = 0, last = -1
        cdef size_t i, best_i
        while sym.size() > 1:
            best = NO_RANK
            best_i = 0
            best_result = 0
            for i in range(sym.size() - 1):
                r = self._rank(sym[i], sym[i + 1], &result)
                if r < best and (not self.rank_guard or r >= last):
                    best, best_i, best_result = r, i, result
            if best == NO_RANK:
                return
            last = best
            sym[best_i] = best_result
            sym.erase(sym.begin() + best_i + 1)

    cdef void _push(self, Workspace& ws, int32_t pos) noexcept nogil:
        cdef int32_t result = 0
        cdef int32_t nx = ws.nxt[pos]
        if nx < 0:
            return
        cdef int32_t r = self._rank(ws.sym[pos], ws.sym[nx], &result)
        if r != NO_RANK:
            ws.heap.push(~((<uint64_t>r << 32) | <uint64_t>pos))

    cdef void _merge_heap(self, Workspace& ws, vector[int32_t]& out) noexcept nogil:
        cdef int32_t n = <int32_t>ws.sym.size()
        cdef int32_t i, pos, nx, r, result = 0, last = -1
        cdef uint64_t key
        ws.nxt.resize(n)
        ws.prv.resize(n)
        for i in range(n):
            ws.nxt[i] = i + 1 if i + 1 < n else -1
            ws.prv[i] = i - 1
        while not ws.heap.empty():
            ws.heap.pop()
        for i in range(n - 1):
            self._push(ws, i)
        while not ws.heap.empty():
            key = ~ws.heap.top()
            ws.heap.pop()
            pos = <int32_t>(key & <uint64_t>0xFFFFFFFFULL)
            nx = ws.nxt[pos]
            if ws.sym[pos] < 0 or nx < 0:
                continue
            r = self._rank(ws.sym[pos], ws.sym[nx], &result)
            if r != <int32_t>(key >> 32) or (self.rank_guard and r < last):
                continue
            last = r
            ws.sym[pos] = result
            ws.sym[nx] = -1
            ws.nxt[pos] = ws.nxt[nx]
            if ws.nxt[nx] >= 0:
                ws.prv[ws.nxt[nx]] = pos
            if ws.prv[pos] >= 0:
                self._push(ws, ws.prv[pos])
            self._push(ws, pos)
        pos = 0
        while pos >= 0:
            out.push_back(ws.sym[pos])
            pos = ws.nxt[pos]

    cdef int _encode_piece(self, const uint8_t* p, int64_t n, vector[int32_t]& out, Workspace& ws) noexcept nogil:
        cdef int32_t t = bytes_table_get(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                         self.ends.data(), p, n)
        if t >= 0:
            out.push_back(t)
            return 0
        return self._merge(p, n, out, ws)

    cdef int _encode_ordinary(self, const uint8_t* p, int64_t n, vector[int32_t]& out, Workspace& ws) noexcept nogil:
        cdef size_t k, first
        cdef int64_t start = 0
        if n == 0:
            return 0
        if self.pattern < 0:  # the caller split the text already: it is one pretoken
            return self._encode_piece(p, n, out, ws)
        first = ws.ends.size()
        if pretokenize_pattern(p, n, self.pattern, ws.ends) != 0:
            return 2
        for k in range(first, ws.ends.size()):
            if self._encode_piece(p + start, ws.ends[k] - start, out, ws):
                return 1
            start = ws.ends[k]
        ws.ends.resize(first)
        return 0

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

    cdef int encode_text(self, const uint8_t* p, int64_t n, const uint8_t* allowed, vector[int32_t]& out,
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
    cdef void _encode_rows(self, const BinaryView& v, const uint8_t* validity, int64_t validity_offset,
                           int64_t first, int64_t last, const uint8_t* allowed, bint keep_ids,
                           RowsOut& res) noexcept nogil:
        cdef Workspace ws
        cdef int64_t r, start, before
        cdef int rc
        for r in range(first, last):
            if validity != NULL and not (validity[(validity_offset + r) >> 3] >> ((validity_offset + r) & 7)) & 1:
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

    def encode_arrow(self, texts, allowed_special=None, int threads=1, bint counts_only=False):
        """Encode a pyarrow string array: a list<int32> array of ids (NULL stays NULL), or with
        `counts_only` an int64 array of token counts. `allowed_special`: None, "all", or a set of special
        token ids to match as such. Rows are split among `threads` threads."""
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
        arr = keep[0]
        cdef int64_t n = len(arr)
        validity_buf = arr.buffers()[0] if arr.null_count else None
        cdef const uint8_t* validity = NULL
        if validity_buf is not None:
            validity = <const uint8_t*><size_t>validity_buf.address
        cdef int64_t voff = arr.offset
        cdef int nt = max(1, min(threads, n // 64 + 1))
        cdef vector[RowsOut] parts = vector[RowsOut](nt)
        cdef int k
        cdef bint keep_ids = not counts_only
        for k in range(nt):
            parts[k].error_row = -1
        for k in prange(nt, nogil=True, num_threads=nt, schedule="static"):
            self._encode_rows(v, validity, voff, n * k // nt, n * (k + 1) // nt, allowed, keep_ids, parts[k])
        for k in range(nt):
            if parts[k].error_row >= 0:
                raise ValueError(f"row {parts[k].error_row}: " + (
                    "the text holds a byte that has no token in this vocabulary"
                    if parts[k].error_code == 1 else "pre-tokenization failed"))
        return _rows_to_arrow(parts, n, counts_only)

    # -- ids -> bytes ------------------------------------------------------------------------------
    def decode_arrow(self, ids, bint per_token=False):
        """Bytes of each row of a list<integer> array (NULL stays NULL), as a large_binary array; with
        `per_token`, a list<large_binary> array of each token's bytes. Unknown ids raise ValueError."""
        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        if not pa.types.is_large_list(ids.type):
            ids = ids.cast(pa.large_list(pa.int32()))
        flat = ids.values.cast(pa.int32())
        if flat.null_count:
            raise ValueError("token ids must not be NULL")
        keep = (flat.buffers()[1], ids.buffers()[1])
        cdef const int32_t* tok = (<const int32_t*><size_t>keep[0].address) + <int64_t>flat.offset
        cdef const int64_t* loff = (<const int64_t*><size_t>keep[1].address) + <int64_t>ids.offset
        cdef int64_t n = len(ids), r, j, t, bad = -1
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
                    if per_token:
                        offs.push_back(<int64_t>out.size())
                if bad >= 0:
                    break
                if not per_token:
                    offs.push_back(<int64_t>out.size())
        if bad >= 0:
            raise ValueError(f"token id {tok[bad]} is not in this vocabulary (ids 0..{nv - 1})")
        data = pa.Array.from_buffers(pa.large_binary(), offs.size() - 1,
                                     [None, pa.py_buffer(_int64_bytes(offs)), pa.py_buffer(out)])
        if per_token:
            first = ids.offsets[0]
            return pa.LargeListArray.from_arrays(pa.compute.subtract(ids.offsets, first), data,
                                                 mask=ids.is_null() if ids.null_count else None)
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


cdef object _rows_to_arrow(vector[RowsOut]& parts, int64_t n, bint counts_only):
    """One Arrow array from the threads' outputs: list<int32> ids, or int64 counts."""
    cdef vector[int64_t] offsets
    cdef vector[int64_t] counts
    cdef vector[uint8_t] valid
    cdef vector[int32_t] ids
    cdef int64_t total = 0, nulls = 0, ln
    cdef size_t k, j
    for k in range(parts.size()):
        for j in range(parts[k].lengths.size()):
            ln = parts[k].lengths[j]
            if offsets.size() == 0:
                offsets.push_back(0)
            valid.push_back(ln >= 0)
            nulls += ln < 0
            total += ln if ln > 0 else 0
            offsets.push_back(total)
            counts.push_back(ln if ln > 0 else 0)
        if not counts_only:
            ids.insert(ids.end(), parts[k].ids.begin(), parts[k].ids.end())
    if offsets.size() == 0:
        offsets.push_back(0)
    mask = None
    if nulls:
        mask = pa.array([not x for x in valid], pa.bool_())
    if counts_only:
        cnt = pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(_int64_bytes(counts))])
        return cnt if mask is None else pa.compute.if_else(mask, pa.scalar(None, pa.int64()), cnt)
    values = pa.Array.from_buffers(pa.int32(), ids.size(),
                                   [None, pa.py_buffer((<const char*>ids.data())[:ids.size() * 4])])
    offs = pa.Array.from_buffers(pa.int64(), offsets.size(), [None, pa.py_buffer(_int64_bytes(offsets))])
    return pa.LargeListArray.from_arrays(offs, values, mask=mask)



