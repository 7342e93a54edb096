# cython: language_level=3
"""The byte-level BPE encoder: text -> pretokens -> token ids, over Arrow arrays with the GIL released,
or one Python str at a time (the direct path: the str's own UTF-8 buffer in, a list of ints out).

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
the work of the others; longer ones backtrack (`backtrack.pxd`, exact for vocabularies whose merges
form each token after its parts, as trainers make them) where the heap would take them: first-seen
pretokens over 48 bytes 1.1-1.2x faster, and 0.5x the lanes' speed on 13-48 bytes, where the lanes'
overlapped misses win (one thread, o200k, 2026-12-02). The threads of a call share what they merged
(`shared_pieces.h`, insert-only and lock-free): a pretoken another thread merged is taken from there,
the waiting ones of a text looked up together so that their misses overlap. Without it, each thread
merged again what the others had: two threads took 1.3x one thread's CPU on the multilingual mix.
The big tables, built at load, sit on huge pages (`huge_pages.h`); Python list output shares one int
object per id.

The parts, each its own file: the merge kernels (`merge_scan`, `merge_heap`, `merge_lanes`,
`backtrack`), the pretoken cache (`pretoken_cache`, `long_cache`) and a thread's `workspace`; from
`sqltok/native/`, the rows shared among threads (`parallel_rows`), the Arrow output (`id_output`) and
decoding (`decode_arrow`). This module holds the Encoder: its tables, and a text's way through them.
"""
from cpython.list cimport PyList_New
from cpython.ref cimport PyObject
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.bpe.backtrack cimport backtrack_build, backtrack_encode
from sqltok.bpe.char_atoms cimport TOO_MANY, char_atoms_build, has_atoms, load_symbols
from sqltok.bpe.long_cache cimport long_cache_get, long_cache_put
from sqltok.bpe.merge_heap cimport MergeScratch, merge_heap
from sqltok.bpe.merge_lanes cimport Pending, fill_placeholders, merge_lanes
from sqltok.bpe.merge_scan cimport NO_RANK, SHORT_PIECE, load_bytes, scan_merges
from sqltok.bpe.merge_table cimport MergeSlot, merge_table_add, merge_table_init, merge_table_rank
from sqltok.bpe.pretoken_cache cimport (CacheSlot, PieceKey, PretokenCache, cache_get, cache_put,
                                        cache_put_merged, cache_put_pending, cache_slot)
from sqltok.bpe.workspace cimport Workspace, workspace_init
from sqltok.native.added_match cimport AddedSplit, added_splits, added_tokens_add, added_tokens_init
from sqltok.native.arrow_buffers cimport BinaryView, view_bytes, view_end, view_start, view_valid
from sqltok.native.bytes_table cimport (KEY_WORDS_MAX, SLOT_KEY_MAX, BytesTable, bytes_hash, bytes_table_build,
                                        bytes_table_get, bytes_table_get_hashed, bytes_table_get_words, key_words)
from sqltok.native.decode_arrow cimport TokenPieces, decode_arrow
from sqltok.native.id_lists cimport IdRows, IdVector, id_rows_move
from sqltok.native.decode_ids cimport decode_ids, decode_text
from sqltok.native.id_output cimport (collector_pause, collector_resume, id_list, id_pool_new, id_pool_release, id_pool_take, id_rows_arrow, id_rows_into,
                                      id_rows_lists)
from sqltok.native.parallel_rows cimport RowRun, on_main_thread, row_split, rows_open, rows_run, signals_raised
from sqltok.native.portable cimport prefetch
from sqltok.native.shared_pieces cimport SharedPieces
from sqltok.pretokenizer.cut_points cimport CUT_CANDIDATES, CUT_PRETOKENS, cut_after, pattern_cuts
from sqltok.pretokenizer.matcher cimport pretokenize_pattern

import pyarrow as pa

from sqltok.added_tokens import SPACE, WORD, AddedTokenFlags, code_point_ranges
from sqltok.errors import SqltokError, token_id_error
from sqltok.normalizers import normalize

