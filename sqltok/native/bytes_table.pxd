# cython: language_level=3
"""An open-addressing hash map from byte strings to int32 ids, for a fixed set of keys.

Key `id` is data[starts[id]:ends[id]] (the vocabulary's bytes). A 16-byte slot holds the key's first
11 bytes, its length and id: keys of up to 11 bytes (most pretokens) are checked within the slot,
longer ones against the vocabulary. Four slots share a cache line and the table stays small (o200k:
4 MiB).
Built once (`bytes_table_build`), then only read, from any number of threads.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

from sqltok.native.huge_pages cimport SqltokHugeAllocator
from sqltok.native.portable cimport le64

cdef struct BytesSlot:
    uint64_t head               # the key's first 8 bytes, zero-padded
    int32_t id                  # -1 marks an empty slot
    uint32_t length_tail        # see `length_tail`


cdef enum:
    SLOT_KEY_MAX = 11           # keys up to this many bytes are checked within their slot
    LONG_LENGTH = 255           # length_tail's length for keys of 255 bytes or more


cdef struct BytesTable:
    vector[BytesSlot, SqltokHugeAllocator[BytesSlot]] slots  # read at random: on huge pages
    uint64_t mask


cdef inline uint64_t _mix64(uint64_t h) noexcept nogil:
    h ^= h >> 32
    h *= <uint64_t>0xD6E8FEB86659FD93ULL
    h ^= h >> 32
    return h


cdef inline uint64_t padded_word(const uint8_t* p, int64_t r) noexcept nogil:
    """p[:r] zero-padded to a word (its first 8 bytes when r >= 8), as a copy into a zeroed word gives
    it; under 8 bytes from byte loads that overlap (a copy of variable length is a call, and reading
    its result back stalls)."""
    cdef uint64_t v
    if r >= 8:
        memcpy(&v, p, 8)
        return v
    if r <= 0:
        return 0
    if r >= 4:
        v = (<uint64_t>p[0] | <uint64_t>p[1] << 8 | <uint64_t>p[2] << 16 | <uint64_t>p[3] << 24 |
             (<uint64_t>p[r - 4] | <uint64_t>p[r - 3] << 8 | <uint64_t>p[r - 2] << 16 |
              <uint64_t>p[r - 1] << 24) << (8 * (r - 4)))
    else:
        v = <uint64_t>p[0] | <uint64_t>p[r >> 1] << (8 * (r >> 1)) | <uint64_t>p[r - 1] << (8 * (r - 1))
    return le64(v)


cdef inline uint64_t bytes_hash(const uint8_t* p, int64_t n) noexcept nogil:
    """A hash of p[:n] that reads 8 bytes at a time (a last part shorter than 8 as the 8 bytes that
    end the key, shifted; a key shorter than 8 by `padded_word`); never 0."""
    cdef uint64_t h = <uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t w
    cdef int64_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = _mix64(h ^ w)
        i += 8
    if i < n:
        if n >= 8:
            memcpy(&w, p + n - 8, 8)
            w = le64(le64(w) >> (8 * (8 - (n - i))))
        else:
            w = padded_word(p, n)
        h = _mix64(h ^ w)
    return h if h != 0 else 1


cdef inline uint64_t key_head(const uint8_t* p, int64_t n) noexcept nogil:
    """The first 8 bytes of p[:n], zero-padded."""
    return padded_word(p, n)


cdef extern from *:
    """
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define SQLTOK_PREFIX_MASK(r) (~0ULL << (8 * (8 - (r))))
    #else
    #define SQLTOK_PREFIX_MASK(r) (~0ULL >> (8 * (8 - (r))))
    #endif
    /* PREFIX_MASK[r]: a word whose first r bytes in memory are set (r = 0..8). */
    static const unsigned long long SQLTOK_PREFIX_MASKS[9] = {0ULL,
        SQLTOK_PREFIX_MASK(1), SQLTOK_PREFIX_MASK(2), SQLTOK_PREFIX_MASK(3), SQLTOK_PREFIX_MASK(4),
        SQLTOK_PREFIX_MASK(5), SQLTOK_PREFIX_MASK(6), SQLTOK_PREFIX_MASK(7), ~0ULL};
    """
    const uint64_t* PREFIX_MASKS "SQLTOK_PREFIX_MASKS"


cdef inline uint32_t first3(uint64_t w) noexcept nogil:
    """A word's first 3 bytes in memory."""
    return <uint32_t>(le64(w) & 0xFFFFFF)


