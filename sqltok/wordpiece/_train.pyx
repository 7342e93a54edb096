# cython: language_level=3
"""WordPiece training as HF tokenizers' `WordPieceTrainer` does it (its `BpeTrainer` with a
continuing-subword prefix), over unique words weighted by their counts.

The stages are HF's, with HF's semantics throughout:
1. the special tokens, in order;
2. the alphabet: every character of the words, weighted by the words' counts (those of
   `initial_alphabet` always kept), the least frequent dropped beyond `limit_alphabet`, the rest
   added in code point order;
3. each word as its characters, a character after the first as `prefix + character` (created when
   first seen); characters outside the alphabet are left out. The words are visited in byte order
   of their UTF-8, which is what tokenizers PR #2066 does to make the ids of the prefixed
   characters (and so every tie below) deterministic: HF 0.23 visits them in hash order;
4. pair counts over every adjacent pair (overlapping runs count each pair), and a max-heap of
   (count, pair, the words that held it) ordered by count, then by the smaller pair of ids;
5. merges: pop the top; an entry whose count is stale is pushed back with the current count; stop
   at `vocab_size` tokens, an empty heap or a count under `min_frequency`; the new token is the
   left token and the right one without its prefix (an existing token is reused); the pair is
   merged left to right in the words the entry names, each merge telling the pair counts what it
   took away and added (HF's `Word::merge`), and every pair that gained in a word is pushed again
   with the words it gained in.

Where HF itself is not deterministic, the choice made here: characters of equal frequency at the
`limit_alphabet` cut are dropped higher code point first (HF drops them in hash order). Counts are
64-bit (HF's pair counts are 32-bit and would wrap past 2^31).
"""
from cpython.exc cimport PyErr_CheckSignals
from cython.operator cimport dereference as deref
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.algorithm cimport sort
from libcpp.pair cimport pair
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

from sqltok.bpe.pair_table cimport (PairTable, pack_pair, pair_table_free,
                                    pair_table_get_or_insert, pair_table_init)
from sqltok.native.arrow_buffers cimport BinaryView, binary_view, int64_values, large_binary_array, view_end, view_start
from sqltok.normalizers.unicode_normalize cimport utf8_append, utf8_decode


cdef struct Entry:
    uint64_t count
    uint64_t key            # (left id << 32) | right id: ascending keys are ascending pairs
    int32_t pos             # index of its list of words in Trainer.pos_lists


cdef inline bint _before(const Entry& a, const Entry& b) noexcept nogil:
    """Heap order: the larger count, then the smaller pair."""
    if a.count != b.count:
        return a.count > b.count
    return a.key < b.key


