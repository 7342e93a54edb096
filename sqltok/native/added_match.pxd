# cython: language_level=3
"""HF `tokenizers`' added-token matching (`AddedVocabulary::extract_and_normalize`) over UTF-8 bytes,
without the GIL, for any encoder.

Two passes, as HF: the tokens matched on the raw text (`normalized: false`) split the whole text
first; then the tokens matched on normalized text (`normalized: true`, their content normalized by
the caller) split each stretch of text between those. In one pass over a stretch (HF `find_matches`):
the leftmost match, the longest at that place (aho-corasick's LeftmostLongest), and the next match
searched from its end; a `single_word` match with a word character (`\\w`) right before or after it in
the stretch is dropped (its text stays text, and the search goes on after it); `lstrip` takes the
white space (`\\s`) before the match into the token, back to the end of the previous match at most,
`rstrip` the white space after it. What is left between the tokens is text for the model.
"""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memchr, memcmp
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.pretokenizer.matcher cimport next_char


cdef struct AddedToken:
    int32_t id
    int64_t start               # its content is AddedTokens.text[start:start + length]
    int64_t length
    int32_t special             # index of its flag in an `allowed` mask; -1: always matched
    bint lstrip
    bint rstrip
    bint single_word
    bint normalized


cdef struct AddedTokens:
    vector[AddedToken] tokens
    string text
    uint8_t first[2][256]       # per pass (0: raw, 1: normalized), the first bytes of its tokens
    int16_t only[2]             # per pass, the first byte of all its tokens when they share one, else -1
    bint has[2]                 # per pass, whether it has any token
    vector[uint32_t] word       # \w as sorted [first, last] code point ranges, flattened
    vector[uint32_t] space      # \s likewise


cdef struct AddedSplit:
    int64_t start               # byte offsets into the text
    int64_t end
    int32_t id                  # the added token, or -1 for text the model encodes


cdef inline void added_tokens_init(AddedTokens& a) noexcept:
    cdef int k, b
    a.tokens.clear()
    a.text.clear()
    for k in range(2):
        a.has[k] = False
        a.only[k] = -1
        for b in range(256):
            a.first[k][b] = 0


cdef inline void added_tokens_add(AddedTokens& a, int32_t tid, const string& content, int32_t special,
                                  bint lstrip, bint rstrip, bint single_word, bint normalized) noexcept:
    """Add one token (`content` non-empty: the normalized content for a `normalized` token)."""
    cdef AddedToken t
    t.id, t.start, t.length, t.special = tid, <int64_t>a.text.size(), <int64_t>content.size(), special
    t.lstrip, t.rstrip, t.single_word, t.normalized = lstrip, rstrip, single_word, normalized
    a.text.append(content)
    a.tokens.push_back(t)
    a.first[normalized][<uint8_t>content[0]] = 1
    if not a.has[normalized]:
        a.only[normalized] = <uint8_t>content[0]
    elif a.only[normalized] != <uint8_t>content[0]:
        a.only[normalized] = -1
    a.has[normalized] = True


cdef inline bint in_ranges(const vector[uint32_t]& ranges, uint32_t cp) noexcept nogil:
    """Whether `cp` is in one of the [first, last] pairs of `ranges` (sorted)."""
    cdef size_t lo = 0, hi = ranges.size() // 2, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if ranges[2 * mid + 1] < cp:
            lo = mid + 1
        elif ranges[2 * mid] > cp:
            hi = mid
        else:
            return True
    return False


cdef inline int64_t char_before(const uint8_t* p, int64_t i) noexcept nogil:
    """Where the UTF-8 character that ends at p[i] (i > 0) starts."""
    i -= 1
    while i > 0 and (p[i] & 0xC0) == 0x80:
        i -= 1
    return i


cdef inline bint word_before(const AddedTokens& a, const uint8_t* p, int64_t i) noexcept nogil:
    """Whether the character before p[i] (i > 0) is a word character."""
    cdef uint32_t cp
    next_char(p, char_before(p, i), i, &cp)
    return in_ranges(a.word, cp)


