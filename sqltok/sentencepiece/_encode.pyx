# cython: language_level=3
"""SentencePiece encoding and decoding over Arrow arrays, step for step as sentencepiece 0.2.3 does it:

* the normalizer (`normalizer.cc`, in `normalizer.pxd`, shared with the Unigram trainer), which
  records the input offset of each normalized byte only when offsets are asked for;
* Unigram (`unigram_model.cc` EncodeOptimized): Viterbi over UTF-8 positions in the same float
  arithmetic (path scores brought back to 0 beyond 1e5), ties kept by the first candidate,
  user-defined symbols scored 0.1 * (length - 1), an unknown character min - 10;
* BPE (`bpe_model.cc`): characters (user-defined symbols frozen) merged highest score first (scores
  ordered by their bits), ties to the leftmost pair, any concatenation that is a normal, user-defined
  or unused piece; unused pieces split back; a symbol that is no such piece is unknown;
* BPE word by word when no piece joins a character to a following "▁" (each word's ids remembered:
  the same ids, as no merge can cross such a word start); a word of up to 64 characters that are all
  pieces merges over small arrays of ids by a scan of int32 keys (`_bpe_short`), others on a heap;
* the processor (`sentencepiece_processor.cc`): an unknown piece becomes its bytes' <0xHH> pieces
  with `byte_fallback`, otherwise a run of unknown pieces is one unknown id; decoding drops control
  pieces, writes <unk> as its surface, strips the first "▁", turns "▁" into spaces and byte pieces
  into UTF-8 (U+FFFD per invalid byte);
* for HF tokenizer.json files: HF's whitespace steps after the charsmap (`hf_whitespace.pxd`),
  HF's Unigram lattice (`_unigram_hf`: float64, every piece, no renormalization) and HF's BPE
  `ignore_merges` (`_bpe_direct`: a word that is a piece is that piece);
* offsets (`PopulateSentencePieceText`): a piece spans the input bytes its normalized bytes came
  from; a run of unknown pieces merged into one spans them all; of an unknown piece's byte pieces
  the last spans the piece and the others are empty at its start; HF's spans (`model_spans`) are
  its models': each byte piece of BPE spans its byte, each of Unigram the whole unknown run.

Rows are shared among threads by the row driver with the GIL released; ids go to Arrow from C
vectors without a copy. One str or one sequence of ids from Python is read directly (`encode_str`,
`decode_ids`). Each thread works in a `Workspace` the encoder keeps between calls, word cache and all.
"""
from libc.stdint cimport UINT32_MAX, int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp.string cimport string
from libcpp.vector cimport vector

import pyarrow as pa

from sqltok.errors import token_id_error

from sqltok.native.arrow_buffers cimport BinaryView, int64_array, view_end, view_start, view_valid
from sqltok.bpe.merge_table cimport MergeTable, merge_table_add, merge_table_init, merge_table_rank
from sqltok.native.bytes_table cimport BytesTable, bytes_hash, bytes_table_build, bytes_table_get
from sqltok.native.id_lists cimport IdListView, IdRows, IdVector, id_list_view, id_rows_move
from sqltok.native.id_output cimport IdPool, id_list, id_pool_new, id_pool_release, id_pool_take, id_rows_arrow
from sqltok.native.parallel_rows cimport RowRun, rows_open, rows_run
from sqltok.sentencepiece.charsmap cimport charsmap_build
from sqltok.sentencepiece.hf_precompiled cimport hf_precompiled
from sqltok.sentencepiece.hf_whitespace cimport HfWhitespace, hf_whitespace
from sqltok.native.utf8 cimport valid_utf8_len
from sqltok.pretokenizer.matcher cimport next_char
from sqltok.sentencepiece.normalizer cimport Normalizer, normalize, user_match
from sqltok.sentencepiece.word_cache cimport WordCache, word_cache_get, word_cache_prefetch, word_cache_put
from sqltok.wordpiece.byte_trie cimport ByteTrie, byte_trie_build, byte_trie_child

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.number cimport PyNumber_Index
from cpython.sequence cimport PySequence_Check
from cpython.unicode cimport PyUnicode_AsUTF8AndSize


cdef extern from "<cfloat>":
    float FLT_MAX


cdef enum:
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6
    PIECES = 0                  # trie roots: the pieces (normal, user-defined, unused) ...
    USER = 1                    # ... the user-defined symbols alone
    ALL = 2                     # ... and every piece (HF's Unigram lattice)
    RESEGMENT_DEPTH = 100       # BPE: how deep an unused piece is split back at most
    SCAN_SYMBOLS = 64           # BPE: words of up to this many symbols may be merged by a scan (else a heap)
    SCAN_SHIFT = 6              # ... a scan key: the score's rank above SCAN_SYMBOLS - 1 - the symbol
    WORD_CACHE_BYTES = 64       # BPE: words up to this long are remembered ...
    WORD_CACHE_SIZE = 1 << 18   # ... this many per call's threads together (the last-level cache is shared) ...
    WORD_CACHE_MIN = 1 << 15    # ... and at least this many per workspace
    NOGIL_BYTES = 4096          # a single text from Python this long or longer is encoded without the GIL
    KEEP_IDS = 1 << 20          # a workspace keeps a single text's ids vector up to this capacity
    DIRECT_TEXTS = 1            # ignore_merges: the words are the texts between user-defined symbols ...
    DIRECT_WORDS = 2            # ... cut again before each "▁" (Metaspace split)


cdef float SCORE_RESET = 100000.0  # Unigram: a path score beyond this is brought back to 0


cdef const char* SPACE = "\xe2\x96\x81"     # U+2581, "▁"
cdef const char* REPLACEMENT = "\xef\xbf\xbd"


cdef struct BestPath:           # Unigram: the best path that ends at a position
    int32_t id
    float score
    int64_t starts_at


cdef struct BestPath64:         # HF's Unigram: the same in float64
    int32_t id
    double score
    int64_t starts_at


cdef struct Symbol:             # BPE: a symbol of the text being merged (32 bytes)
    int64_t start
    int64_t prev
    int64_t next
    int32_t id                  # its piece (of `pieces`), -1 for a character that is none, and
                                # frozen(piece) for a user-defined symbol, which never merges
    int32_t length              # a character or a piece: bytes 0 once merged into the previous


cdef inline int32_t frozen(int32_t id) noexcept nogil:
    """A frozen symbol's id field from its piece, and back."""
    return -2 - id


cdef struct Pair:               # BPE: a candidate merge of symbol `left` and the next (16 bytes: the
    float score                 # heap of a long word moves fewer of them)
    int32_t id                  # the piece they make, as long as the two are when pushed
    int64_t left


cdef struct Split:              # BPE: how an unused piece was last made, to split it back
    int32_t id
    int32_t left_id             # the two symbols' ids (-1: a character that is no piece)
    int32_t right_id
    int64_t left_start
    int64_t left_length
    int64_t right_start
    int64_t right_length