cdef inline uint32_t length_tail(int64_t n, uint64_t w1) noexcept nogil:
    """A key's length (LONG_LENGTH from 255 bytes on) and its bytes 8..10 (zero-padded), from the
    key's second word w1 (zero-padded)."""
    return <uint32_t>(n if n < LONG_LENGTH else LONG_LENGTH) | (first3(w1) << 8)


cdef inline uint64_t second_word(const uint8_t* p, int64_t n) noexcept nogil:
    """Bytes 8..15 of p[:n], zero-padded."""
    return padded_word(p + 8, n - 8)


cdef enum:
    KEY_WORDS_MAX = 24    # keys up to this many bytes can be held as three words


cdef inline uint64_t _word_mask(int64_t n, int64_t k) noexcept nogil:
    """The mask of word k (bytes 8k..8k+7) of an n-byte key."""
    cdef int64_t r = n - 8 * k
    return PREFIX_MASKS[0 if r < 0 else (8 if r > 8 else r)]


cdef inline uint64_t key_words(const uint8_t* p, int64_t n, const uint8_t* limit, uint64_t* w) noexcept nogil:
    """p[:n] (1 <= n <= KEY_WORDS_MAX) as three zero-padded words w[0..2]; returns its `bytes_hash`.
    The words are read with three 8-byte loads when the 24 bytes from p lie before `limit` (no call to
    a variable-length copy), and masked and hashed in registers before they are stored."""
    cdef uint64_t a, b, c, h
    if p + KEY_WORDS_MAX <= limit:
        memcpy(&a, p, 8)
        memcpy(&b, p + 8, 8)
        memcpy(&c, p + 16, 8)
        a &= _word_mask(n, 0)
        b &= _word_mask(n, 1)
        c &= _word_mask(n, 2)
    else:
        w[0] = 0
        w[1] = 0
        w[2] = 0
        memcpy(w, p, n)
        a = w[0]
        b = w[1]
        c = w[2]
    w[0] = a
    w[1] = b
    w[2] = c
    return words_hash(a, b, c, n)


cdef inline uint64_t piece_hash(const uint8_t* p, int64_t n, const uint8_t* limit) noexcept nogil:
    """The `bytes_hash` of p[:n] (n >= 1), read within `limit`: a key of up to KEY_WORDS_MAX bytes as
    words (`key_words`), with no copy of variable length whose read-back stalls."""
    cdef uint64_t w[3]
    if n <= KEY_WORDS_MAX:
        return key_words(p, n, limit, w)
    return bytes_hash(p, n)


cdef inline void piece_hashes(const uint8_t* p, int64_t n, const vector[int64_t]& ends,
                              vector[uint64_t]& hashes) noexcept nogil:
    """The `piece_hash` of each piece of p[:n] that `ends` (offsets from p, in order) cuts it into."""
    cdef size_t k
    cdef int64_t start = 0
    hashes.resize(ends.size())
    for k in range(ends.size()):
        hashes[k] = piece_hash(p + start, ends[k] - start, p + n)
        start = ends[k]


cdef inline uint64_t words_hash(uint64_t a, uint64_t b, uint64_t c, int64_t n) noexcept nogil:
    """The `bytes_hash` of an n-byte key (1 <= n <= KEY_WORDS_MAX) held as three zero-padded words."""
    cdef uint64_t h = _mix64((<uint64_t>n * <uint64_t>0x9E3779B97F4A7C15ULL) ^ a)
    if n > 8:
        h = _mix64(h ^ b)
        if n > 16:
            h = _mix64(h ^ c)
    return h if h != 0 else 1


