# cython: language_level=3
"""A thread's cache of the pretokens it has seen, with their ids: 64-byte slots (one cache line) of
pretokens of up to KEY_WORDS_MAX bytes held as three masked words, in sets of two side by side chosen
by their hash, the one cached last first (so that two pretokens that meet in a set do not push each
other out and merge again, time after time), and for longer ones a `LongCache`. A slot may say that
its pretoken waits to be merged (PENDING), so that it is merged once however often it occurs before
its batch (merge_lanes)."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp.vector cimport vector

from sqltok.bpe.long_cache cimport LongCache, long_cache_put
from sqltok.bpe.merge_lanes cimport Pending
from sqltok.native.bytes_table cimport words_hash
from sqltok.native.id_lists cimport IdVector
from sqltok.native.shared_pieces cimport SharedCursor, SharedPieces


cdef enum:
    CACHE_SLOTS = 131072      # pretokens seen, with their ids: 8 MiB at most, shared out among the threads
    BYTES_PER_SLOT = 32       # caches get a slot per this many input bytes (tiny calls, tiny caches)
    MIN_SLOTS = 64
    CACHE_IDS = 9
    PENDING = 255             # a slot's n_ids while its pretoken waits to be merged (ids[0]: which)


cdef struct CacheSlot:         # 64 bytes, one cache line (the slots are 64-byte aligned)
    uint64_t key[3]           # the pretoken's bytes, zero-padded (see bytes_table.key_words)
    uint8_t length            # 0: empty
    uint8_t n_ids
    uint8_t unused[2]
    int32_t ids[CACHE_IDS]


cdef struct PieceKey:         # a pretoken of up to KEY_WORDS_MAX bytes as words, and its bytes_hash
    uint64_t w[3]
    uint64_t hash


cdef cppclass PretokenCache:
    vector[uint64_t] memory   # the slots, 64-byte aligned within
    CacheSlot* slots
    uint64_t mask
    LongCache long_pieces     # pretokens over KEY_WORDS_MAX bytes


cdef inline void pretoken_cache_size(PretokenCache& c, int64_t text_bytes, int threads) noexcept nogil:
    """Size `c` for about `text_bytes` of input, one of `threads` threads: a slot per BYTES_PER_SLOT
    bytes (a few KiB for a short text), and 8 MiB / threads at most, as the threads share the
    last-level cache. A cache at least that big is kept, with what it holds. It is made on small
    pages: a call that sizes it up faults it in, and faulting fresh huge pages took up to 13 ms
    (against 2 ms) whenever two threads did so at once. Its largest size is reserved at once, which
    costs address space only: sized up, it grows in place (the slots it holds move up to their
    places in the larger table, none meets another), so that only the new part is faulted in, and
    single calls one after another, which size it up as they add up, fault each page once."""
    cdef uint64_t slots = MIN_SLOTS, j, k
    cdef CacheSlot* s
    while slots < CACHE_SLOTS // threads and slots * BYTES_PER_SLOT < <uint64_t>text_bytes:
        slots <<= 1
    if c.memory.size() >= (slots + 1) * sizeof(CacheSlot) // 8:
        return
    if c.memory.size() == 0:
        c.memory.reserve((CACHE_SLOTS + 1) * sizeof(CacheSlot) // 8)
        c.memory.resize((slots + 1) * sizeof(CacheSlot) // 8, 0)
        c.slots = <CacheSlot*>((<uint64_t>c.memory.data() + 63) & ~<uint64_t>63)
        c.mask = slots - 1
        return
    c.memory.resize((slots + 1) * sizeof(CacheSlot) // 8, 0)  # (within the reserve: no move)
    for j in range(c.mask + 1):
        s = &c.slots[j]
        if s.length > 0:  # to its set in the larger table, in the same place within it
            k = (words_hash(s.key[0], s.key[1], s.key[2], s.length) & (slots - 1) & ~<uint64_t>1) | (j & 1)
            if k != j:
                c.slots[k] = s[0]
                s.length = 0
    c.mask = slots - 1


cdef inline CacheSlot* cache_slot(const PretokenCache& c, uint64_t hash) noexcept nogil:
    """The set (its first slot of two) of the pretoken with this `bytes_hash`."""
    return &c.slots[hash & c.mask & ~<uint64_t>1]


cdef inline bint _holds(const CacheSlot* slot, const PieceKey* key, int64_t n) noexcept nogil:
    return (slot.length == n) & (slot.key[0] == key.w[0]) & (slot.key[1] == key.w[1]) & (slot.key[2] == key.w[2])


cdef inline bint cache_get(const CacheSlot* set_, const PieceKey* key, int64_t n,
                           IdVector& out, vector[size_t]& holes) noexcept nogil:
    """Append the ids the cache set holds for the pretoken `key` of n bytes (a placeholder, its
    position noted in `holes`, when it waits to be merged); False when it holds others."""
    cdef int k
    cdef const CacheSlot* slot = set_
    if not _holds(slot, key, n):
        slot = set_ + 1
        if not _holds(slot, key, n):
            return False
    if slot.n_ids == PENDING:
        holes.push_back(out.size())
        out.push_back(-1 - slot.ids[0])
    else:
        for k in range(slot.n_ids):  # a few ids: no call to a range insert
            out.push_back(slot.ids[k])
    return True


cdef inline CacheSlot* cache_put(CacheSlot* set_, const PieceKey* key, int64_t n,
                                 const int32_t* ids, size_t count) noexcept nogil:
    """Remember the ids[:count] of the pretoken `key` of n bytes in its set: in the slot that holds
    it or an empty one, else in the first, whose pretoken takes the place of the second's (when
    they fit in a slot; else a slot that holds it is emptied). The slot written, or NULL."""
    cdef size_t k
    cdef CacheSlot* slot = set_
    if not _holds(slot, key, n):
        if _holds(set_ + 1, key, n) or (slot.length and not set_[1].length):
            slot = set_ + 1
        elif slot.length and count <= CACHE_IDS:
            set_[1] = set_[0]
    if count > CACHE_IDS:
        if _holds(slot, key, n):
            slot.length = 0
        return NULL
    slot.key[0] = key.w[0]
    slot.key[1] = key.w[1]
    slot.key[2] = key.w[2]
    slot.length = <uint8_t>n
    slot.n_ids = <uint8_t>count
    for k in range(count):
        slot.ids[k] = ids[k]
    return slot


cdef inline void cache_put_pending(CacheSlot* set_, const PieceKey* key, int64_t n, int32_t which) noexcept nogil:
    """Note in the set that the pretoken `key` of n bytes waits to be merged, the `which`-th."""
    cdef CacheSlot* slot = cache_put(set_, key, n, &which, 1)
    slot.n_ids = PENDING


cdef inline void cache_put_merged(PretokenCache& c, SharedPieces* shared, SharedCursor& shared_at,
                                  const vector[Pending]& pending, const vector[PieceKey]& keys,
                                  const vector[int32_t]& ids) noexcept nogil:
    """Give every PENDING slot its ids (or empty it), and cache the long pretokens; those merged here
    go to `shared` too (written at `shared_at`), unless NULL."""
    cdef size_t i
    cdef const Pending* pend
    cdef const PieceKey* key
    cdef const int32_t* found
    for i in range(pending.size()):
        pend = &pending[i]
        found = ids.data() + pend.start
        if pend.key >= 0:
            key = &keys[pend.key]
            cache_put(cache_slot(c, pend.hash), key, pend.n, found, pend.count)
        else:
            long_cache_put(c.long_pieces, pend.p, pend.n, pend.hash, found, pend.count)
        if shared != NULL and pend.merged:
            shared.put(shared_at, pend.p, pend.n, pend.hash, found, pend.count)