cdef cppclass Workspace:  # one thread's scratch, kept by the encoder between calls (its word cache too)
    string norm
    string hf_norm              # HF whitespace mode: the model's input made from `norm`
    vector[int64_t] spans       # offsets: the normalized (begin, end) of each id emitted, when asked
    bint want_spans
    WordCache words             # BPE: the ids of each word seen (see _bpe_words) ...
    size_t max_words            # ... up to this many (emptied when it holds them)
    IdVector word_ids
    vector[BestPath] best
    vector[BestPath64] best64
    vector[int64_t] path
    vector[Symbol] symbols
    vector[Pair] heap
    vector[Split] splits
    vector[int64_t] stack
    int32_t scan_keys[SCAN_SYMBOLS]  # _bpe_short: per symbol, its candidate's scan key (-1: none), ...
    int32_t short_ids[SCAN_SYMBOLS]  # ... its piece ...
    int32_t short_pair[SCAN_SYMBOLS] # ... the piece it makes with the next symbol ...
    int8_t short_next[SCAN_SYMBOLS]  # ... and its neighbours (-1: none)
    int8_t short_prev[SCAN_SYMBOLS]
    IdVector text_ids           # a single text's ids (`encode_str`)


cdef inline void _push(IdVector& out, int32_t id, Workspace& ws, int64_t start, int64_t end) noexcept nogil:
    """One id of the model's output, and its span when asked."""
    out.push_back(id)
    if ws.want_spans:
        ws.spans.push_back(start)
        ws.spans.push_back(end)


cdef inline bint _space_at(const uint8_t* s, int64_t pos, int64_t size) noexcept nogil:
    """Whether s[pos:] starts with "▁"."""
    return size - pos >= 3 and s[pos] == 0xE2 and s[pos + 1] == 0x96 and s[pos + 2] == 0x81


cdef inline int64_t one_char_len(uint8_t b) noexcept nogil:
    """sentencepiece's OneCharLen: the length of a UTF-8 character from its first byte."""
    return 1 if b < 0xC0 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4


cdef inline uint8_t _hex_byte(const char* h) noexcept nogil:
    """The byte of two upper-case hex digits (a checked <0xHH> piece)."""
    cdef uint8_t hi = h[0] - 48 if h[0] <= 57 else h[0] - 55
    cdef uint8_t lo = h[1] - 48 if h[1] <= 57 else h[1] - 55
    return hi << 4 | lo


cdef inline int32_t float_bits(float x) noexcept nogil:
    return (<int32_t*>&x)[0]


cdef inline bint score_less(float a, float b) noexcept nogil:
    """sentencepiece 0.2.3's order of BPE scores: their bits compared as integers (the same as the
    floats' order but for -0.0 < 0.0)."""
    cdef int32_t i1 = float_bits(a), i2 = float_bits(b)
    if (i1 & i2) < 0:
        return i1 > i2
    if (i1 ^ i2) < 0:
        return i1 < 0
    return i1 < i2


def _score_ranks(list scores) -> list:
    """Per score, its rank in `score_less`'s order, equal scores sharing one (0 for the lowest)."""
    cdef float f
    keys = []
    for x in scores:
        f = x
        keys.append(float_bits(f) ^ 0x7FFFFFFF if float_bits(f) < 0 else float_bits(f))  # score_less's order
    rank = {k: r for r, k in enumerate(sorted(set(keys)))}
    return [rank[k] for k in keys]


cdef inline bint pops_before(const Pair& a, const Pair& b) noexcept nogil:
    """sentencepiece's agenda order: the higher score first, then the leftmost."""
    return score_less(b.score, a.score) or (float_bits(a.score) == float_bits(b.score) and a.left < b.left)


cdef inline void _sift_down(Pair* h, size_t n, size_t i, Pair x) noexcept nogil:
    """Place `x` in the hole at `i` of the heap h[:n], moving the children that pop before it up."""
    cdef size_t c
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and pops_before(h[c + 1], h[c]):
            c += 1
        if not pops_before(h[c], x):
            break
        h[i] = h[c]
        i = c
    h[i] = x


cdef inline void heap_push(vector[Pair]& h, const Pair& x) noexcept nogil:
    cdef size_t i = h.size(), parent
    h.push_back(x)
    while i > 0:
        parent = (i - 1) >> 1
        if not pops_before(x, h[parent]):
            break
        h[i] = h[parent]
        i = parent
    h[i] = x


cdef inline Pair heap_pop(vector[Pair]& h) noexcept nogil:
    cdef Pair top = h[0], last = h.back()
    h.pop_back()
    if h.size():
        _sift_down(h.data(), h.size(), 0, last)
    return top


cdef inline void heapify(vector[Pair]& h) noexcept nogil:
    """The heap order over all of `h` at once (Floyd's, linear)."""
    cdef size_t n = h.size(), i = n // 2
    while i > 0:
        i -= 1
        _sift_down(h.data(), n, i, h[i])