cdef inline int32_t bytes_table_get_words(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                          const uint64_t* w, int64_t n, uint64_t h) noexcept nogil:
    """`bytes_table_get_hashed` for a key held in words (n <= KEY_WORDS_MAX); `data` must be readable
    16 bytes past its last key (keys over 8 bytes are compared as words)."""
    if t.slots.size() == 0:
        return -1
    cdef uint64_t j = h & t.mask, v1, v2
    cdef uint32_t lt = length_tail(n, w[1])
    cdef const BytesSlot* s
    while True:
        s = &t.slots[j]
        if s.id < 0:
            return -1
        if s.length_tail == lt and s.head == w[0]:
            if n <= SLOT_KEY_MAX:
                return s.id
            memcpy(&v1, data + starts[s.id] + 8, 8)
            memcpy(&v2, data + starts[s.id] + 16, 8)
            if (v1 & _word_mask(n, 1)) == w[1] and (v2 & _word_mask(n, 2)) == w[2]:
                return s.id
        j = (j + 1) & t.mask


cdef inline bint _slot_matches(const BytesSlot* s, const uint8_t* data, const int64_t* starts,
                               const int64_t* ends, const uint8_t* p, int64_t n, uint64_t head,
                               uint32_t lt) noexcept nogil:
    if s.length_tail != lt or s.head != head:
        return False
    if n >= LONG_LENGTH and ends[s.id] - starts[s.id] != n:
        return False
    return n <= SLOT_KEY_MAX or memcmp(data + starts[s.id] + SLOT_KEY_MAX, p + SLOT_KEY_MAX,
                                       n - SLOT_KEY_MAX) == 0


cdef inline void bytes_table_build(BytesTable* t, const uint8_t* data, const int64_t* starts,
                                   const int64_t* ends, const vector[int32_t]& keys) noexcept nogil:
    """Index ids `keys`; the first id of a duplicated byte string wins."""
    cdef uint64_t cap = 16
    cdef size_t k
    cdef int32_t tid
    cdef int64_t n
    cdef uint64_t j, head
    cdef uint32_t lt
    cdef const uint8_t* key
    cdef BytesSlot empty
    empty.head = 0
    empty.id = -1
    empty.length_tail = 0
    while cap * 3 < keys.size() * 4 + 4:      # load factor at most 3/4
        cap <<= 1
    t.slots.assign(cap, empty)
    t.mask = cap - 1
    for k in range(keys.size()):
        tid = keys[k]
        key = data + starts[tid]
        n = ends[tid] - starts[tid]
        head = key_head(key, n)
        lt = length_tail(n, second_word(key, n))
        j = bytes_hash(key, n) & t.mask
        while t.slots[j].id >= 0:
            if _slot_matches(&t.slots[j], data, starts, ends, key, n, head, lt):
                break
            j = (j + 1) & t.mask
        if t.slots[j].id < 0:
            t.slots[j].head = head
            t.slots[j].id = tid
            t.slots[j].length_tail = lt


cdef inline int32_t bytes_table_get(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                    const int64_t* ends, const uint8_t* p, int64_t n) noexcept nogil:
    """The id whose bytes equal p[:n], or -1."""
    return bytes_table_get_hashed(t, data, starts, ends, p, n, bytes_hash(p, n))


cdef inline int32_t bytes_table_get_hashed(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                           const int64_t* ends, const uint8_t* p, int64_t n,
                                           uint64_t h) noexcept nogil:
    """`bytes_table_get` with the key's `bytes_hash` already known."""
    return bytes_table_get_head(t, data, starts, ends, p, n, h, key_head(p, n), second_word(p, n))


cdef inline int32_t bytes_table_get_head(const BytesTable* t, const uint8_t* data, const int64_t* starts,
                                         const int64_t* ends, const uint8_t* p, int64_t n, uint64_t h,
                                         uint64_t head, uint64_t w1) noexcept nogil:
    """`bytes_table_get_hashed` with the key's first two words (`key_head`, `second_word`) already
    known too (callers that hold them in registers avoid short copies whose read-back stalls)."""
    if t.slots.size() == 0:
        return -1
    cdef uint64_t j = h & t.mask
    cdef uint32_t lt = length_tail(n, w1)
    cdef const BytesSlot* s
    while True:
        s = &t.slots[j]
        if s.id < 0:
            return -1
        if _slot_matches(s, data, starts, ends, p, n, head, lt):
            return s.id
        j = (j + 1) & t.mask
