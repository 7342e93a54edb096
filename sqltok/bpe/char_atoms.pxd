# cython: language_level=3
"""Characters formed before merging ("atoms"): a first-seen pretoken of Chinese, Japanese, Korean,
Thai or Hindi spends most of its merges joining the two or three bytes of each character. A token
that spells one character of two or three bytes can start out whole (the technique fastokens 0.3
calls atoms, written here from its description) when

1. its bytes alone merge into it (it is the result of one of the encoder's final pairs),
2. every merge that takes it as an operand ranks after the merge that forms it (checked once, for
   every merge: else the encoder builds no atoms), and
3. at this occurrence, no token that merging can form covers part of it and crosses its edge: a
   "fragment" (a token that ends inside a character, or starts with continuation bytes) whose
   bytes are the text's around that edge.

Then no merge crosses its edges before it is whole (the product would be such a fragment), so its
inner merges commute with all others, and none that takes it as an operand could have come
earlier (by 2): the merges, hence the ids, are the same. Four-byte characters stay bytes."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp
from libcpp.string cimport string
from libcpp.vector cimport vector

from sqltok.bpe.merge_scan cimport NO_RANK, SHORT_PIECE, ByteMerges
from sqltok.bpe.merge_table cimport MergeTable, merge_table_rank, merge_table_start
from sqltok.native.portable cimport prefetch


cdef enum:
    PREFIX_KEYS = 256 + 2048  # what a fragment ends with: a lead byte, or a 3-byte lead and one more byte
    SUFFIX_KEYS = 64 + 4096   # what one starts with: one or two continuation bytes
    TOO_MANY = -2             # load_symbols: more than SHORT_PIECE symbols
    BIGRAM_BITS = 22          # the filter of character pairs: 512 KiB, stays in L2
    BY_BYTES = 0              # load_symbols: how a pair's rank is found
    NEVER = 1
    LOOK_UP = 2


cdef struct FragmentPart:     # the rest of a fragment beside the part of a character it covers
    int64_t at                # CharAtoms.parts_text[at:at + length]
    int32_t length


cdef cppclass CharAtoms:
    vector[int32_t] token         # code point (below 0x10000) -> the token spelling it, -1: none; empty: off
    vector[int32_t] prefix_first  # fragments ending with prefix key k: before_parts[prefix_first[k]:...[k + 1]]
    vector[FragmentPart] before_parts
    vector[int32_t] suffix_first  # the fragments starting with suffix key k: after_parts[suffix_first[k]:...]
    vector[FragmentPart] after_parts
    string parts_text
    vector[uint64_t] bigrams      # bits: pairs of characters that follow each other inside some token


cdef inline int _lead_length(uint8_t b) noexcept nogil:
    """The length of the character a byte starts: 1 (ASCII), 2-4, or 0 (a continuation byte or invalid)."""
    if b < 0x80:
        return 1
    if b < 0xC2:
        return 0
    if b < 0xE0:
        return 2
    if b < 0xF0:
        return 3
    return 4 if b < 0xF5 else 0


cdef inline int _prefix_key(const uint8_t* d, int64_t n) noexcept nogil:
    """The key of the start d[:n] of a character (a lead byte, or a 3-byte lead and one more); -1: other."""
    if n == 1:
        return d[0]
    if n == 2 and 0xE0 <= d[0] < 0xF0:
        return 256 + ((d[0] - 0xE0) << 6 | (d[1] & 0x3F))
    return -1


cdef inline int _suffix_key(const uint8_t* s, int64_t n) noexcept nogil:
    """The key of the end s[:n] of a character (one or two continuation bytes); -1: other."""
    if n == 1:
        return s[0] & 0x3F
    if n == 2:
        return 64 + ((s[0] & 0x3F) << 6 | (s[1] & 0x3F))
    return -1


cdef inline void _csr(vector[int32_t]& first, vector[FragmentPart]& parts, const vector[int32_t]& keys,
                      const vector[FragmentPart]& unsorted, int n_keys) noexcept nogil:
    """Group `unsorted` by their `keys` (counting sort)."""
    cdef size_t j
    cdef int k
    cdef vector[int32_t] at
    first.assign(n_keys + 1, 0)
    for j in range(keys.size()):
        first[keys[j] + 1] += 1
    for k in range(n_keys):
        first[k + 1] += first[k]
    at.assign(first.begin(), first.end() - 1)
    parts.resize(keys.size())
    for j in range(keys.size()):
        parts[at[keys[j]]] = unsorted[j]
        at[keys[j]] += 1


cdef inline uint64_t _bigram_bit(int64_t first, int64_t second) noexcept nogil:
    return ((<uint64_t>first << 21 | <uint64_t>second) * <uint64_t>0x9E3779B97F4A7C15ULL) >> (64 - BIGRAM_BITS)


cdef inline int64_t _code_point(const uint8_t* b, int64_t n, int64_t i, int* length) noexcept nogil:
    """The code point of the whole character at b[i] (its length in `length`); -1: none there."""
    cdef int lead = _lead_length(b[i])
    cdef int k
    cdef int64_t cp
    length[0] = 1
    if lead == 0 or i + lead > n:
        return -1
    if lead == 1:
        return b[i]
    cp = b[i] & (0x7F >> lead)
    for k in range(1, lead):
        if (b[i + k] & 0xC0) != 0x80:
            return -1
        cp = cp << 6 | (b[i + k] & 0x3F)
    length[0] = lead
    return cp


cdef inline void _add_bigrams(CharAtoms& a, const uint8_t* b, int64_t n) noexcept nogil:
    """Mark each pair of whole characters that follow each other in the token b[:n]."""
    cdef int64_t i = 0, cp, prev = -1
    cdef int length
    cdef uint64_t bit
    while i < n:
        cp = _code_point(b, n, i, &length)
        if cp >= 0 and prev >= 0:
            bit = _bigram_bit(prev, cp)
            a.bigrams[bit >> 6] |= <uint64_t>1 << (bit & 63)
        prev = cp
        i += length


cdef inline bint may_merge(const CharAtoms* a, int64_t first, int64_t second) noexcept nogil:
    """False when no token holds the character `first` followed by `second` (then they never merge)."""
    cdef uint64_t bit = _bigram_bit(first, second)
    return (a.bigrams[bit >> 6] >> (bit & 63)) & 1


cdef inline void char_atoms_build(CharAtoms& a, const uint8_t* vocab, const int64_t* starts, const int64_t* ends,
                                  const vector[int32_t]& pairs) noexcept nogil:
    """The atoms and fragments of the tokens that merging forms: the results of the final `pairs`
    (left, right, rank, result, four int32 each); none at all unless every merge ranks after the
    merges that form its operands (condition 2)."""
    cdef size_t k
    cdef int32_t t
    cdef int64_t s, n, j, i, cp
    cdef int key, length
    cdef const uint8_t* b
    cdef FragmentPart part
    cdef vector[int32_t] before_keys, after_keys
    cdef vector[FragmentPart] before, after
    cdef vector[int32_t] formed   # the rank of the merge that forms each token, -1: none
    k = 0
    while k < pairs.size():
        t = pairs[k] if pairs[k] > pairs[k + 1] else pairs[k + 1]
        t = t if t > pairs[k + 3] else pairs[k + 3]
        if <size_t>t >= formed.size():  # (every token the pairs name has a place)
            formed.resize(t + 1, -1)
        formed[pairs[k + 3]] = pairs[k + 2]
        k += 4
    k = 0
    while k < pairs.size():
        if formed[pairs[k]] >= pairs[k + 2] or formed[pairs[k + 1]] >= pairs[k + 2]:
            return
        k += 4
    a.token.assign(0x10000, -1)
    a.bigrams.assign((<size_t>1 << BIGRAM_BITS) // 64, 0)
    k = 0
    while k < pairs.size():
        t = pairs[k + 3]
        k += 4
        s = starts[t]
        n = ends[t] - s
        b = vocab + s
        _add_bigrams(a, b, n)
        cp = _code_point(b, n, 0, &length)
        if (length == 2 or (length == 3 and cp >= 0x800)) and n == length:
            a.token[cp] = t
        j = n - 1  # a fragment that ends inside a character: its last lead byte starts too few bytes
        while j > 0 and n - j <= 3 and (b[j] & 0xC0) == 0x80:
            j -= 1
        if j > 0 and _lead_length(b[j]) > n - j:
            key = _prefix_key(b + j, n - j)
            if key >= 0:
                part.at = <int64_t>a.parts_text.size()
                part.length = <int32_t>j
                a.parts_text.append(<const char*>b, j)
                before_keys.push_back(key)
                before.push_back(part)
        i = 0  # a fragment that starts with continuation bytes, then goes on
        while i < n and i < 3 and (b[i] & 0xC0) == 0x80:
            i += 1
        if 0 < i < n:
            key = _suffix_key(b, i)
            if key >= 0:
                part.at = <int64_t>a.parts_text.size()
                part.length = <int32_t>(n - i)
                a.parts_text.append(<const char*>(b + i), n - i)
                after_keys.push_back(key)
                after.push_back(part)
    _csr(a.prefix_first, a.before_parts, before_keys, before, PREFIX_KEYS)
    _csr(a.suffix_first, a.after_parts, after_keys, after, SUFFIX_KEYS)


cdef inline bint _before_matches(const CharAtoms* a, int key, const uint8_t* p, int64_t i) noexcept nogil:
    """Whether a fragment ending with prefix key `key` has its other part right before p[i]."""
    cdef int32_t j
    cdef const FragmentPart* f
    for j in range(a.prefix_first[key], a.prefix_first[key + 1]):
        f = &a.before_parts[j]
        if f.length <= i and <uint8_t>a.parts_text[f.at + f.length - 1] == p[i - 1] and \
                memcmp(p + i - f.length, a.parts_text.data() + f.at, f.length) == 0:
            return True
    return False


cdef inline bint _after_matches(const CharAtoms* a, int key, const uint8_t* p, int64_t i, int64_t n) noexcept nogil:
    """Whether a fragment starting with suffix key `key` has its other part at p[i:n]."""
    cdef int32_t j
    cdef const FragmentPart* f
    for j in range(a.suffix_first[key], a.suffix_first[key + 1]):
        f = &a.after_parts[j]
        if i + f.length <= n and <uint8_t>a.parts_text[f.at] == p[i] and \
                memcmp(p + i, a.parts_text.data() + f.at, f.length) == 0:
            return True
    return False


cdef inline int32_t _atom_at(const CharAtoms* a, const uint8_t* p, int64_t n, int64_t i,
                             int32_t* char_out) noexcept nogil:
    """The atom of the character of two or three bytes at p[i] when it may start out whole here
    (its code point to `char_out`); -1: not."""
    cdef int length
    cdef int64_t cp = _code_point(p, n, i, &length)
    cdef int32_t t
    if cp < 0 or (length == 3 and cp < 0x800) or (i + length < n and (p[i + length] & 0xC0) == 0x80):
        return -1  # (not a whole character, an overlong one, or one followed by a stray continuation byte)
    t = a.token[cp]
    if t < 0:
        return -1
    if _before_matches(a, p[i], p, i) or _after_matches(a, p[i + length - 1] & 0x3F, p, i + length, n):
        return -1
    if length == 3 and (_before_matches(a, 256 + ((p[i] - 0xE0) << 6 | (p[i + 1] & 0x3F)), p, i) or
                      _after_matches(a, 64 + ((p[i + 1] & 0x3F) << 6 | (p[i + 2] & 0x3F)), p, i + length, n)):
        return -1
    char_out[0] = <int32_t>cp
    return t


cdef inline int64_t load_symbols(const ByteMerges* b, const CharAtoms* a, const MergeTable* table, const uint8_t* p,
                                 int64_t n, int64_t start, bint cut, int64_t* stop, int32_t* sym, int32_t* ranks,
                                 int32_t* results) noexcept nogil:
    """`load_bytes` with atoms, from byte `start` of the pretoken p[:n]: the tokens merging starts
    from (an atom for each character that may start out whole, else a token per byte) and the rank
    and result of each adjacent pair, at most SHORT_PIECE of them. Their number; -1 when a byte has
    no token, TOO_MANY when they do not fit. Where `stop` ends them: p[:n]'s end, or with `cut` the
    first place between two whole characters (atoms or ASCII) that no token holds side by side. No
    merge ever crosses such a place (it would form a token holding both, or one covering part of
    an atom across its edge), so the parts on either side merge apart. A pair with an atom in it
    is looked up in the merge table: all their slots are requested first, so that the misses
    overlap."""
    cdef int64_t i = start, m = 0, k, width
    cdef int32_t t
    cdef int lead
    cdef int32_t byte_at[SHORT_PIECE]  # the byte of a one-byte token, -1 for an atom
    cdef int32_t chars[SHORT_PIECE]    # the character a token is (an atom or ASCII), -1: a byte of one
    cdef uint8_t how[SHORT_PIECE]
    while i < n:
        if m == SHORT_PIECE:
            return TOO_MANY
        lead = _lead_length(p[i])
        t = _atom_at(a, p, n, i, &chars[m]) if lead == 2 or lead == 3 else -1
        if t >= 0:
            sym[m] = t
            byte_at[m] = -1
            width = lead
        else:
            sym[m] = b.ids[p[i]]
            if sym[m] < 0:
                return -1
            byte_at[m] = p[i]
            chars[m] = p[i] if p[i] < 0x80 else -1
            width = 1
        if cut and m > 0 and chars[m - 1] >= 0 and chars[m] >= 0 and not may_merge(a, chars[m - 1], chars[m]):
            break
        i += width
        m += 1
    stop[0] = i
    for k in range(m - 1):  # how each pair's rank is found: the byte-pair table, none, or a lookup
        if byte_at[k] >= 0 and byte_at[k + 1] >= 0:
            how[k] = BY_BYTES
        elif chars[k] >= 0 and chars[k + 1] >= 0 and not may_merge(a, chars[k], chars[k + 1]):
            how[k] = NEVER
        else:
            how[k] = LOOK_UP
            prefetch(&table.slots[merge_table_start(table, sym[k], sym[k + 1])])
    for k in range(m - 1):
        if how[k] == BY_BYTES:
            ranks[k] = b.pairs[(<size_t>byte_at[k] << 8) | <size_t>byte_at[k + 1]].rank
            results[k] = b.pairs[(<size_t>byte_at[k] << 8) | <size_t>byte_at[k + 1]].result
        elif how[k] == NEVER:
            ranks[k] = NO_RANK
            results[k] = 0
        else:
            ranks[k] = merge_table_rank(table, sym[k], sym[k + 1], &results[k], NO_RANK)
    return m


cdef inline bint has_atoms(const CharAtoms* a, const uint8_t* p, int64_t n) noexcept nogil:
    """Whether atoms are on and p[:n] has a byte that can start one (else `load_bytes` does the same)."""
    cdef int64_t i
    if a.token.size() == 0:
        return False
    for i in range(n):
        if 0xC2 <= p[i] < 0xF0:
            return True
    return False