cdef class SentencePieceEncoder:
    """A SentencePiece model ready to encode and decode from any number of threads."""
    cdef string vocab                       # piece bytes back to back (padded)
    cdef vector[int64_t] starts, ends
    cdef vector[float] scores
    cdef vector[int8_t] types
    cdef BytesTable pieces                  # pieces_: normal, user-defined and unused pieces
    cdef MergeTable pairs                   # BPE: (left, right) -> the piece of their bytes (see _pair_table)
    cdef int32_t char_ids[128]              # BPE: the piece of each ASCII character, -1 for none
    cdef BytesTable lookup                  # PieceToId: reserved pieces first, then pieces_
    cdef ByteTrie trie                      # root PIECES: pieces_; root USER: user-defined symbols
    cdef Normalizer normalizer              # its user-defined symbols: self.trie's root USER
    cdef HfWhitespace hf                    # HF's whitespace steps after the charsmap (see hf_whitespace.pxd)
    cdef bint hf_unigram                    # HF's Unigram lattice (see _unigram_hf)
    cdef bint hf_json                       # HF's models' spans of byte pieces (see _emit)
    cdef int direct                         # HF BPE ignore_merges (see _bpe_direct): 0 off, else DIRECT_*
    cdef vector[double] scores64
    cdef vector[int32_t] score_rank         # BPE: per piece, the rank of its score (equal scores, equal ranks)
    cdef bint short_path                    # BPE: words may take `_bpe_short` (no unused piece, ranks fit keys)
    cdef double min_score64
    cdef bint words_apart                   # BPE: no piece joins a character to a following "▁"
    cdef vector[uint64_t] isolated          # BPE: a bit per code point, set if no piece holds it with another
    cdef bint bpe, byte_fallback, add_dummy_prefix, remove_extra_whitespaces
    cdef int32_t unk
    cdef float min_score
    cdef int32_t byte_ids[256]
    cdef string unk_surface
    cdef vector[int8_t] decode_kind         # per id: what decoding makes of it (the type of PieceToId(piece))
    cdef IdPool* pool
    cdef vector[Workspace*] spare           # workspaces no call holds now

    def __cinit__(self):
        self.pool = id_pool_new()

    def __dealloc__(self):
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

    def __init__(self, list pieces, list scores, list types, bint bpe, bint byte_fallback, bytes charsmap,
                 bint add_dummy_prefix, bint remove_extra_whitespaces, bint escape_whitespaces,
                 bint treat_whitespace_as_suffix, str unk_surface, tuple hf_whitespace=None,
                 bint hf_json=False, str ignore_merges=None):
        """A checked model (`model_proto.check_model`): pieces (str) by id, their float scores and
        types (PieceType values), and the options; `hf_whitespace` (strip_right, collapse,
        split_words, prefix) puts HF's whitespace steps in place of sentencepiece's options, which
        must then be off; `hf_json` encodes the model of a tokenizer.json as HF `tokenizers` does
        (a Unigram model on its lattice; `remove_extra_whitespaces` as its Replace(`\\A +| +\\z`),
        which keeps a trailing "▁" of the text); `ignore_merges` ("texts" or "words", BPE only):
        HF's BPE `ignore_merges`, its words the texts between user-defined symbols, or those cut
        before each "▁" too."""
        cdef vector[int32_t] normal, reserved
        cdef list trie_pieces = [], user = [], every = []
        cdef int32_t i, k
        cdef bytes b
        self.bpe = bpe
        self.byte_fallback = byte_fallback
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.normalizer.add_dummy_prefix = add_dummy_prefix
        self.normalizer.remove_extra_whitespaces = remove_extra_whitespaces
        self.normalizer.escape_whitespaces = escape_whitespaces
        self.normalizer.suffix = treat_whitespace_as_suffix
        self.normalizer.spaces_only_trailing = hf_json
        self.unk_surface = unk_surface.encode()
        self.hf.active = hf_whitespace is not None
        if self.hf.active:
            if add_dummy_prefix or remove_extra_whitespaces or escape_whitespaces or treat_whitespace_as_suffix:
                raise ValueError("HF whitespace steps replace sentencepiece's whitespace options")
            self.hf.strip_right, self.hf.collapse, self.hf.split_words, self.hf.prefix = hf_whitespace
        self.min_score = FLT_MAX
        self.hf_unigram = hf_json and not bpe
        self.hf_json = hf_json
        if ignore_merges is not None and (not bpe or ignore_merges not in ("texts", "words")):
            raise ValueError("ignore_merges is 'texts' or 'words', for a BPE model")
        self.direct = 0 if ignore_merges is None else DIRECT_TEXTS if ignore_merges == "texts" else DIRECT_WORDS
        self.min_score64 = min(scores) if scores else 0.0
        self.unk = -1
        for k in range(256):
            self.byte_ids[k] = -1
        for i, piece in enumerate(pieces):
            b = piece.encode()
            self.starts.push_back(self.vocab.size())
            self.vocab.append(<const char*>b, len(b))
            self.ends.push_back(self.vocab.size())
            self.scores.push_back(scores[i])
            self.scores64.push_back(scores[i])
            every.append((b, i))
            self.types.push_back(types[i])
            if types[i] in (NORMAL, USER_DEFINED, UNUSED):
                normal.push_back(i)
                trie_pieces.append((b, i))
            else:
                reserved.push_back(i)
            if types[i] == USER_DEFINED:
                user.append((b, i))
            if types[i] == UNKNOWN:
                self.unk = i
            if types[i] == BYTE:
                self.byte_ids[int(piece[3:5], 16)] = i
            if types[i] == NORMAL:
                self.min_score = min(self.min_score, <float>scores[i])
        self.vocab.append(32, 0)    # the hash table reads keys a word at a time
        bytes_table_build(&self.pieces, <const uint8_t*>self.vocab.data(), self.starts.data(), self.ends.data(),
                          normal)
        for k in range(<int32_t>normal.size()):
            reserved.push_back(normal[k])
        bytes_table_build(&self.lookup, <const uint8_t*>self.vocab.data(), self.starts.data(), self.ends.data(),
                          reserved)
        if bpe:
            self._pair_table(normal)
            self.score_rank = _score_ranks(scores)
            self.short_path = len(pieces) < (1 << (31 - SCAN_SHIFT)) and UNUSED not in types
        byte_trie_build(&self.trie, [trie_pieces, user, every if self.hf_unigram else []])
        self.words_apart = bpe and not treat_whitespace_as_suffix and not any(
            "\u2581" in p.lstrip("\u2581") for p, _ in ((p.decode(), i) for p, i in trie_pieces))
        if self.words_apart:
            self.isolated.assign(0x110000 // 64, ~<uint64_t>0)
            for c in {c for p in (b.decode() for b, _ in trie_pieces) if len(p) > 1 for c in p}:
                self.isolated[ord(c) >> 6] &= ~(<uint64_t>1 << (ord(c) & 63))
        self.normalizer.user = &self.trie if user else NULL
        self.normalizer.user_root = USER
        charsmap_build(&self.normalizer.charsmap, charsmap)
        for i in range(len(pieces)):
            self.decode_kind.push_back(self.types[self._piece_to_id(<const uint8_t*>self.vocab.data() + self.starts[i],
                                                                    self.ends[i] - self.starts[i])])

    cdef void _pair_table(self, const vector[int32_t]& normal) noexcept nogil:
        """`pairs`: for each piece p and each cut of its bytes into two pieces (l, r), (l, r) -> p, so
        that two adjacent symbols that are pieces make a piece iff their ids are a key (the ids as
        `pieces` gives them: the first of duplicated bytes); `char_ids` too."""
        cdef const uint8_t* data = <const uint8_t*>self.vocab.data()
        cdef const int64_t* starts = self.starts.data()
        cdef const int64_t* ends = self.ends.data()
        cdef vector[int32_t] found          # (left, right, piece) back to back
        cdef size_t k
        cdef int64_t n, cut
        cdef int32_t p, l, r
        cdef uint8_t c
        for k in range(normal.size()):
            p = normal[k]
            n = ends[p] - starts[p]
            if bytes_table_get(&self.pieces, data, starts, ends, data + starts[p], n) != p:
                continue
            for cut in range(1, n):
                l = bytes_table_get(&self.pieces, data, starts, ends, data + starts[p], cut)
                if l < 0:
                    continue
                r = bytes_table_get(&self.pieces, data, starts, ends, data + starts[p] + cut, n - cut)
                if r >= 0:
                    found.push_back(l)
                    found.push_back(r)
                    found.push_back(p)
        merge_table_init(&self.pairs, found.size() // 3)
        for k in range(0, found.size(), 3):
            merge_table_add(&self.pairs, found[k], found[k + 1], found[k + 2], found[k + 2])
        for c in range(128):
            self.char_ids[c] = bytes_table_get(&self.pieces, data, starts, ends, &c, 1)

    @property
    def n_vocab(self) -> int:
        return <int>self.starts.size()

    cdef inline int32_t _piece_to_id(self, const uint8_t* p, int64_t n) noexcept nogil:
        """sentencepiece's PieceToId: a reserved piece, else a piece, else the unknown id."""
        cdef int32_t i = bytes_table_get(&self.lookup, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                         self.ends.data(), p, n)
        return self.unk if i < 0 else i

    cdef inline int64_t _user_match(self, const uint8_t* p, int64_t n) noexcept nogil:
        """The length of the longest user-defined symbol p[:n] starts with, 0 when none."""
        return user_match(&self.normalizer, p, n)

    # -- models ------------------------------------------------------------------------------------
    cdef inline void _emit(self, const uint8_t* s, int64_t start, int64_t length, int32_t id, IdVector& out,
                           bint* prev_unk, Workspace& ws) noexcept nogil:
        """One piece of the model's output, as the processor passes it on (and its span, when asked)."""
        cdef bint unk = id == self.unk or (id >= 0 and self.types[id] == UNKNOWN)
        cdef int64_t j
        if unk and self.byte_fallback:
            for j in range(start, start + length):
                out.push_back(self.byte_ids[s[j]])
                if ws.want_spans and self.hf_json:   # HF's BPE: each byte piece its byte
                    ws.spans.push_back(j)
                    ws.spans.push_back(j + 1)
                elif ws.want_spans:
                    ws.spans.push_back(start)
                    ws.spans.push_back(start + length if j == start + length - 1 else start)
        elif not (unk and prev_unk[0]):
            out.push_back(id)
            if ws.want_spans:
                ws.spans.push_back(start)
                ws.spans.push_back(start + length)
        elif ws.want_spans:
            ws.spans[ws.spans.size() - 1] = start + length
        prev_unk[0] = unk

    cdef void _unigram(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        cdef BestPath empty
        cdef int64_t pos = 0, k, mblen, length, end, frontier = 0, i
        cdef int32_t node, id
        cdef float till, cand, offset, unk_score = self.min_score - <float>10.0
        cdef bint single, prev_unk = False
        empty.id = -1
        empty.score = 0
        empty.starts_at = -1
        ws.best.assign(size + 1, empty)
        while pos < size:
            till = ws.best[pos].score
            if till < -SCORE_RESET or till > SCORE_RESET:
                # sentencepiece 0.2.3 keeps float scores small: it subtracts the path's score from
                # every position reached so far (which changes how later sums round)
                offset = till
                for i in range(pos, frontier + 1):
                    if i == pos or ws.best[i].starts_at != -1:
                        ws.best[i].score -= offset
                till = 0
            single = False
            mblen = min(one_char_len(s[pos]), size - pos)
            node = self.trie.roots[256 * PIECES + s[pos]]
            k = pos + 1
            while node >= 0:
                id = self.trie.records[node]
                if id >= 0 and self.types[id] != UNUSED:
                    frontier = max(frontier, k)
                    length = k - pos
                    if self.types[id] == USER_DEFINED:
                        cand = <float>(0.1 * <double>(length - 1)) + till
                    else:
                        cand = self.scores[id] + till
                    if ws.best[k].starts_at == -1 or cand > ws.best[k].score:
                        ws.best[k].score = cand
                        ws.best[k].starts_at = pos
                        ws.best[k].id = id
                    if length == mblen:
                        single = True
                if k >= size:
                    break
                node = byte_trie_child(self.trie.records.data() + node, s[k])
                k += 1
            if not single:
                end = pos + mblen
                frontier = max(frontier, end)
                cand = unk_score + till
                if ws.best[end].starts_at == -1 or cand > ws.best[end].score:
                    ws.best[end].score = cand
                    ws.best[end].starts_at = pos
                    ws.best[end].id = self.unk
            pos += mblen
        ws.path.clear()
        end = size
        while end > 0:
            ws.path.push_back(end)
            end = ws.best[end].starts_at
        for k in range(<int64_t>ws.path.size() - 1, -1, -1):
            end = ws.path[k]
            self._emit(s, ws.best[end].starts_at, end - ws.best[end].starts_at, ws.best[end].id, out, &prev_unk, ws)

    cdef void _unigram_hf(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        """HF `tokenizers`' Unigram (`encode_optimized`): Viterbi over every piece of the vocabulary
        (control and unknown pieces too) with float64 scores and no renormalization, ties kept by the
        first candidate (shorter first), an unknown character scored min(all scores) - 10; a run of
        unknown nodes is one string: its id when it is a piece, else its bytes' pieces with
        byte_fallback, else the unknown id (each of them spanning the run)."""
        cdef BestPath64 empty
        cdef int64_t pos = 0, k, mblen, end, run_start = -1, j
        cdef int32_t node, id
        cdef double till, cand, unk_score = self.min_score64 - 10.0
        cdef bint single
        empty.id = -1
        empty.score = 0
        empty.starts_at = -1
        ws.best64.assign(size + 1, empty)
        while pos < size:
            till = ws.best64[pos].score
            single = False
            mblen = min(one_char_len(s[pos]), size - pos)
            node = self.trie.roots[256 * ALL + s[pos]]
            k = pos + 1
            while node >= 0:
                id = self.trie.records[node]
                if id >= 0:
                    cand = self.scores64[id] + till
                    if ws.best64[k].starts_at == -1 or cand > ws.best64[k].score:
                        ws.best64[k].score = cand
                        ws.best64[k].starts_at = pos
                        ws.best64[k].id = id
                    if k - pos == mblen:
                        single = True
                if k >= size:
                    break
                node = byte_trie_child(self.trie.records.data() + node, s[k])
                k += 1
            if not single:
                end = pos + mblen
                cand = unk_score + till
                if ws.best64[end].starts_at == -1 or cand > ws.best64[end].score:
                    ws.best64[end].score = cand
                    ws.best64[end].starts_at = pos
                    ws.best64[end].id = self.unk
            pos += mblen
        ws.path.clear()
        end = size
        while end > 0:
            ws.path.push_back(end)
            end = ws.best64[end].starts_at
        ws.path.push_back(0)
        for k in range(<int64_t>ws.path.size() - 2, -1, -1):
            end = ws.path[k]
            if ws.best64[end].id == self.unk:
                if run_start < 0:
                    run_start = ws.path[k + 1]
                if k > 0 and ws.best64[ws.path[k - 1]].id == self.unk:
                    continue
                id = bytes_table_get(&self.lookup, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                     self.ends.data(), s + run_start, end - run_start)
                if id >= 0:
                    _push(out, id, ws, run_start, end)
                elif self.byte_fallback:
                    for j in range(run_start, end):
                        _push(out, self.byte_ids[s[j]], ws, run_start, end)
                else:
                    _push(out, self.unk, ws, run_start, end)
                run_start = -1
            else:
                _push(out, ws.best64[end].id, ws, ws.path[k + 1], end)

    cdef inline int32_t _pair_piece(self, const uint8_t* s, Workspace& ws, int64_t left, int64_t right) noexcept nogil:
        """The piece two adjacent symbols make, -1 when none (or a symbol is frozen or missing): looked
        up by their ids in `pairs` when both are pieces, else by the bytes. An unused piece's split
        is recorded."""
        cdef Split split
        cdef int32_t id, lid, rid, merged
        if left < 0 or right < 0:
            return -1
        lid = ws.symbols[left].id
        rid = ws.symbols[right].id
        if lid < -1 or rid < -1:  # frozen
            return -1
        if lid >= 0 and rid >= 0:
            id = merge_table_rank(&self.pairs, lid, rid, &merged, -1)  # its rank: the piece
        else:
            id = bytes_table_get(&self.pieces, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                 self.ends.data(), s + ws.symbols[left].start,
                                 ws.symbols[left].length + ws.symbols[right].length)
        if id >= 0 and self.types[id] == UNUSED:
            split.id = id
            split.left_id = lid
            split.right_id = rid
            split.left_start = ws.symbols[left].start
            split.left_length = ws.symbols[left].length
            split.right_start = ws.symbols[right].start
            split.right_length = ws.symbols[right].length
            ws.splits.push_back(split)
        return id

    cdef inline bint _candidate(self, const uint8_t* s, Workspace& ws, int64_t left, int64_t right,
                                Pair* pair) noexcept nogil:
        """Whether the two symbols make a piece: then `pair` is their candidate."""
        pair.id = self._pair_piece(s, ws, left, right)
        if pair.id < 0:
            return False
        pair.score = self.scores[pair.id]
        pair.left = left
        return True

    cdef inline void _maybe_pair(self, const uint8_t* s, Workspace& ws, int64_t left, int64_t right) noexcept nogil:
        """A candidate on the heap when the two symbols make a piece."""
        cdef Pair pair
        if self._candidate(s, ws, left, right, &pair):
            heap_push(ws.heap, pair)

    cdef void _resegment(self, const uint8_t* s, int64_t start, int64_t length, int32_t id, IdVector& out,
                         Workspace& ws, bint* prev_unk) noexcept nogil:
        """A merged symbol's id (the unknown id when it is no piece: id -1), an unused piece split back
        into the two symbols it was last made of, at most RESEGMENT_DEPTH deep (sentencepiece 0.2.3)."""
        cdef int64_t j, depth
        cdef bint found
        ws.stack.clear()
        ws.stack.push_back(start)
        ws.stack.push_back(length)
        ws.stack.push_back(id)
        ws.stack.push_back(0)
        while ws.stack.size():
            depth = ws.stack.back()
            ws.stack.pop_back()
            id = <int32_t>ws.stack.back()
            ws.stack.pop_back()
            length = ws.stack.back()
            ws.stack.pop_back()
            start = ws.stack.back()
            ws.stack.pop_back()
            if depth > RESEGMENT_DEPTH:
                self._emit(s, start, length, self.unk if id < 0 else id, out, prev_unk, ws)
                continue
            if id < 0 or self.types[id] != UNUSED:
                self._emit(s, start, length, self.unk if id < 0 else id, out, prev_unk, ws)
                continue
            found = False
            for j in range(<int64_t>ws.splits.size() - 1, -1, -1):
                if ws.splits[j].id == id:
                    ws.stack.push_back(ws.splits[j].right_start)
                    ws.stack.push_back(ws.splits[j].right_length)
                    ws.stack.push_back(ws.splits[j].right_id)
                    ws.stack.push_back(depth + 1)
                    ws.stack.push_back(ws.splits[j].left_start)
                    ws.stack.push_back(ws.splits[j].left_length)
                    ws.stack.push_back(ws.splits[j].left_id)
                    ws.stack.push_back(depth + 1)
                    found = True
                    break
            if not found:
                self._emit(s, start, length, self.unk, out, prev_unk, ws)

    cdef void _bpe(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        cdef Symbol sym
        cdef int64_t pos = 0, i
        cdef int32_t id
        cdef bint prev_unk = False, freeze
        ws.symbols.clear()
        ws.heap.clear()
        ws.splits.clear()
        while pos < size:
            sym.length = self._user_match(s + pos, size - pos)
            freeze = sym.length > 0
            if not freeze:
                sym.length = min(one_char_len(s[pos]), size - pos)
            sym.start = pos
            if sym.length == 1 and s[pos] < 128:
                sym.id = self.char_ids[s[pos]]
            else:
                sym.id = bytes_table_get(&self.pieces, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                         self.ends.data(), s + pos, sym.length)
            if freeze:
                sym.id = frozen(sym.id)
            sym.prev = <int64_t>ws.symbols.size() - 1
            pos += sym.length
            sym.next = -1 if pos >= size else <int64_t>ws.symbols.size() + 1
            ws.symbols.push_back(sym)
        if ws.symbols.empty():
            return
        self._merge_heap(s, ws)
        i = 0
        while i != -1:
            id = ws.symbols[i].id
            self._resegment(s, ws.symbols[i].start, ws.symbols[i].length, frozen(id) if id < -1 else id, out, ws,
                            &prev_unk)
            i = ws.symbols[i].next

    cdef inline void _short_key(self, Workspace& ws, int64_t left) noexcept nogil:
        """`_bpe_short`: the piece symbol `left` makes with the next and its scan key (-1 for none)."""
        cdef int32_t right = ws.short_next[left], merged = -1
        ws.scan_keys[left] = -1
        if right >= 0 and merge_table_rank(&self.pairs, ws.short_ids[left], ws.short_ids[right], &merged, -1) >= 0:
            ws.short_pair[left] = merged
            ws.scan_keys[left] = (self.score_rank[merged] << SCAN_SHIFT) | <int32_t>(SCAN_SYMBOLS - 1 - left)

    cdef bint _bpe_short(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        """`_bpe` of a word whose characters are all pieces, none a user-defined symbol, at most
        SCAN_SYMBOLS of them, in a model with no unused piece: symbols as ids in small arrays, merged
        by the scan's order (the higher score, then the leftmost), every symbol a piece. False, with
        nothing done, for any other word."""
        cdef int64_t pos = 0, n = 0, length, i
        cdef int32_t id, best, left, right
        if not self.short_path:
            return False
        while pos < size:
            if n == SCAN_SYMBOLS or (self.normalizer.user != NULL and self._user_match(s + pos, size - pos)):
                return False
            length = min(one_char_len(s[pos]), size - pos)
            if length == 1 and s[pos] < 128:
                id = self.char_ids[s[pos]]
            else:
                id = bytes_table_get(&self.pieces, <const uint8_t*>self.vocab.data(), self.starts.data(),
                                     self.ends.data(), s + pos, length)
            if id < 0:
                return False
            ws.short_ids[n] = id
            ws.short_prev[n] = <int8_t>(n - 1)
            ws.short_next[n] = <int8_t>(n + 1)
            n += 1
            pos += length
        if n == 0:
            return True
        ws.short_next[n - 1] = -1
        for i in range(n):
            self._short_key(ws, i)
        while True:
            best = -1
            for i in range(n):
                best = max(best, ws.scan_keys[i])
            if best < 0:
                break
            left = SCAN_SYMBOLS - 1 - (best & (SCAN_SYMBOLS - 1))
            right = ws.short_next[left]
            ws.short_ids[left] = ws.short_pair[left]
            ws.short_next[left] = ws.short_next[right]
            if ws.short_next[right] >= 0:
                ws.short_prev[ws.short_next[right]] = <int8_t>left
            ws.scan_keys[right] = -1
            if ws.short_prev[left] >= 0:
                self._short_key(ws, ws.short_prev[left])
            self._short_key(ws, left)
        i = 0
        while i >= 0:
            out.push_back(ws.short_ids[i])
            i = ws.short_next[i]
        return True

    cdef void _merge_heap(self, const uint8_t* s, Workspace& ws) noexcept nogil:
        """The merges, candidates on a heap (sentencepiece's agenda). A candidate is stale when its
        left symbol is gone or the two now at its place are not as long as its piece: symbols only
        grow, and a symbol's next changes only when it takes that next in."""
        cdef Pair top
        cdef int64_t i, left, right
        for i in range(1, <int64_t>ws.symbols.size()):
            if self._candidate(s, ws, i - 1, i, &top):
                ws.heap.push_back(top)
        heapify(ws.heap)
        while ws.heap.size():
            top = heap_pop(ws.heap)
            left = top.left
            right = ws.symbols[left].next
            if ws.symbols[left].length == 0 or right < 0 or \
                    ws.symbols[left].length + ws.symbols[right].length != self.ends[top.id] - self.starts[top.id]:
                continue
            ws.symbols[left].length += ws.symbols[right].length
            ws.symbols[left].id = top.id
            ws.symbols[left].next = ws.symbols[right].next
            if ws.symbols[right].next >= 0:
                ws.symbols[ws.symbols[right].next].prev = left
            ws.symbols[right].length = 0
            self._maybe_pair(s, ws, ws.symbols[left].prev, left)
            self._maybe_pair(s, ws, left, ws.symbols[left].next)

    cdef inline bint _isolated_at(self, const uint8_t* s, int64_t pos, int64_t size) noexcept nogil:
        """Whether the character at `pos` is isolated: well-formed UTF-8 of a code point that no piece
        holds together with another character (false when unsure)."""
        cdef uint32_t cp = s[pos]
        if cp < 0x80:
            return (self.isolated[cp >> 6] >> (cp & 63)) & 1
        if valid_utf8_len(s + pos, size - pos) == 0:
            return False
        next_char(s, pos, size, &cp)
        return (self.isolated[cp >> 6] >> (cp & 63)) & 1

    cdef inline int64_t _word_end(self, const uint8_t* s, int64_t start, int64_t size) noexcept nogil:
        """Where the word that starts at `start` ends (see `_bpe_words`)."""
        cdef bint iso = self._isolated_at(s, start, size)
        cdef int64_t pos = start + min(one_char_len(s[start]), size - start)
        cdef const uint64_t* ascii = self.isolated.data()  # (code points 0-127: its first two words)
        while True:
            if not iso:  # a run of ASCII characters that are not isolated goes on the word, byte by byte
                while pos < size and s[pos] < 0x80 and not (ascii[s[pos] >> 6] >> (s[pos] & 63)) & 1:
                    pos += 1
            if not (pos < size and self._isolated_at(s, pos, size) == iso and (iso or not (
                    _space_at(s, pos, size) and not (pos - start >= 3 and _space_at(s, pos - 3, size))))):
                return pos
            pos += min(one_char_len(s[pos]), size - pos)

    cdef void _bpe_words(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        """BPE word by word, each word's ids remembered: the words are the runs of isolated characters
        (see `_isolated_at`) and the texts between them, cut before each "▁" that follows another
        character. The ids are those of the whole text: every symbol BPE makes is a piece, so (a) when
        no piece holds a character followed by "▁" (`words_apart`), no merge crosses the start of a
        word, and (b) an isolated character is never merged, so no merge crosses either of its sides.
        The text's candidates then each lie within one word and a merge changes only its own word's
        candidates, so the merges of each word are in the order (score, then position) that word alone
        gives them. A run of unknown pieces across two words is still one unknown id. The next word's
        cache slot is fetched while a word is looked up or merged. With spans asked for, each word is
        merged (no cache) and its spans moved to its place; an unknown id that joins the run before
        extends that run's span."""
        cdef int64_t start = 0, pos, after, first, n = 0
        cdef uint64_t h, h_next
        cdef const int32_t* ids
        cdef bint last_unk = False
        cdef size_t k, spans_before
        self._next_word(s, 0, size, &after, &h_next)
        while start < size:
            pos, h = after, h_next
            self._next_word(s, pos, size, &after, &h_next)
            if h_next:  # the next word's slot on its way while this one is looked up or merged
                word_cache_prefetch(&ws.words, h_next)
            ids = NULL
            spans_before = ws.spans.size()
            if h and not ws.want_spans:
                ids = word_cache_get(&ws.words, s + start, pos - start, h, &n)
            if ws.want_spans:
                ws.word_ids.clear()
                self._bpe(s + start, pos - start, ws.word_ids, ws)
                ids = ws.word_ids.data()
                n = <int64_t>ws.word_ids.size()
                for k in range(spans_before, ws.spans.size()):
                    ws.spans[k] += start
            elif ids == NULL:
                ws.word_ids.clear()
                if not self._bpe_short(s + start, pos - start, ws.word_ids, ws):
                    self._bpe(s + start, pos - start, ws.word_ids, ws)
                ids = ws.word_ids.data()
                n = <int64_t>ws.word_ids.size()
                if h:
                    word_cache_put(&ws.words, s + start, pos - start, h, ids, n, ws.max_words)
            first = 1 if last_unk and not self.byte_fallback and n and ids[0] == self.unk else 0
            if first and ws.want_spans:  # the run's span ends where this word's unknown id ends
                ws.spans[spans_before - 1] = ws.spans[spans_before + 1]
                ws.spans.erase(ws.spans.begin() + spans_before, ws.spans.begin() + spans_before + 2)
            out.insert(out.end(), ids + first, ids + n)
            if n:
                last_unk = ids[n - 1] == self.unk
            start = pos

    cdef inline void _next_word(self, const uint8_t* s, int64_t start, int64_t size, int64_t* end,
                                uint64_t* h) noexcept nogil:
        """The end of the word at `start` (`size` when none is left) and its hash (0 when it is too long
        to be remembered, or none is left)."""
        end[0] = size
        h[0] = 0
        if start < size:
            end[0] = self._word_end(s, start, size)
            if end[0] - start <= WORD_CACHE_BYTES:
                h[0] = bytes_hash(s + start, end[0] - start)

    cdef void _encode_text(self, const uint8_t* p, int64_t n, IdVector& out, Workspace& ws) noexcept nogil:
        normalize(&self.normalizer, p, n, ws.norm, NULL)
        cdef string* text = &ws.norm
        if self.hf.active:
            hf_whitespace(&self.hf, <const uint8_t*>ws.norm.data(), ws.norm.size(), ws.hf_norm)
            text = &ws.hf_norm
        self._model(<const uint8_t*>text.data(), text.size(), out, ws)

    cdef void _model(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        """The model over a normalized text (spans recorded when asked)."""
        if size == 0:
            return
        if self.direct:
            self._bpe_direct(s, size, out, ws)
        else:
            self._merged(s, size, out, ws)

    cdef void _merged(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        """The model without `ignore_merges`' lookup."""
        if self.words_apart:  # the same ids (and spans) as the whole text at once
            self._bpe_words(s, size, out, ws)
        elif self.bpe:
            self._bpe(s, size, out, ws)
        elif self.hf_unigram:
            self._unigram_hf(s, size, out, ws)
        else:
            self._unigram(s, size, out, ws)

    cdef void _bpe_direct(self, const uint8_t* s, int64_t size, IdVector& out, Workspace& ws) noexcept nogil:
        """HF's BPE with `ignore_merges` over its pre-tokens: each user-defined symbol (HF's
        Split(Isolated)) and each text between them, cut before every "▁" with DIRECT_WORDS
        (Metaspace's split, MergedWithNext), is a word; a word that is a piece (of any type, as
        HF's vocabulary holds them) is that piece, any other is merged."""
        cdef int64_t start = 0, pos = 0, k
        while pos < size:
            k = self._user_match(s + pos, size - pos)
            if k > 0:
                self._direct_word(s, start, pos - start, out, ws)
                self._direct_word(s, pos, k, out, ws)
                pos += k
                start = pos
                continue
            if self.direct == DIRECT_WORDS and pos > start and _space_at(s, pos, size):
                self._direct_word(s, start, pos - start, out, ws)
                start = pos
            pos += min(one_char_len(s[pos]), size - pos)
        self._direct_word(s, start, size - start, out, ws)

    cdef void _direct_word(self, const uint8_t* s, int64_t start, int64_t length, IdVector& out,
                           Workspace& ws) noexcept nogil:
        cdef int32_t id
        cdef size_t j, before = ws.spans.size()
        if length == 0:
            return
        id = bytes_table_get(&self.lookup, <const uint8_t*>self.vocab.data(), self.starts.data(), self.ends.data(),
                             s + start, length)
        if id >= 0:
            _push(out, id, ws, start, start + length)
            return
        self._merged(s + start, length, out, ws)
        for j in range(before, ws.spans.size()):
            ws.spans[j] += start

    cdef void _encode_rows(self, const BinaryView& v, int64_t first, int64_t last, bint keep_ids,
                           IdRows& res, Workspace& ws) noexcept nogil:
        """Rows [first, last) into `res`, with a thread's workspace."""
        cdef int64_t r, s, before
        for r in range(first, last):
            if not view_valid(v, r):
                res.lengths.push_back(-1)
                continue
            before = <int64_t>res.ids.size()
            s = view_start(v, r)
            self._encode_text(v.values + s, view_end(v, r) - s, res.ids, ws)
            res.lengths.push_back(<int64_t>res.ids.size() - before)
            if not keep_ids:
                res.ids.clear()

    def encode_str(self, str text not None, list id_objects not None, bint counts_only=False):
        """Ids of one str as a list of the `id_objects` (the int of each id, which the caller keeps),
        or with `counts_only` their number: the direct path, without Arrow, through a kept workspace
        (its word cache warm from earlier calls); the GIL is released for long texts.
        UnicodeEncodeError for a surrogate."""
        cdef Py_ssize_t n
        cdef const uint8_t* p = <const uint8_t*>PyUnicode_AsUTF8AndSize(text, &n)
        cdef Workspace* ws = self._take_workspace()
        try:
            ws.want_spans = False
            ws.max_words = WORD_CACHE_SIZE
            ws.text_ids.clear()
            if n < NOGIL_BYTES:
                self._encode_text(p, n, ws.text_ids, ws[0])
            else:
                with nogil:
                    self._encode_text(p, n, ws.text_ids, ws[0])
            if counts_only:
                return <int64_t>ws.text_ids.size()
            return id_list(ws.text_ids.data(), <int64_t>ws.text_ids.size(), id_objects)
        finally:
            if ws.text_ids.capacity() > KEEP_IDS:
                IdVector().swap(ws.text_ids)
            self.spare.push_back(ws)

    def encode_arrow(self, texts, int threads=1, bint counts_only=False):
        """Ids (large_list<int32>) or token counts (int64) of a (large_)string array; NULL stays NULL."""
        cdef list keep = []
        cdef int k
        cdef RowRun run
        rows_open(run, texts, keep, threads, True)
        cdef vector[IdRows] parts = vector[IdRows](run.parts)
        if not counts_only:
            id_pool_take(self.pool, parts[0].ids)
        cdef vector[Workspace*] spaces
        for k in range(run.threads):
            spaces.push_back(self._take_workspace())
            spaces[k].want_spans = False
            spaces[k].max_words = max(WORD_CACHE_SIZE // run.threads, WORD_CACHE_MIN)
        cdef SentencePieceCall call
        call.encoder = <void*>self
        call.keep_ids = not counts_only
        call.parts = parts.data()
        call.spaces = spaces.data()
        try:
            rows_run(run, _sentencepiece_rows, NULL, &call)
        finally:
            for k in range(run.threads):
                self.spare.push_back(spaces[k])
        cdef vector[IdRows] ordered
        for k in run.order:
            id_rows_move(ordered, parts[k])
        return id_rows_arrow(ordered, counts_only, self.pool, run.threads)

    def encode_with_byte_offsets(self, str text):
        """(ids, begins, ends) of a text (valid Unicode), each token's span of the text's UTF-8 bytes
        as sentencepiece's `encode(text, out_type='immutable_proto')` gives `begin` and `end` (Arrow
        int64 arrays: no Python int per token)."""
        cdef bytes b = text.encode()
        cdef const uint8_t* p = <const uint8_t*>b
        cdef int64_t n = len(b)
        cdef Workspace ws
        cdef IdVector ids
        cdef vector[int64_t] origin, begins, ends
        cdef size_t k
        if self.hf.active or self.hf_json:
            raise ValueError("offsets are sentencepiece's, not followed through HF's steps")
        ws.want_spans = True  # (so no word cache: see _bpe_words)
        with nogil:
            normalize(&self.normalizer, p, n, ws.norm, &origin)
            self._model(<const uint8_t*>ws.norm.data(), ws.norm.size(), ids, ws)
            for k in range(0, ws.spans.size(), 2):
                begins.push_back(origin[ws.spans[k]])
                ends.push_back(origin[ws.spans[k + 1]])
        return [ids[k] for k in range(ids.size())], int64_array(begins), int64_array(ends)

    def model_spans(self, str text):
        """(ids, spans) of a text the model reads as it is (HF's pipeline has normalized and
        pre-tokenized it already): each token's (begin, end) of the text's UTF-8, as HF's models
        give them (byte pieces: see the module's docstring)."""
        cdef bytes b = text.encode()
        cdef Workspace ws
        cdef IdVector ids
        cdef const uint8_t* p = <const uint8_t*>b
        cdef int64_t n = len(b)
        cdef size_t k
        ws.want_spans = True  # (so no word cache: see _bpe_words)
        with nogil:
            self._model(p, n, ids, ws)
        return ([ids[k] for k in range(ids.size())],
                [(ws.spans[k], ws.spans[k + 1]) for k in range(0, ws.spans.size(), 2)])

    def normalize(self, str text) -> str:
        """The normalized text (sentencepiece's `normalize`; the model's input after HF's whitespace
        steps in that mode), for tests and inspection."""
        cdef bytes b = text.encode()
        cdef string out, hf_out
        normalize(&self.normalizer, <const uint8_t*>b, len(b), out, NULL)
        if self.hf.active:
            hf_whitespace(&self.hf, <const uint8_t*>out.data(), out.size(), hf_out)
            return hf_out.decode()
        return out.decode()

    def hf_precompiled(self, str text, list grapheme_ends, bint with_units=False):
        """`text` through HF's Precompiled normalizer (`hf_precompiled.pxd`) with this model's
        charsmap; `grapheme_ends`: the UTF-8 byte offset where each of its graphemes ends. With
        `with_units`, (text, units): each replacement's input and output (start, end) bytes, four
        numbers each."""
        cdef bytes b = text.encode()
        cdef vector[int64_t] ends = grapheme_ends
        cdef vector[int64_t] units
        cdef string out
        if ends.size() and (ends.back() != len(b) or any(e <= s for e, s in zip(grapheme_ends, [0] + grapheme_ends))):
            raise ValueError("grapheme_ends must rise to the text's UTF-8 length")
        hf_precompiled(&self.normalizer.charsmap, <const uint8_t*>b, ends.data(), ends.size(), out,
                       &units if with_units else NULL)
        return (out.decode(), list(units)) if with_units else out.decode()

    # -- ids -> text -------------------------------------------------------------------------------
    cdef void _flush_bytes(self, string& pending, string& out, int64_t* starts) noexcept nogil:
        """Byte pieces as text: each valid UTF-8 character as it is, each other byte U+FFFD. With
        `starts` (one slot per pending byte), where each byte's text starts in `out`: the start of
        the character it is part of."""
        cdef size_t at = 0, i
        cdef int64_t k
        while at < pending.size():
            k = valid_utf8_len(<const uint8_t*>pending.data() + at, pending.size() - at)
            if starts != NULL:
                for i in range(at, at + (k if k > 0 else 1)):
                    starts[i] = <int64_t>out.size()
            if k == 0:
                out.append(REPLACEMENT, 3)
                at += 1
            else:
                out.append(pending.data() + at, k)
                at += k
        pending.clear()

    cdef void _decode_row(self, const int32_t* ids, int64_t n, string& out, string& pending,
                          int64_t* starts) noexcept nogil:
        """The text of `n` ids appended to `out`; with `starts` (n slots), the byte of `out` where
        each id's text starts (a byte piece's: the start of the character it is part of)."""
        cdef int64_t j, start, row_start = out.size(), k, size
        cdef int32_t t
        cdef int8_t kind
        cdef bint bos_ws = True, seen = False, strip = self.add_dummy_prefix or self.remove_extra_whitespaces
        cdef const char* p
        for j in range(n):
            t = ids[j]
            kind = self.decode_kind[t]
            if kind == BYTE:
                pending.push_back(<char>_hex_byte(self.vocab.data() + self.starts[t] + 3))
                continue
            self._flush_bytes(pending, out, <int64_t*>NULL if starts == NULL else starts + j - <int64_t>pending.size())
            if starts != NULL:
                starts[j] = <int64_t>out.size()
            if seen or out.size() > <size_t>row_start:
                bos_ws = False
            seen = False
            if kind == CONTROL:
                continue
            if kind == UNKNOWN:
                out.append(self.unk_surface)
                continue
            p = self.vocab.data() + self.starts[t]
            size = self.ends[t] - self.starts[t]
            start = 0
            if bos_ws and strip and size >= 3 and p[0] == SPACE[0] and p[1] == SPACE[1] and p[2] == SPACE[2]:
                start = 3
                seen = not self.remove_extra_whitespaces
            k = start
            while k < size:
                if k + 3 <= size and p[k] == SPACE[0] and p[k + 1] == SPACE[1] and p[k + 2] == SPACE[2]:
                    out.push_back(32)
                    k += 3
                else:
                    out.push_back(p[k])
                    k += 1
        self._flush_bytes(pending, out, <int64_t*>NULL if starts == NULL else starts + n - <int64_t>pending.size())

    def decode_arrow(self, ids):
        """Text (large_string) of each row of a list<integer> array as sentencepiece decodes it;
        NULL stays NULL, an id out of range raises `token_id_error` (UnknownTokenError, a KeyError as
        tiktoken's and a ValueError; OverflowError for a negative one)."""
        cdef list keep = []
        cdef IdListView view = id_list_view(ids, keep)
        ids = keep[0]
        cdef int64_t r, j, bad = -1, n_ids = <int64_t>self.starts.size()
        cdef string out, pending
        cdef vector[int64_t] offsets
        offsets.push_back(0)
        with nogil:
            for j in range(view.offsets[0], view.offsets[view.length]):
                if view.ids[j] < 0 or view.ids[j] >= n_ids:
                    bad = j
                    break
            if bad < 0:
                for r in range(view.length):
                    self._decode_row(view.ids + view.offsets[r], view.offsets[r + 1] - view.offsets[r], out, pending,
                                     NULL)
                    offsets.push_back(<int64_t>out.size())
        if bad >= 0:
            raise token_id_error(view.ids[bad], n_ids)
        off = PyBytes_FromStringAndSize(<const char*>offsets.data(), offsets.size() * sizeof(int64_t))
        data = pa.Array.from_buffers(pa.large_string(), view.length, [None, pa.py_buffer(off), pa.py_buffer(out)])
        if ids.null_count:
            return pa.compute.if_else(ids.is_null(), pa.scalar(None, pa.large_string()), data)
        return data

    def decode_ids(self, ids, bint with_starts=False):
        """The text (UTF-8 bytes) of one sequence of ints, as `decode_arrow` gives a row. As tiktoken,
        which converts every id to an unsigned 32-bit integer before it decodes: TypeError for the first
        item that is no integer, OverflowError for the first id no u32 holds, else UnknownTokenError
        for the first id out of range. `with_starts`:
        (text, the byte where each id's text starts in it; byte pieces of one character at its start)."""
        cdef vector[int32_t] row
        cdef vector[int64_t] starts
        cdef int64_t n_ids = <int64_t>self.starts.size(), t, bad = -1
        cdef string out, pending
        if not PySequence_Check(ids):  # (as tiktoken: no set, dict or generator, whose order is not the ids')
            raise TypeError(f"token ids must be a sequence of integers, not {type(ids).__name__}")
        for x in ids:
            t = PyNumber_Index(x)  # (not `t = x`, which would take 2.5 as 2; OverflowError past int64)
            if t < 0 or t >= n_ids:
                if t < 0 or t > UINT32_MAX:
                    raise token_id_error(t)
                if bad < 0:
                    bad = t
            row.push_back(<int32_t>t)
        if bad >= 0:
            raise token_id_error(bad, n_ids)
        starts.resize(row.size() if with_starts else 0)
        self._decode_row(row.data(), <int64_t>row.size(), out, pending,
                         starts.data() if with_starts else <int64_t*>NULL)
        text = PyBytes_FromStringAndSize(out.data(), out.size())
        return (text, [starts[k] for k in range(<Py_ssize_t>starts.size())]) if with_starts else text

    def piece_bytes(self, int64_t token_id) -> bytes:
        """The piece of one id as the model spells it ("▁the", "<0x41>"); `token_id_error` for an id
        without one."""
        if token_id < 0 or token_id >= <int64_t>self.starts.size():
            raise token_id_error(token_id)
        return self.vocab.substr(self.starts[token_id], self.ends[token_id] - self.starts[token_id])


cdef struct SentencePieceCall:  # what the threads of one encode_arrow call share
    void* encoder               # the SentencePieceEncoder (borrowed: the call holds it)
    bint keep_ids
    IdRows* parts
    Workspace** spaces          # one per thread


cdef int64_t _sentencepiece_rows(void* task, const RowRun& run, int thread, int part, int64_t first,
                                 int64_t last) noexcept nogil:
    """Rows [first, last) into part `part` (nothing fails: -1)."""
    cdef SentencePieceCall* call = <SentencePieceCall*>task
    (<SentencePieceEncoder>call.encoder)._encode_rows(run.view, first, last, call.keep_ids, call.parts[part],
                                                      call.spaces[thread][0])
    return -1
