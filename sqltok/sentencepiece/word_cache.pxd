# cython: language_level=3
"""BPE's words seen, with their ids (`_bpe_words`): open addressing over 16-byte slots (the word's
hash, its place in one arena that holds its ids and then its bytes), looked up by the word's
`bytes_hash` without building a key, its ids read in place. It grows from a small table (short calls
stay cheap) and is emptied when it holds `max_words` words."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

from sqltok.native.portable cimport prefetch


cdef enum:
    WORD_CACHE_MIN_SLOTS = 1024


cdef struct WordSlot:
    uint64_t hash               # 0: empty (bytes_hash is never 0)
    uint32_t at                 # arena[at:at + n_ids]: the ids; then the bytes
    uint16_t length             # the word's bytes
    uint16_t n_ids


cdef struct WordCache:         # empty while `slots` is: mask and count are set by the first put
    vector[WordSlot] slots      # at most half full
    vector[int32_t] arena
    uint64_t mask
    size_t count


cdef inline const int32_t* word_cache_get(const WordCache* c, const uint8_t* p, int64_t n, uint64_t h,
                                          int64_t* n_ids) noexcept nogil:
    """The ids of word p[:n] (its bytes_hash h) and their number in n_ids; NULL when not held."""
    if c.slots.size() == 0:
        return NULL
    cdef uint64_t j = h & c.mask
    cdef const WordSlot* s
    while True:
        s = &c.slots[j]
        if s.hash == 0:
            return NULL
        if s.hash == h and s.length == n and memcmp(c.arena.data() + s.at + s.n_ids, p, n) == 0:
            n_ids[0] = s.n_ids
            return c.arena.data() + s.at
        j = (j + 1) & c.mask


cdef inline void word_cache_prefetch(const WordCache* c, uint64_t h) noexcept nogil:
    """Start loading the slot where the lookup of a word of hash h begins."""
    if c.slots.size():
        prefetch(&c.slots[h & c.mask])


cdef inline void _word_cache_place(WordCache* c, const WordSlot& slot) noexcept nogil:
    cdef uint64_t j = slot.hash & c.mask
    while c.slots[j].hash != 0:
        j = (j + 1) & c.mask
    c.slots[j] = slot


cdef inline void word_cache_put(WordCache* c, const uint8_t* p, int64_t n, uint64_t h, const int32_t* ids,
                                int64_t n_ids, size_t max_words) noexcept nogil:
    """Hold word p[:n] (not held yet; n, n_ids < 65536) with its ids."""
    cdef WordSlot slot, empty
    cdef vector[WordSlot] old
    cdef size_t k
    empty.hash = 0
    if c.slots.size() == 0:
        c.count = 0
    elif c.count >= max_words:
        c.slots.assign(c.slots.size(), empty)
        c.arena.clear()
        c.count = 0
    if (c.count + 1) * 2 > c.slots.size():
        old.swap(c.slots)
        c.slots.assign(max(<size_t>WORD_CACHE_MIN_SLOTS, 2 * old.size()), empty)
        c.mask = c.slots.size() - 1
        for k in range(old.size()):
            if old[k].hash != 0:
                _word_cache_place(c, old[k])
    slot.hash = h
    slot.at = <uint32_t>c.arena.size()
    slot.length = <uint16_t>n
    slot.n_ids = <uint16_t>n_ids
    c.arena.resize(slot.at + n_ids + (n + 3) // 4)
    memcpy(c.arena.data() + slot.at, ids, n_ids * sizeof(int32_t))
    memcpy(c.arena.data() + slot.at + n_ids, p, n)
    _word_cache_place(c, slot)
    c.count += 1