cdef class Trainer:
    cdef vector[string] id_to_token
    cdef unordered_map[string, int32_t] token_ids
    cdef vector[int32_t] units          # every word's symbols, back to back; a word only shrinks
    cdef vector[int64_t] word_start
    cdef vector[int32_t] word_len
    cdef vector[int64_t] weights
    cdef PairTable table                # pair -> dense pair index
    cdef vector[uint64_t] pair_key
    cdef vector[int64_t] pair_count
    cdef vector[int32_t] pair_stamp     # the step in which the pair last gained in some word
    cdef vector[int32_t] pair_gain      # ... and the words list it gained in then
    cdef vector[int32_t] gained         # pairs that gained in this step
    cdef vector[vector[int32_t]] pos_lists
    cdef vector[int32_t] free_lists
    cdef vector[Entry] heap
    cdef string prefix
    cdef int32_t step

    def __cinit__(self):
        pair_table_init(&self.table, 1 << 16)
        self.step = 0

    def __dealloc__(self):
        pair_table_free(&self.table)

    # -- vocabulary --------------------------------------------------------------------------------
    cdef int32_t intern(self, const string& s) except -2 nogil:
        cdef unordered_map[string, int32_t].iterator it = self.token_ids.find(s)
        if it != self.token_ids.end():
            return deref(it).second
        cdef int32_t tid = <int32_t>self.id_to_token.size()
        self.id_to_token.push_back(s)
        self.token_ids[s] = tid
        return tid

    cdef int32_t lookup(self, const string& s) noexcept nogil:
        cdef unordered_map[string, int32_t].iterator it = self.token_ids.find(s)
        return deref(it).second if it != self.token_ids.end() else -1

    # -- words lists -------------------------------------------------------------------------------
    cdef int32_t new_list(self) except -1 nogil:
        cdef int32_t k
        if self.free_lists.size():
            k = self.free_lists.back()
            self.free_lists.pop_back()
            return k
        self.pos_lists.push_back(vector[int32_t]())
        return <int32_t>self.pos_lists.size() - 1

    cdef void free_list(self, int32_t k) noexcept nogil:
        self.pos_lists[k].clear()
        self.pos_lists[k].shrink_to_fit()
        self.free_lists.push_back(k)

    # -- pair counts -------------------------------------------------------------------------------
    cdef int32_t pair_index(self, uint64_t key) except -1 nogil:
        cdef int32_t p = pair_table_get_or_insert(&self.table, key, <int32_t>self.pair_key.size())
        if p < 0:
            p = <int32_t>self.pair_key.size()
            self.pair_key.push_back(key)
            self.pair_count.push_back(0)
            self.pair_stamp.push_back(-1)
            self.pair_gain.push_back(-1)
        return p

    cdef int change(self, int32_t left, int32_t right, int delta, int32_t word) except -1 nogil:
        """Add delta times the word's weight to the pair's count; a gain remembers the word."""
        cdef int32_t p = self.pair_index(pack_pair(left, right))
        cdef vector[int32_t]* words
        self.pair_count[p] += delta * self.weights[word]
        if delta > 0:
            if self.pair_stamp[p] != self.step:
                self.pair_stamp[p] = self.step
                self.pair_gain[p] = self.new_list()
                self.gained.push_back(p)
            words = &self.pos_lists[self.pair_gain[p]]
            if words.size() == 0 or words.back() != word:
                words.push_back(word)
        return 0

    cdef int push_gained(self) except -1 nogil:
        """Push every pair that gained in this step with its current count (HF drops those at 0)."""
        cdef int32_t p
        cdef Entry e
        for p in self.gained:
            if self.pair_count[p] > 0:
                e.count = <uint64_t>self.pair_count[p]
                e.key = self.pair_key[p]
                e.pos = self.pair_gain[p]
                self.push(e)
            else:
                self.free_list(self.pair_gain[p])
        self.gained.clear()
        self.step += 1
        return 0

    # -- heap --------------------------------------------------------------------------------------
    cdef int push(self, Entry e) except -1 nogil:
        self.heap.push_back(e)
        cdef size_t i = self.heap.size() - 1, parent
        while i > 0:
            parent = (i - 1) >> 1
            if not _before(self.heap[i], self.heap[parent]):
                break
            self.heap[i], self.heap[parent] = self.heap[parent], self.heap[i]
            i = parent
        return 0

    cdef Entry pop(self) noexcept nogil:
        cdef Entry top = self.heap[0]
        cdef size_t n = self.heap.size() - 1, i = 0, c
        self.heap[0] = self.heap[n]
        self.heap.pop_back()
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and _before(self.heap[c + 1], self.heap[c]):
                c += 1
            if not _before(self.heap[c], self.heap[i]):
                break
            self.heap[i], self.heap[c] = self.heap[c], self.heap[i]
            i = c
        return top

    # -- merging -----------------------------------------------------------------------------------
    cdef int merge_word(self, int32_t word, int32_t c1, int32_t c2, int32_t new_id) except -1 nogil:
        """HF's `Word::merge`: replace (c1, c2) left to right without overlap, reporting each change."""
        cdef int32_t* s = &self.units[self.word_start[word]]
        cdef int32_t n = self.word_len[word], r = 0, w = 0
        while r < n:
            if s[r] == c1 and r + 1 < n and s[r + 1] == c2:
                if w > 0:
                    self.change(s[w - 1], c1, -1, word)
                    self.change(s[w - 1], new_id, 1, word)
                if r + 2 < n:
                    self.change(c2, s[r + 2], -1, word)
                    self.change(new_id, s[r + 2], 1, word)
                s[w] = new_id
                w += 1
                r += 2
            else:
                s[w] = s[r]
                w += 1
                r += 1
        self.word_len[word] = w
        return 0

    cdef string merged(self, int32_t left, int32_t right) noexcept nogil:
        cdef string b = self.id_to_token[right]
        if b.size() >= self.prefix.size() and b.compare(0, self.prefix.size(), self.prefix) == 0:
            b = b.substr(self.prefix.size())
        return self.id_to_token[left] + b


