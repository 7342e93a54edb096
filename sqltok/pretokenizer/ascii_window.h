/* A 64-byte window of ASCII text as bit masks (bit j: byte j of the window), for the scans that find
   where pretokens start without following a pattern pretoken by pretoken (o200k_ascii.h,
   cl100k_ascii.h, gpt2_ascii.h), and the pieces of their rules that the patterns share. */
#ifndef SQLTOK_ASCII_WINDOW_H
#define SQLTOK_ASCII_WINDOW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "portable.h"

typedef struct {
    uint64_t lo, up, digit, sp, ws, nl, apos, slash, ascii;
} sqltok_classes;

#if defined(__SSE2__)
static inline void sqltok_classify64(const unsigned char* p, sqltok_classes* c) {
    memset(c, 0, sizeof(*c));
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i*)(p + 16 * k));
        int shift = 16 * k;
        c->lo |= sqltok_in_range16(v, 'a', 26) << shift;
        c->up |= sqltok_in_range16(v, 'A', 26) << shift;
        c->digit |= sqltok_in_range16(v, '0', 10) << shift;
        c->ws |= (sqltok_in_range16(v, 0x09, 5) | (uint64_t)(uint16_t)_mm_movemask_epi8(
                     _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')))) << shift;
        c->sp |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' '))) << shift;
        c->nl |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(
                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')))) << shift;
        c->apos |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\''))) << shift;
        c->slash |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('/'))) << shift;
        c->ascii |= (uint64_t)(uint16_t)~_mm_movemask_epi8(v) << shift;
    }
}
#else
static inline void sqltok_classify64(const unsigned char* p, sqltok_classes* c) {
    memset(c, 0, sizeof(*c));
    for (int j = 0; j < 64; j++) {
        unsigned char b = p[j];
        uint64_t bit = (uint64_t)1 << j;
        if ((unsigned char)(b - 'a') < 26) c->lo |= bit;
        if ((unsigned char)(b - 'A') < 26) c->up |= bit;
        if ((unsigned char)(b - '0') < 10) c->digit |= bit;
        if (b == ' ' || (unsigned char)(b - 0x09) < 5) c->ws |= bit;
        if (b == ' ') c->sp |= bit;
        if (b == '\n' || b == '\r') c->nl |= bit;
        if (b == '\'') c->apos |= bit;
        if (b == '/') c->slash |= bit;
        if (b < 0x80) c->ascii |= bit;
    }
}
#endif

#define SQLTOK_BIT(j) ((uint64_t)1 << (j))
#define SQLTOK_WINDOW_DECIDED 56   /* starts are given for positions below this (room to look ahead) */

typedef struct {
    const unsigned char* p;    /* the window's bytes (a padded copy where the text ends in it) */
    size_t avail;              /* bytes of text from the window's start */
    uint64_t valid;            /* the bytes that are text */
    uint64_t non_ascii;
    int limit;                 /* starts are reported below this byte */
    sqltok_classes c;
    /* the classes of the text's bytes: L, whitespace, CR/LF, other whitespace (SW), digits, P */
    uint64_t letter, ws, nl, sw, digit, punct;
    uint64_t after_nonws;      /* bit j: byte j + 1 is text and not whitespace */
} sqltok_window;