cdef enum:
    PREFETCH = 24             # pieces ahead whose table slots are requested early
    SHORT_KEY = SLOT_KEY_MAX  # pretokens up to this many bytes are looked up in the vocabulary first
    VOCAB_PADDING = 24        # zero bytes after the last token, for word-wise key compares
    NOGIL_BYTES = 4096        # a single text from Python this long or longer is encoded without the GIL
    KEEP_IDS = 1 << 20        # a workspace keeps the ids vector of a single text up to this capacity
    BACKTRACK_FROM = SHORT_PIECE + 1  # pretokens this long backtrack where it is exact (see below)
    ATOM_PIECE = 3 * SHORT_PIECE  # pretokens up to this long wait for merge_lanes when atoms may shorten them
    DIRECT_SPARSE = 2         # single calls size the cache for 1/this of their bytes (see _encode_one)
    SHARED_SLOT_BITS = 18     # the pretokens shared by a call's threads: up to 256k of them,
    SHARED_BYTES = 16 << 20   # in up to 16 MiB
    SEGMENT_BYTES = 1 << 20   # texts longer than this are encoded a segment at a time (see encode_ordinary)


cdef inline bint _signal_raised() noexcept nogil:
    """Whether a signal handler raised (Ctrl-C) since the last look; its exception stays set."""
    with gil:
        return signals_raised() != 0


cdef int _raise_set() except -1:
    """Raise the exception a signal handler left set."""
    return -1


cdef inline void _prefetch(const PretokenCache& cache, const BytesTable* direct, uint64_t h) noexcept nogil:
    """Request the slots of the pretoken with hash h in the cache and in the vocabulary index."""
    prefetch(cache_slot(cache, h))
    prefetch(&direct.slots[h & direct.mask])