cdef inline bint word_at(const AddedTokens& a, const uint8_t* p, int64_t n, int64_t i) noexcept nogil:
    """Whether the character at p[i] (i < n) is a word character."""
    cdef uint32_t cp
    next_char(p, i, n, &cp)
    return in_ranges(a.word, cp)


cdef inline int32_t longest_at(const AddedTokens& a, int pass_, const uint8_t* p, int64_t n,
                               const uint8_t* allowed) noexcept nogil:
    """The index in a.tokens of the longest token of the pass that p[:n] starts with, or -1."""
    cdef int32_t best = -1
    cdef int64_t best_len = 0
    cdef const uint8_t* v = <const uint8_t*>a.text.data()
    cdef size_t k
    for k in range(a.tokens.size()):
        if a.tokens[k].normalized != pass_:
            continue
        if a.tokens[k].special >= 0 and (allowed == NULL or not allowed[a.tokens[k].special]):
            continue
        if best_len < a.tokens[k].length <= n and memcmp(v + a.tokens[k].start, p, a.tokens[k].length) == 0:
            best, best_len = <int32_t>k, a.tokens[k].length
    return best


cdef inline void find_matches(const AddedTokens& a, int pass_, const uint8_t* p, int64_t base, int64_t n,
                              const uint8_t* allowed, vector[AddedSplit]& out) noexcept nogil:
    """The splits of the stretch p[base:base + n] by the tokens of one pass, appended to `out` (offsets
    into p); an empty stretch gives none (HF drops empty splits)."""
    cdef const uint8_t* s = p + base
    cdef int64_t i = 0, at = 0, start, stop, j
    cdef int32_t k
    cdef uint32_t cp
    cdef AddedSplit split
    cdef const uint8_t* q
    while i < n:
        k = -1
        while i < n:  # the leftmost place where a token starts
            if a.only[pass_] >= 0:  # (one first byte: memchr skips the text between)
                q = <const uint8_t*>memchr(s + i, a.only[pass_], n - i)
                if q == NULL:
                    i = n
                    break
                i = q - s
            elif not a.first[pass_][s[i]]:
                i += 1
                continue
            k = longest_at(a, pass_, s + i, n - i, allowed)
            if k >= 0:
                break
            i += 1
        if k < 0:
            break
        start, stop = i, i + a.tokens[k].length
        i = stop
        if a.tokens[k].single_word and ((start > 0 and word_before(a, s, start)) or
                                        (stop < n and word_at(a, s, n, stop))):
            continue
        if a.tokens[k].lstrip:  # the white space run before it, but none of the previous token's
            while start > at:
                j = char_before(s, start)
                next_char(s, j, start, &cp)
                if not in_ranges(a.space, cp):
                    break
                start = j
            start = max(start, at)
        if a.tokens[k].rstrip:
            while stop < n:
                j = next_char(s, stop, n, &cp)
                if not in_ranges(a.space, cp):
                    break
                stop = j
        if at < start:
            split.start, split.end, split.id = base + at, base + start, -1
            out.push_back(split)
        split.start, split.end, split.id = base + start, base + stop, a.tokens[k].id
        out.push_back(split)
        at = stop
    if at != n:
        split.start, split.end, split.id = base + at, base + n, -1
        out.push_back(split)


cdef inline void added_splits(const AddedTokens& a, const uint8_t* p, int64_t n, const uint8_t* allowed,
                              vector[AddedSplit]& out, vector[AddedSplit]& scratch) noexcept nogil:
    """The splits of p[:n] after both passes, in order, into `out` (`scratch`: the first pass's)."""
    cdef size_t k
    cdef AddedSplit split
    out.clear()
    if not a.has[1]:
        find_matches(a, 0, p, 0, n, allowed, out)
        return
    scratch.clear()
    if a.has[0]:
        find_matches(a, 0, p, 0, n, allowed, scratch)
    else:
        split.start, split.end, split.id = 0, n, -1
        scratch.push_back(split)
    for k in range(scratch.size()):
        if scratch[k].id >= 0:
            out.push_back(scratch[k])
        else:
            find_matches(a, 1, p, scratch[k].start, scratch[k].end - scratch[k].start, allowed, out)