cdef int _alphabet(Trainer t, const BinaryView& v, const int64_t* cnt, list initial, int64_t limit) except -1:
    """Stage 2: the kept characters, in code point order, after the special tokens."""
    cdef unordered_map[uint32_t, uint64_t] freq
    cdef int64_t i, j, end
    cdef uint32_t cp
    with nogil:
        for i in range(v.length):
            j = view_start(v, i)
            end = view_end(v, i)
            while j < end:
                j += utf8_decode(v.values + j, end - j, &cp)
                freq[cp] += <uint64_t>cnt[i]
    for ch in initial:
        freq[<uint32_t>ord(ch)] = 0xFFFFFFFFFFFFFFFFULL
    cdef vector[pair[uint64_t, int64_t]] kept       # (count, -code point): the first ones go
    cdef pair[uint32_t, uint64_t] item
    for item in freq:
        kept.push_back(pair[uint64_t, int64_t](item.second, -<int64_t>item.first))
    cdef size_t drop = 0
    if limit >= 0 and kept.size() > <size_t>limit:
        drop = kept.size() - <size_t>limit
        sort(kept.begin(), kept.end())
    cdef vector[int64_t] cps
    for j in range(<int64_t>drop, <int64_t>kept.size()):
        cps.push_back(-kept[j].second)
    sort(cps.begin(), cps.end())
    cdef string s
    for j in range(<int64_t>cps.size()):
        s.clear()
        utf8_append(s, <uint32_t>cps[j])
        t.intern(s)
    return 0


cdef int _tokenize_words(Trainer t, const BinaryView& v, const int64_t* cnt) except -1 nogil:
    """Stage 3: each word (in byte order) as the ids of its characters."""
    cdef unordered_map[uint32_t, pair[int32_t, int32_t]] ids     # char -> (its id or -1, prefixed id)
    cdef unordered_map[uint32_t, pair[int32_t, int32_t]].iterator it
    cdef pair[int32_t, int32_t] known
    cdef int64_t i, j, end, a
    cdef int ln
    cdef uint32_t cp
    cdef string s
    cdef int32_t n
    for i in range(v.length):
        j = view_start(v, i)
        end = view_end(v, i)
        a = j
        t.word_start.push_back(<int64_t>t.units.size())
        t.weights.push_back(cnt[i])
        n = 0
        while j < end:
            ln = utf8_decode(v.values + j, end - j, &cp)
            it = ids.find(cp)
            if it == ids.end():
                s.assign(<const char*>v.values + j, ln)
                ids[cp] = pair[int32_t, int32_t](t.lookup(s), -1)
                it = ids.find(cp)
            known = deref(it).second
            if known.first >= 0:
                if j == a:
                    t.units.push_back(known.first)
                else:
                    if known.second < 0:
                        s.assign(<const char*>v.values + j, ln)
                        known.second = t.intern(t.prefix + s)
                        ids[cp] = known
                    t.units.push_back(known.second)
                n += 1
            j += ln
        t.word_len.push_back(n)
    return 0