cdef class Encoder:
    """Merge tables and vocabulary of one tokenizer, shared read-only by the encoding threads."""

    def __cinit__(self, tokens, pairs, byte_ids, bint direct_all, int pattern, bint rank_guard=False,
                  special_tokens=None, always_tokens=None, supermerges=None, int64_t backtrack_from=BACKTRACK_FROM,
                  added_flags=None, str normalizer=None, bint atoms=True):
        """`tokens`: bytes (or None) by id; `pairs`: (left, right, rank, result) tuples; `byte_ids`: 256
        ids (-1 where missing); `special_tokens` are matched only when allowed, `always_tokens` (HF's
        non-special added tokens) always; `supermerges`: (left, right, rank, result) tuples of a
        two-phase model, applied over runs of pretokens that became one token each; pretokens of at
        least `backtrack_from` bytes (-1: none) that need merging backtrack instead (`backtrack.pxd`)
        when that is exact for this vocabulary. `added_flags`: HF's flags (`sqltok.added_tokens.
        AddedTokenFlags`) of the special and always tokens that have any, by text; the content of a
        `normalized` one is matched in the `normalizer`'s form (the caller normalizes the texts).
        `atoms`: characters start out whole where that is exact (`char_atoms.pxd`; not with a
        rank guard); False merges every character from its bytes."""
        cdef int64_t i
        self.pool = id_pool_new()
        self.shared_slot_bits = SHARED_SLOT_BITS
        self.shared_bytes = SHARED_BYTES
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
        self.cuts = pattern_cuts(pattern, &self.cut_script_aware, &self.cut_newlines)
        self.segment_bytes = SEGMENT_BYTES
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
            self.byte_merges.ids[i] = byte_ids[i]
        self._build_byte_pairs()  # (pairs of bytes keep their ranks below: a 2-byte token forms from its bytes)
        self.backtrack.usable = False
        self.backtrack_from = backtrack_from
        self.use_atoms = atoms
        if not rank_guard:
            self._keep_final_pairs()
        self.backtrack_from = backtrack_from if self.backtrack.usable else -1
        self._add_specials(special_tokens or {}, always_tokens or {}, added_flags or {}, normalizer)
        self.vocab.append(VOCAB_PADDING, 0)
        self.n_vocab = <int32_t>self.starts.size()
        self.in_super.resize(self.n_vocab, 0)
        self.special_skip.assign(self.n_vocab, 0)
        for i in self.special_ids:
            self.special_skip[i] = 1
        self._build_direct(direct_all)

    @property
    def atom_characters(self) -> int:
        """How many characters may start out whole when merging (`char_atoms.pxd`); 0: none."""
        cdef size_t cp, count = 0
        for cp in range(self.atoms.token.size()):
            count += self.atoms.token[cp] >= 0
        return count

    def share_merges(self, int slot_bits=SHARED_SLOT_BITS, int64_t arena_bytes=SHARED_BYTES):
        """Size the table in which the threads of a call share the pretokens they merged (made by the
        first call with more than one thread, then kept): 2^slot_bits slots and arena_bytes for
        their bytes and ids; arena_bytes 0 turns sharing off. ValueError once the table is made."""
        if self.shared.ready():
            raise ValueError("the shared table is made already: size it before the first call with threads")
        if not 4 <= slot_bits <= 30 or arena_bytes < 0 or arena_bytes > 0xFFFFFFFF:
            raise ValueError("slot_bits must be 4-30 and arena_bytes 0-2^32-1")
        self.shared_slot_bits = slot_bits
        self.shared_bytes = arena_bytes

    def __dealloc__(self):
        if self.pool != NULL:
            id_pool_release(self.pool)
        for ws in self.spare:
            del ws

    cdef Workspace* _take_workspace(self):
        """A workspace for one thread of a call (with the GIL, so no two calls share one)."""
        cdef Workspace* ws
        if self.spare.empty():
            ws = new Workspace()
            ws.direct_bytes = 0
            return ws
        ws = self.spare.back()
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
        table that first-seen pretokens look up. The final pairs are what backtracking reads too."""
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
                if not load_bytes(&self.byte_merges, <const uint8_t*>self.vocab.data() + self.starts[t], n,
                                  sym.data(), ranks.data(), results.data()):
                    continue
                m = scan_merges(&self.merges, False, sym.data(), ranks.data(), results.data(), <size_t>n, 2)
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
            if self.backtrack_from >= 0:
                backtrack_build(self.backtrack, <const uint8_t*>self.vocab.data(), self.starts.data(), self.ends.data(),
                                <int32_t>self.starts.size(), self.byte_merges.ids, final)
            if self.use_atoms:
                char_atoms_build(self.atoms, <const uint8_t*>self.vocab.data(), self.starts.data(), self.ends.data(),
                                 final)

    cdef void _build_byte_pairs(self):
        cdef int a, b
        cdef int32_t result = 0
        cdef MergeSlot* slot
        cdef const int32_t* ids = self.byte_merges.ids
        self.byte_merges.pairs.resize(65536)
        for a in range(256):
            for b in range(256):
                slot = &self.byte_merges.pairs[(a << 8) | b]
                slot.rank = NO_RANK
                slot.result = 0
                if ids[a] >= 0 and ids[b] >= 0:
                    slot.rank = merge_table_rank(&self.merges, ids[a], ids[b], &result, NO_RANK)
                    slot.result = result

    cdef void _add_specials(self, dict special, dict always, dict flags, str normalizer):
        """Specials and always tokens get their own entries after the vocabulary's bytes (at their ids),
        and their place in the added-token matcher with their flags."""
        added_tokens_init(self.added)
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
                f = AddedTokenFlags(*flags.get(text, ()))
                content = normalize(text, normalizer).encode() if f.normalized and normalizer else b
                added_tokens_add(self.added, tid, <string>content,
                                 self.special_ids.size() - 1 if table is special else -1,
                                 f.lstrip, f.rstrip, f.single_word, f.normalized)
                if f.lstrip or f.rstrip:
                    self.added.space = code_point_ranges(SPACE)
                if f.single_word:
                    self.added.word = code_point_ranges(WORD)

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
    cdef int _merge(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Merge the bytes p[:n] into `out`; NO_TOKEN when a byte has no token. Short pieces merge in
        arrays on the stack, the first ranks from the byte-pair table, and so does any piece whose
        characters that can start out whole (`char_atoms`) leave at most SHORT_PIECE tokens between
        places no merge crosses; long ones through the heap; from `backtrack_from` bytes on, by
        backtracking (the merge loop still reports a byte with no token)."""
        cdef int32_t sym[SHORT_PIECE]
        cdef int32_t ranks[SHORT_PIECE]
        cdef int32_t results[SHORT_PIECE]
        cdef int64_t i, k, start = 0, stop = 0
        cdef size_t m, before = out.size()
        if has_atoms(&self.atoms, p, n):
            while start < n:  # part by part, cut where no merge crosses
                k = load_symbols(&self.byte_merges, &self.atoms, &self.merges, p, n, start, True, &stop, sym, ranks,
                                 results)
                if k == -1:
                    out.resize(before)
                    return NO_TOKEN
                if k == TOO_MANY:
                    out.resize(before)
                    break
                m = scan_merges(&self.merges, False, sym, ranks, results, <size_t>k)
                out.insert(out.end(), sym, sym + m)
                start = stop
            if start >= n:
                return 0
        if 0 <= self.backtrack_from <= n and backtrack_encode(self.backtrack, &self.merges, p, n, out,
                                                               ws.scratch.backtrack) == 0:
            return 0
        if n <= SHORT_PIECE:
            if not load_bytes(&self.byte_merges, p, n, sym, ranks, results):
                return NO_TOKEN
            m = scan_merges(&self.merges, self.rank_guard, sym, ranks, results, <size_t>n)
            out.insert(out.end(), sym, sym + m)
            return 0
        ws.scratch.sym.resize(n)
        for i in range(n):
            ws.scratch.sym[i] = self.byte_merges.ids[p[i]]
            if ws.scratch.sym[i] < 0:
                return NO_TOKEN
        merge_heap(&self.merges, self.byte_merges.pairs.data(), self.rank_guard, ws.scratch, out, p)
        return 0

    cdef int _encode_piece(self, const uint8_t* p, int64_t n, const PieceKey* key, IdVector& out,
                           Workspace& ws) noexcept nogil:
        """Ids of one pretoken p[:n]: from the thread's cache of pretokens seen, the vocabulary, or by
        merging. `key`: its words and hash (NULL when over KEY_WORDS_MAX bytes: no cache then)."""
        cdef CacheSlot* slot = NULL
        cdef size_t before = out.size()
        cdef int32_t t
        cdef uint64_t h = 0
        cdef const int32_t* held
        cdef int64_t count
        if key != NULL:
            h = key.hash
            slot = cache_slot(ws.cache, h)
            if cache_get(slot, key, n, out, ws.holes):
                return 0
            t = bytes_table_get_words(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                      key.w, n, h)
        else:
            h = bytes_hash(p, n)
            if long_cache_get(ws.cache.long_pieces, p, n, h, out):
                return 0
            t = bytes_table_get_hashed(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                       self.ends.data(), p, n, h)
        if t >= 0:
            out.push_back(t)
        elif ws.defer and ((n <= SHORT_PIECE and not 0 <= self.backtrack_from <= n) or
                           (n <= ATOM_PIECE and has_atoms(&self.atoms, p, n))):
            self._defer(p, n, h, key, slot, out, ws)
            return 0
        else:
            held = ws.shared.find(p, n, h, &count) if ws.shared != NULL else NULL
            if held != NULL:  # another thread of the call merged it
                out.insert(out.end(), held, held + count)
            elif self._merge(p, n, out, ws):
                return NO_TOKEN
            elif ws.shared != NULL:
                ws.shared.put(ws.shared_at, p, n, h, out.data() + before, <int64_t>(out.size() - before))
        if slot != NULL and (t < 0 or n > SHORT_KEY):  # short tokens are looked up in the vocabulary first
            cache_put(slot, key, n, out.data() + before, out.size() - before)
        elif t < 0:
            long_cache_put(ws.cache.long_pieces, p, n, h, out.data() + before, <int64_t>(out.size() - before))
        return 0

    cdef void _defer(self, const uint8_t* p, int64_t n, uint64_t h, const PieceKey* key, CacheSlot* slot,
                     IdVector& out, Workspace& ws) noexcept nogil:
        """Leave a placeholder (-1 - q) for pretoken p[:n] (bytes_hash h), the q-th waiting to be
        merged; its cache slot says so, so that it is merged once however often it occurs before the
        batch."""
        cdef Pending pend
        cdef int64_t q = <int64_t>ws.pending.size()
        pend.p = p
        pend.n = n
        pend.hash = h
        pend.start = -1
        pend.merged = False
        pend.key = -1 if key == NULL else key - ws.keys.data()
        ws.pending.push_back(pend)
        ws.holes.push_back(out.size())
        out.push_back(<int32_t>(-1 - q))
        if slot != NULL:
            cache_put_pending(slot, key, n, <int32_t>q)

    cdef int _merge_pending(self, Workspace& ws) noexcept nogil:
        """Take the waiting pretokens that another thread of the call merged from the shared table (all
        their lookups requested first, so that they overlap), merge the others (merge_lanes; one by
        one those too long for it) and give their cache slots their ids; NO_TOKEN when a byte has no
        token."""
        cdef size_t i
        cdef Pending* pend
        cdef const int32_t* held
        cdef int64_t count
        ws.pending_ids.clear()
        if ws.shared != NULL:
            for i in range(ws.pending.size()):
                prefetch(ws.shared.start(ws.pending[i].hash))
            for i in range(ws.pending.size()):
                pend = &ws.pending[i]
                held = ws.shared.find(pend.p, pend.n, pend.hash, &count)
                if held != NULL:
                    pend.start = <int64_t>ws.pending_ids.size()
                    pend.count = count
                    ws.pending_ids.insert(ws.pending_ids.end(), held, held + count)
        if merge_lanes(&self.merges, &self.byte_merges, &self.atoms, self.rank_guard, ws.pending, ws.pending_ids):
            return NO_TOKEN
        for i in range(ws.pending.size()):  # those too long for the lanes
            pend = &ws.pending[i]
            if pend.start < 0:
                ws.leftover.clear()
                if self._merge(pend.p, pend.n, ws.leftover, ws):
                    return NO_TOKEN
                pend.start = <int64_t>ws.pending_ids.size()
                pend.count = <int64_t>ws.leftover.size()
                pend.merged = True
                ws.pending_ids.insert(ws.pending_ids.end(), ws.leftover.begin(), ws.leftover.end())
        cache_put_merged(ws.cache, ws.shared, ws.shared_at, ws.pending, ws.keys, ws.pending_ids)
        return 0

    cdef void _supermerge_run(self, IdVector& out, size_t first, size_t count, size_t tail,
                              Workspace& ws) noexcept nogil:
        """Apply the supermerges, lowest index first, to the run out[first:first + count] of
        single-token pretokens; the ids from `tail` on (the piece that ended the run) move up after it."""
        cdef size_t i, m
        cdef int32_t result = 0
        cdef MergeScratch* s = &ws.scratch
        s.sym.assign(out.begin() + first, out.begin() + first + count)
        ws.run.clear()
        if count <= SHORT_PIECE:  # (the heap's vectors hold the ranks and results)
            s.nxt.resize(count - 1)
            s.prv.resize(count - 1)
            for i in range(count - 1):
                s.nxt[i] = merge_table_rank(&self.supers, s.sym[i], s.sym[i + 1], &result, NO_RANK)
                s.prv[i] = result
            s.sym.resize(scan_merges(&self.supers, False, s.sym.data(), s.nxt.data(), s.prv.data(), count))
            ws.run.swap(s.sym)
        else:
            merge_heap(&self.supers, NULL, False, s[0], ws.run, NULL)
        m = ws.run.size()
        if m == count:
            return
        for i in range(m):
            out[first + i] = ws.run[i]
        out.erase(out.begin() + first + m, out.begin() + first + count)

    cdef int encode_ordinary(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Token ids of p[:n] (no special tokens) appended to `out`, a segment at a time when the text
        is longer than `segment_bytes`: each ends at the first cut point after that many bytes, where
        no pretoken (with supermerges: no supermerge candidate) crosses, so the ids are the whole
        text's, and the pretokens' ends and keys never take more than a segment's worth of memory.
        With `ws.check_signals`, Ctrl-C is looked for after each segment (INTERRUPTED)."""
        cdef int64_t at = 0, cut
        cdef int rc
        while True:
            cut = n
            if self.cuts and n - at > self.segment_bytes:
                cut = cut_after(p, at + self.segment_bytes, n, CUT_CANDIDATES if self.has_supers else CUT_PRETOKENS,
                                self.cut_script_aware, self.cut_newlines)
            rc = self._encode_segment(p + at, cut - at, out, ws)
            if rc or cut >= n:
                return rc
            if ws.check_signals and _signal_raised():
                return INTERRUPTED
            at = cut

    cdef int _encode_segment(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        """Token ids of p[:n] (no special tokens) appended to `out`: the pieces, then the batch of
        deferred merges put in place of their placeholders."""
        cdef int rc = self._encode_pieces(p, n, out, ws)
        if rc == 0 and ws.pending.size() > 0:
            rc = self._merge_pending(ws)
            if rc == 0:
                fill_placeholders(out, ws.holes, ws.pending, ws.pending_ids)
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
            return PRETOKENIZE_FAILED
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
            _prefetch(ws.cache, &self.direct, ws.keys[k].hash)
        start = 0
        for k in range(m):
            if k + PREFETCH < m:
                _prefetch(ws.cache, &self.direct, ws.keys[k + PREFETCH].hash)
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
            elif (key == NULL or not cache_get(cache_slot(ws.cache, key.hash), key, end - start, out, ws.holes)) \
                    and self._encode_piece(p + start, end - start, key, out, ws):
                return NO_TOKEN
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

    cdef int encode_text(self, const uint8_t* p, int64_t n, const uint8_t* allowed, IdVector& out,
                         Workspace& ws) noexcept nogil:
        """Token ids of the UTF-8 text p[:n] appended to `out`; `allowed` (NULL: none) flags the special
        tokens, in `special_tokens` order, that are matched as such; the always tokens are matched
        too, as HF matches added tokens (`added_match.pxd`), and the text between encoded."""
        cdef int64_t i
        cdef size_t k
        cdef int rc
        cdef vector[AddedSplit] splits, scratch
        if self.always_ids.size() == 0 and (allowed == NULL or self.special_ids.size() == 0):
            return self.encode_ordinary(p, n, out, ws)
        i = 0
        while i < n and not (self.added.first[0][p[i]] or self.added.first[1][p[i]]):
            i += 1
        if i == n:  # (most texts: no token starts anywhere)
            return self.encode_ordinary(p, n, out, ws)
        added_splits(self.added, p, n, allowed, splits, scratch)
        for k in range(splits.size()):
            if splits[k].id >= 0:
                out.push_back(splits[k].id)
            else:
                rc = self.encode_ordinary(p + splits[k].start, splits[k].end - splits[k].start, out, ws)
                if rc:
                    return rc
        return 0

    # -- rows --------------------------------------------------------------------------------------
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

    cdef const uint8_t* _allowed_mask(self, allowed_special, vector[uint8_t]& mask):
        """`allowed_special` (None, "all" or a set of special token ids) as a flag per special token,
        in `special_ids` order, in `mask`; NULL when none is allowed."""
        cdef bint every
        cdef int32_t sid
        cdef uint8_t flag
        if allowed_special is None:
            return NULL
        every = allowed_special == "all"
        for sid in self.special_ids:
            flag = every or sid in allowed_special
            mask.push_back(flag)
        return mask.data()

    # -- one text from Python, without Arrow -------------------------------------------------------
    cdef object _encode_one(self, str text, const uint8_t* allowed, bint counts_only, Workspace* ws):
        """Ids (list) or their number of one str, encoded from its own UTF-8 buffer in `ws`; the GIL is
        released for long texts. UnicodeEncodeError for a surrogate, SqltokError when encoding fails."""
        cdef Py_ssize_t n
        cdef const uint8_t* p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
        cdef int rc
        ws.direct_bytes += n  # single calls one after another: a cache sized as for a part of their total
        workspace_init(ws[0], ws.direct_bytes // DIRECT_SPARSE, 1)  # (its page faults cost more than its misses)
        ws.defer = not self.has_supers
        ws.check_signals = n > self.segment_bytes and on_main_thread()
        ws.out.clear()
        if n < NOGIL_BYTES:
            rc = self.encode_text(p, n, allowed, ws.out, ws[0])
        else:
            with nogil:
                rc = self.encode_text(p, n, allowed, ws.out, ws[0])
        if rc == INTERRUPTED:
            _raise_set()
        if rc:
            raise SqltokError(failure_message(0, rc))
        if counts_only:
            return <int64_t>ws.out.size()
        if self.id_objects is None:
            self.id_objects = list(range(self.n_vocab))
        ids = id_list(ws.out.data(), <int64_t>ws.out.size(), self.id_objects)
        if ws.out.capacity() > KEEP_IDS:
            IdVector().swap(ws.out)
        return ids

    def split_added(self, str text not None, allowed_special=None, bint spans=False):
        """`text` as (segment, None) and ("", token id) pieces: its added tokens (the allowed special
        ones too) matched as `encode_text` matches them. With `spans`: (start, end, id) of each piece
        instead, its UTF-8 byte range (a token's holds the white space it takes in) and its token
        (-1 for a segment)."""
        cdef vector[uint8_t] mask
        cdef const uint8_t* allowed = self._allowed_mask(allowed_special, mask)
        cdef bytes b = text.encode("utf-8")
        cdef vector[AddedSplit] splits, scratch
        added_splits(self.added, <const uint8_t*>b, len(b), allowed, splits, scratch)
        if spans:
            return [(s.start, s.end, s.id if s.id >= 0 else -1) for s in splits]
        return [("", s.id) if s.id >= 0 else (b[s.start:s.end].decode("utf-8"), None) for s in splits]

    def encode_str(self, str text not None, allowed_special=None, bint counts_only=False):
        """Ids (a list of int) of one str, or with `counts_only` their number: the direct path, with no
        Arrow on the way. `allowed_special` as for `encode_arrow`; UnicodeEncodeError for a surrogate."""
        cdef vector[uint8_t] mask
        cdef const uint8_t* allowed = self._allowed_mask(allowed_special, mask)
        cdef Workspace* ws = self._take_workspace()
        cdef bint failed = True
        try:
            out = self._encode_one(text, allowed, counts_only, ws)
            failed = False
        finally:
            self._give_back(ws, failed)
        return out

    def encode_strs(self, list texts not None, allowed_special=None, bint counts_only=False):
        """`encode_str` of every str of `texts` on this thread (a list of results)."""
        cdef vector[uint8_t] mask
        cdef const uint8_t* allowed = self._allowed_mask(allowed_special, mask)
        cdef Workspace* ws = self._take_workspace()
        cdef bint failed = True
        cdef list out = []
        try:
            for text in texts:
                out.append(self._encode_one(text, allowed, counts_only, ws))
            failed = False
        finally:
            self._give_back(ws, failed)
        return out

    def encode_arrow(self, texts, allowed_special=None, int threads=1, bint counts_only=False,
                     bint as_lists=False):
        """Encode a pyarrow string array: a list<int32> array of ids (NULL stays NULL), or with
        `counts_only` an int64 array of token counts. `allowed_special`: None, "all", or a set of special
        token ids to match as such. Rows are split among `threads` threads (parallel_rows, with
        take-over). With `as_lists`, a Python list of id lists instead (None for NULL), built straight
        from the C buffers."""
        cdef vector[uint8_t] allowed_mask
        cdef EncodeCall call
        call.allowed = self._allowed_mask(allowed_special, allowed_mask)
        cdef list keep = []
        cdef RowRun run
        as_lists = as_lists and not counts_only
        rows_open(run, texts, keep, threads, True, as_lists)  # lists: built while the threads work
        cdef vector[IdRows] parts = vector[IdRows](run.parts)
        cdef vector[IdRows] ordered
        cdef vector[Workspace*] workspaces
        cdef vector[uint8_t] built
        cdef list rows = None
        cdef int k
        call.encoder = <void*>self
        call.keep_ids = not counts_only
        for k in range(run.parts):
            parts[k].error_row = -1
        for k in range(run.threads):
            workspaces.push_back(self._take_workspace())
        call.parts = parts.data()
        call.workspaces = workspaces.data()
        if run.threads > 1 and not self.shared.ready() and self.shared_bytes > 0:
            self.shared.init(self.shared_slot_bits, self.shared_bytes)
        if as_lists and self.id_objects is None:
            self.id_objects = list(range(self.n_vocab))
        if run.chunk_parts:
            rows = PyList_New(run.view.length)
            built.assign(run.chunks, 0)
            call.rows = <PyObject*>rows
            call.id_objects = <PyObject*>self.id_objects
            call.built = built.data()
            call.lists_failed = False
            run.after = _encode_after
        cdef bint collecting = run.chunk_parts and collector_pause()  # (lists are built during the run)
        try:
            if call.keep_ids and not as_lists:  # the first part's vector ends up holding every id
                id_pool_take(self.pool, parts[0].ids)
                parts[0].ids.reserve(view_bytes(run.view, 0, run.view.length) // 2 + 16)
            try:
                rows_run(run, _encode_rows_work, _encode_open, &call)
            finally:
                for k in range(run.threads):
                    self._give_back(workspaces[k], not run.thread_ok[k])
            if run.error_row >= 0 and parts[run.error_part].error_code == INTERRUPTED:
                _raise_set()
            if run.error_row >= 0:
                raise SqltokError(failure_message(run.error_row, parts[run.error_part].error_code))
            if run.chunk_parts:
                if call.lists_failed:
                    raise MemoryError("building the id lists failed")
                _lists_of_chunks(&call, run, True)
                return rows
        finally:
            collector_resume(collecting)
        for k in run.order:
            id_rows_move(ordered, parts[k])
        if as_lists:
            return id_rows_lists(ordered, self.id_objects)
        return id_rows_arrow(ordered, counts_only, self.pool, run.threads)

    # -- ids -> bytes ------------------------------------------------------------------------------
    cdef TokenPieces _pieces(self, bint skip_special):
        """What decoding reads: each id's bytes (none for a special token's when `skip_special`)."""
        cdef TokenPieces pieces
        pieces.data = self.vocab.data()
        pieces.starts = self.starts.data()
        pieces.ends = self.ends.data()
        pieces.n_ids = <int64_t>self.starts.size()
        pieces.later = 0
        pieces.valid = self.valid.data()
        pieces.skip = self.special_skip.data() if skip_special else NULL
        return pieces

    def decode_arrow(self, ids, bint skip_special=False):
        """Bytes of each row of a list<integer> array (NULL stays NULL), as a large_binary array;
        special tokens left out when `skip_special`. Ids without a token: see `decode_arrow.pxd`."""
        return decode_arrow(ids, self._pieces(skip_special), pa.large_binary())

    def decode_ids(self, ids, bint skip_special=False) -> bytes:
        """The bytes of one sequence of ids (Python ints), without Arrow; errors as tiktoken's (see
        `decode_ids.pxd`)."""
        return decode_ids(ids, self._pieces(skip_special))

    def decode_text(self, ids, str errors not None="replace", bint skip_special=False) -> str:
        """`decode_ids(ids, skip_special).decode("utf-8", errors)` in one call, without the bytes object."""
        return decode_text(ids, self._pieces(skip_special), errors)

    def token_bytes(self, int64_t token_id) -> bytes:
        """The bytes of one token id; `token_id_error` (as tiktoken's: UnknownTokenError, a KeyError, or
        OverflowError for an id no u32 holds) for an id without one."""
        if token_id < 0 or token_id >= <int64_t>self.starts.size() or not self.valid[token_id]:
            raise token_id_error(token_id)
        return self.vocab.substr(self.starts[token_id], self.ends[token_id] - self.starts[token_id])

    def merge_bytes(self, bytes piece) -> list:
        """The ids that merging the bytes of `piece` alone gives: no pretokenization, no vocabulary
        lookup, no supermerges (tiktoken's `byte_pair_encode`); SqltokError when a byte has no token."""
        cdef IdVector out
        cdef Workspace* ws = self._take_workspace()
        cdef int rc
        try:
            rc = self._merge(<const uint8_t*><char*>piece, len(piece), out, ws[0])
        finally:
            self._give_back(ws, False)
        if rc:
            raise SqltokError(f"a byte of {piece!r} has no token")
        return [out[i] for i in range(out.size())]

    def token_id(self, bytes b):
        """The id of the token with bytes `b` that a pretoken maps to directly, or None."""
        cdef int32_t t = bytes_table_get(&self.direct, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                         self.ends.data(), <const uint8_t*><char*>b, len(b))
        return None if t < 0 else t


cdef struct EncodeCall:       # what the threads of one encode_arrow call share
    void* encoder             # the Encoder (borrowed: the call holds it)
    const uint8_t* allowed
    bint keep_ids
    IdRows* parts             # one per part of the call (see parallel_rows)
    Workspace** workspaces    # one per thread
    PyObject* rows            # as lists (chunk parts): the list of every row's ids, filled as chunks finish
    PyObject* id_objects      # the int object of each id
    uint8_t* built            # per chunk: 1 once its rows are in `rows`
    bint lists_failed         # building them raised (MemoryError)


cdef int _lists_of_chunks(EncodeCall* call, const RowRun& run, bint every) except -1:
    """Put the rows of the chunks finished so far (`every`: of all chunks) that are not yet there in
    `call.rows`. With the GIL."""
    cdef int c
    for c in range(run.chunks):
        if not call.built[c] and (every or run.claims.finished(c)):
            id_rows_into(<list>call.rows, row_split(run.view, c, run.chunks), call.parts[run.threads + c],
                         <list>call.id_objects)
            call.built[c] = 1
    return 0


cdef void _encode_after(void* task, const RowRun& run, int thread, int chunk) noexcept nogil:
    """After each chunk of thread 0 (the caller's), the rows of every chunk finished turn into Python
    lists while the other threads encode on: list building, which needs the GIL, overlaps encoding
    instead of following it."""
    cdef EncodeCall* call = <EncodeCall*>task
    if thread != 0 or call.lists_failed:
        return
    with gil:
        try:
            _lists_of_chunks(call, run, False)
        except BaseException:
            call.lists_failed = True


cdef void _encode_open(void* task, const RowRun& run, int thread, int part, int64_t first,
                       int64_t last) noexcept nogil:
    """Before a thread's first rows of a part: for its own part a workspace sized for its run, and
    room for a token per 2 bytes (untouched pages cost address space only: growing copies)."""
    cdef EncodeCall* call = <EncodeCall*>task
    cdef int64_t size = view_bytes(run.view, first, last)
    cdef Workspace* ws = call.workspaces[thread]
    if part == thread:
        workspace_init(ws[0], size, run.threads)
        ws.defer = not (<Encoder>call.encoder).has_supers
        ws.check_signals = run.check_signals and thread == 0  # (the caller's thread: one long row too)
        if run.threads > 1 and (<Encoder>call.encoder).shared.ready():
            ws.shared = &(<Encoder>call.encoder).shared
    if call.keep_ids and not (run.chunk_parts and part == thread):  # (chunk parts: the thread's own is unused)
        call.parts[part].ids.reserve(size // 2 + 16)


cdef int64_t _encode_rows_work(void* task, const RowRun& run, int thread, int part, int64_t first,
                               int64_t last) noexcept nogil:
    cdef EncodeCall* call = <EncodeCall*>task
    (<Encoder>call.encoder)._encode_rows(run.view, first, last, call.allowed, call.keep_ids, call.parts[part],
                                         call.workspaces[thread][0])
    return call.parts[part].error_row