/* The window at s[base:n] (`buf`: room for a padded copy); false when it can decide no start. */
static inline int sqltok_window_open(sqltok_window* w, const unsigned char* s, size_t base, size_t n,
                                     unsigned char* buf) {
    w->p = s + base;
    w->avail = n - base;
    w->valid = ~(uint64_t)0;
    w->limit = SQLTOK_WINDOW_DECIDED;
    if (w->avail < 64) {       /* the end of the text is in the window: pad, mark what is real */
        memset(buf, 0, 64);
        memcpy(buf, w->p, w->avail);
        w->p = buf;
        w->valid = SQLTOK_BIT(w->avail) - 1;
        w->limit = (int)w->avail;
    }
    sqltok_classify64(w->p, &w->c);
    w->non_ascii = ~w->c.ascii & w->valid;
    if (w->non_ascii) {        /* rules near a non-ASCII byte would need its Unicode class */
        int q = sqltok_ctz64(w->non_ascii) - 2;
        if (q < w->limit) w->limit = q;
    }
    if (w->limit <= 1) return 0;
    w->letter = (w->c.lo | w->c.up) & w->valid;
    w->ws = w->c.ws & w->valid;
    w->nl = w->c.nl & w->valid;
    w->sw = w->ws & ~w->nl;
    w->digit = w->c.digit & w->valid;
    w->punct = w->valid & w->c.ascii & ~(w->letter | w->digit | w->ws);
    w->after_nonws = (~w->ws & w->valid) >> 1;
    return 1;
}

/* How many letters of a contraction ('s, 't, 'm, 'd, 'll, 've, 're; in any case with `fold`, else
   lowercase only) follow the apostrophe at byte a of the window's bytes p (`valid`: those that are
   text): 0 (none), 1 or 2. */
static inline int sqltok_contraction_letters(const unsigned char* p, uint64_t valid, int a, int fold) {
    unsigned char lower = fold ? 0x20 : 0;
    if (a + 1 >= 64 || !(valid & SQLTOK_BIT(a + 1))) return 0;
    unsigned char c1 = p[a + 1] | lower;
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 1;
    if (a + 2 < 64 && (valid & SQLTOK_BIT(a + 2))) {
        unsigned char c2 = p[a + 2] | lower;
        if (((c1 == 'r' || c1 == 'v') && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 2;
    }
    return 0;
}

/* The contractions at the apostrophes of `apos` (`fold`: in any case, else lowercase only; `repeat`:
   one may follow another's letters, else such an apostrophe is none): their letters, which start
   nothing, in *letters; the byte after each, which starts the next pretoken, in *ends. Returns the
   apostrophes that begin one. */
static inline uint64_t sqltok_contractions(const sqltok_window* w, uint64_t apos, int fold, int repeat,
                                           uint64_t* letters, uint64_t* ends) {
    uint64_t taken = 0;
    *letters = 0;
    *ends = 0;
    while (apos) {
        int a = sqltok_ctz64(apos), len;
        apos &= apos - 1;
        if ((!repeat && a > 0 && (*letters & SQLTOK_BIT(a - 1))) ||
            !(len = sqltok_contraction_letters(w->p, w->valid, a, fold))) continue;
        taken |= SQLTOK_BIT(a);
        *letters |= SQLTOK_BIT(a + 1) | (len == 2 ? SQLTOK_BIT(a + 2) : 0);
        if (a + 1 + len < 64) *ends |= SQLTOK_BIT(a + 1 + len);
    }
    return taken;
}

/* The starts of digit groups: each run's first digit (bit 0: base starts one), then every third. */
static inline uint64_t sqltok_digit_groups(uint64_t digit) {
    uint64_t groups = (digit & ~(digit << 1)) | (digit & 1), more;
    while ((more = groups | ((groups << 3) & digit & (digit << 1) & (digit << 2))) != groups) groups = more;
    return groups;
}

/* The tails a P run's pretoken takes: from each seed, the bytes of `chars` up to the first other
   byte (`tail`), and that byte (`tail_end`: it starts the next pretoken). */
static inline void sqltok_tails(uint64_t seeds, uint64_t chars, uint64_t* tail, uint64_t* tail_end) {
    *tail = 0;
    *tail_end = 0;
    while (seeds) {
        int j = sqltok_ctz64(seeds);
        uint64_t rest = ~(chars >> j);
        int e = rest ? j + sqltok_ctz64(rest) : 64;
        uint64_t upto = e < 64 ? SQLTOK_BIT(e) - 1 : ~(uint64_t)0;
        *tail |= upto & ~(SQLTOK_BIT(j) - 1);
        if (e < 64) *tail_end |= SQLTOK_BIT(e);
        seeds &= ~upto;
    }
}

#endif