cdef int _count_pairs(Trainer t) except -1 nogil:
    """Stage 4: every adjacent pair of every word, and the heap."""
    cdef int32_t w, k
    cdef int64_t s
    for w in range(<int32_t>t.word_len.size()):
        s = t.word_start[w]
        for k in range(t.word_len[w] - 1):
            t.change(t.units[s + k], t.units[s + k + 1], 1, w)
    t.push_gained()
    return 0


def train_wordpiece(words, counts, int64_t vocab_size, *, int64_t min_frequency=0, int64_t limit_alphabet=-1,
                    list initial_alphabet=[], list special_tokens=[], str prefix="##",
                    list continuing_order=None, progress=None, int progress_every=256) -> dict:
    """The vocabulary HF's WordPieceTrainer learns from unique `words` (a string array in UTF-8 byte
    order) with int64 `counts`: `tokens` (large_binary, by id) and the number of `merges` done.
    `limit_alphabet` < 0: no limit. `continuing_order`: characters whose prefixed tokens take their
    ids first, in this order (replaying the ids one HF run gave them; the others follow as the words
    bring them). `progress(merges_done, vocab_size_now)` every `progress_every` merges."""
    cdef Trainer t = Trainer()
    cdef list keep = []
    cdef BinaryView v = binary_view(words, keep)
    if len(counts) != v.length:
        raise ValueError("words and counts differ in length")
    if words.null_count:
        raise ValueError("words must not be NULL")
    cdef const int64_t* cnt = int64_values(counts, keep)
    cdef int64_t i, a, b, la, lb, bad = -1
    cdef int c
    with nogil:
        for i in range(1, v.length):
            a, b = view_start(v, i - 1), view_start(v, i)
            la, lb = b - a, view_end(v, i) - b
            c = memcmp(v.values + a, v.values + b, la if la < lb else lb)
            if c > 0 or (c == 0 and la >= lb):
                bad = i
                break
    if bad >= 0:
        raise ValueError(f"words must be unique and in byte order; {words[bad].as_py()!r} is not")
    for ch in initial_alphabet:
        if not isinstance(ch, str) or len(ch) != 1:
            raise ValueError(f"initial_alphabet holds single characters, not {ch!r}")
    t.prefix = prefix.encode()
    for tok in special_tokens:
        t.intern(tok.encode())
    _alphabet(t, v, cnt, initial_alphabet, limit_alphabet)
    for ch in continuing_order or ():
        if t.lookup(ch.encode()) >= 0:
            t.intern(t.prefix + ch.encode())
    cdef Entry top
    cdef int32_t left, right, new_id, w
    cdef int64_t merges = 0
    cdef size_t k
    with nogil:
        _tokenize_words(t, v, cnt)
        _count_pairs(t)
        while <int64_t>t.id_to_token.size() < vocab_size and t.heap.size():
            top = t.pop()
            i = t.pair_index(top.key)
            if top.count != <uint64_t>t.pair_count[i]:
                top.count = <uint64_t>t.pair_count[i]
                t.push(top)
                continue
            if top.count < 1 or <uint64_t>min_frequency > top.count:
                break
            left = <int32_t>(top.key >> 32)
            right = <int32_t>(top.key & 0xFFFFFFFFULL)
            new_id = t.intern(t.merged(left, right))
            merges += 1
            for k in range(t.pos_lists[top.pos].size()):
                w = t.pos_lists[top.pos][k]
                t.merge_word(w, left, right, new_id)
            t.free_list(top.pos)
            t.push_gained()
            if merges % progress_every == 0:
                with gil:
                    PyErr_CheckSignals()
                    if progress is not None:
                        progress(merges, t.id_to_token.size())
    if progress is not None:
        progress(merges, t.id_to_token.size())
    return {"tokens": large_binary_array(t.id_to_token), "merges": merges}
