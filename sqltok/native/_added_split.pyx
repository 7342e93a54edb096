# cython: language_level=3
"""HF's added tokens for encoders that do not match them themselves (WordPiece, SentencePiece): the
rows of an Arrow string array cut at their added tokens (`added_match.pxd`) into one array of text
segments, which the family's encoder encodes like any texts, then each row's ids put back together
from its segments' ids and its tokens' ids. Both steps run without the GIL, in time linear in the
bytes and ids.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np
import pyarrow as pa

from sqltok.added_tokens import SPACE, WORD, code_point_ranges

from sqltok.native.added_match cimport (AddedSplit, AddedTokens, added_splits, added_tokens_add, added_tokens_init,
                                        find_matches)
from sqltok.native.arrow_buffers cimport BinaryView, binary_view, view_end, view_start, view_valid
from sqltok.native.id_lists cimport IdListView, IdRows, id_list_view
from sqltok.native.id_output cimport IdPool, id_pool_new, id_pool_release, id_rows_arrow


cdef enum:
    # `split_arrow`'s passes: the tokens matched in the raw text, those matched in the normalized
    # text, or both on the same text (HF's two passes, for a tokenizer without a normalizer)
    RAW = 0
    NORMALIZED = 1
    BOTH = 2

PASSES = {"raw": RAW, "normalized": NORMALIZED, "both": BOTH}


cdef class AddedSplitter:
    """The added tokens of one tokenizer; build once, split any number of arrays."""
    cdef AddedTokens added
    cdef dict slot_of                   # special token id -> its flag's index in an `allowed` mask
    cdef IdPool* pool

    def __cinit__(self):
        self.pool = id_pool_new()

    def __dealloc__(self):
        id_pool_release(self.pool)

    def __init__(self, list tokens):
        """`tokens`: (id, content, special, flags) with `flags` a `sqltok.added_tokens.AddedTokenFlags`
        and `content` (str, non-empty) the text to match (the normalized content of a `normalized`
        token). Special tokens are matched only where allowed, the others always."""
        added_tokens_init(self.added)
        self.slot_of = {}
        for tid, content, special, f in tokens:
            b = content.encode("utf-8")
            if not b:
                raise ValueError("an added token must not be empty")
            if special:
                self.slot_of.setdefault(tid, len(self.slot_of))
            added_tokens_add(self.added, tid, <string>b, self.slot_of[tid] if special else -1,
                             f.lstrip, f.rstrip, f.single_word, f.normalized)
        self.added.space = code_point_ranges(SPACE)
        self.added.word = code_point_ranges(WORD)

    def has(self, str pass_name) -> bool:
        """Whether any token is matched in the "raw" or the "normalized" pass."""
        return self.added.has[PASSES[pass_name]]

    cdef vector[uint8_t] _mask(self, allowed):
        """Which special tokens `allowed` (None, "all" or a set of ids) lets match, by flag index."""
        cdef vector[uint8_t] mask = vector[uint8_t](max(len(self.slot_of), 1), 0)
        for tid, slot in self.slot_of.items():
            mask[slot] = allowed == "all" or (allowed is not None and tid in allowed)
        return mask

    def split_arrow(self, texts, str pass_name="both", allowed=None):
        """(segments, ids, row_offsets): each row of a string array cut at the tokens of one pass
        ("raw", "normalized", or "both" on the same text, for a tokenizer without a normalizer);
        `segments` (large_string) holds the text between them and an empty string for each token,
        `ids` (int32 numpy) the token of each segment or -1 for text, and row r is segments
        row_offsets[r]:row_offsets[r + 1] (a NULL row has none). `allowed`: None, "all" or a set of
        special token ids."""
        cdef list keep = []
        cdef BinaryView v = binary_view(texts, keep)
        cdef vector[uint8_t] mask = self._mask(allowed)
        cdef const uint8_t* allowed_mask = mask.data()
        cdef vector[AddedSplit] splits, scratch
        cdef vector[int64_t] seg_offsets, row_offsets
        cdef vector[int32_t] ids
        cdef string values
        cdef int64_t r, s, n
        cdef size_t k
        cdef int pass_ = PASSES[pass_name]
        seg_offsets.push_back(0)
        row_offsets.push_back(0)
        with nogil:
            for r in range(v.length):
                if view_valid(v, r):
                    s = view_start(v, r)
                    n = view_end(v, r) - s
                    if pass_ == BOTH:
                        added_splits(self.added, v.values + s, n, allowed_mask, splits, scratch)
                    else:
                        splits.clear()
                        find_matches(self.added, pass_, v.values + s, 0, n, allowed_mask, splits)
                    for k in range(splits.size()):
                        ids.push_back(splits[k].id)
                        if splits[k].id < 0:
                            values.append(<const char*>v.values + s + splits[k].start,
                                          splits[k].end - splits[k].start)
                        seg_offsets.push_back(<int64_t>values.size())
                row_offsets.push_back(<int64_t>ids.size())
        segments = pa.Array.from_buffers(pa.large_string(), ids.size(), [
            None, pa.py_buffer(_int64_bytes(seg_offsets)), pa.py_buffer(values)])
        id_bytes = b"" if ids.empty() else (<char*>ids.data())[:ids.size() * sizeof(int32_t)]
        return segments, np.frombuffer(id_bytes, np.int32), np.frombuffer(_int64_bytes(row_offsets), np.int64)

    def split_spans(self, str text, allowed=None) -> list:
        """One text cut at its tokens of both passes, as `split_arrow` cuts a row: (start, end, id)
        of each part, its UTF-8 byte range and its token (-1 for text; a token's range holds the
        white space it takes in)."""
        cdef bytes b = text.encode("utf-8")
        cdef vector[uint8_t] mask = self._mask(allowed)
        cdef vector[AddedSplit] splits, scratch
        added_splits(self.added, <const uint8_t*>b, len(b), mask.data(), splits, scratch)
        return [(sp.start, sp.end, sp.id) for sp in splits]

    def join(self, segment_ids, ids, row_offsets, valid=None, list before=None, list after=None):
        """Rows (large_list<int32>) of the segments' ids: row r is `before`, then for each of its
        segments k the token ids[k], or segment_ids[k] (a list<integer> array) where ids[k] is -1,
        then `after`; NULL where `valid` (a boolean array, or None: all valid) is false."""
        cdef list keep = []
        cdef IdListView seg = id_list_view(segment_ids, keep)
        cdef const int32_t[::1] token = np.ascontiguousarray(ids, np.int32)
        cdef const int64_t[::1] rows = np.ascontiguousarray(row_offsets, np.int64)
        cdef vector[int32_t] head = before or [], tail = after or []
        cdef int64_t n_rows = rows.shape[0] - 1
        cdef const uint8_t[::1] ok = np.ones(n_rows, np.uint8) if valid is None else \
            np.ascontiguousarray(valid.to_numpy(zero_copy_only=False), np.uint8)
        if token.shape[0] != seg.length or rows[n_rows] != seg.length:
            raise ValueError("segment ids, token ids and row offsets do not agree")
        cdef vector[IdRows] parts = vector[IdRows](1)
        cdef int64_t r, k, j
        with nogil:
            for r in range(n_rows):
                if not ok[r]:
                    parts[0].lengths.push_back(-1)
                    continue
                j = <int64_t>parts[0].ids.size()
                parts[0].ids.insert(parts[0].ids.end(), head.begin(), head.end())
                for k in range(rows[r], rows[r + 1]):
                    if token[k] >= 0:
                        parts[0].ids.push_back(token[k])
                    else:
                        parts[0].ids.insert(parts[0].ids.end(), seg.ids + seg.offsets[k], seg.ids + seg.offsets[k + 1])
                parts[0].ids.insert(parts[0].ids.end(), tail.begin(), tail.end())
                parts[0].lengths.push_back(<int64_t>parts[0].ids.size() - j)
        return id_rows_arrow(parts, False, self.pool, 1)


cdef bytes _int64_bytes(const vector[int64_t]& v):
    return (<const char*>v.data())[:v.size() * sizeof(int64_t)]
