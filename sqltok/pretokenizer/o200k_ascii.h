/* Where o200k's pretokens start in a window of ASCII text, 64 bytes at a time, without following the
   pattern pretoken by pretoken.

   The pattern (tiktoken's o200k_base, see pretokenize.pxd):
     [^\r\n\p{L}\p{N}]?[\p{Lu}..]*[\p{Ll}..]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
     |[^\r\n\p{L}\p{N}]?[\p{Lu}..]+[\p{Ll}..]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
     |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
   On ASCII, with L letters (UP A-Z, LO a-z), D digits, NL CR/LF, SW the other whitespace (SP is the
   space), P everything else, a position j > base starts a pretoken when (base starts one):
     a letter: after D or NL; UP after LO (camelCase); after a P that does not start a pretoken
       (a P that does takes the letters as its word: "(word"); never after SW (" word", "\tword")
       nor after a letter;
     a digit: at the start of its run and every third digit after;
     a P: unless after another P, after SP (" (" is one pretoken), or after a P run's CR/LF tail;
     SW: at the start of a whitespace run; the last one of a run of two or more before a non-space
       ("  x" -> " ", " x"); the first after the run's last CR/LF;
     NL: at the start of a whitespace run, unless it follows a P run (then the P run's pretoken
       takes the CR, LF and '/' that follow it);
     anything right after a contraction ('s, 't, 're, 've, 'm, 'll, 'd in any case, right after a
       word's letters; the apostrophe and its letters are not starts) or after a P run's CR/LF/'/' tail.
   The rules look at most 3 bytes back and 3 ahead, except that the first whitespace after a CR/LF
   needs its run to end (scanned; a run that reaches a non-ASCII byte is left to the caller). Positions whose rule would look at a byte outside the 64 or at a
   non-ASCII byte are left to the caller (no start is reported there). tests/test_pretokenize.py
   checks these starts against `regex`. */
#ifndef SQLTOK_O200K_ASCII_H
#define SQLTOK_O200K_ASCII_H

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

/* Starts of pretokens at positions base + j (bit j, j > 0) that the window decides; base starts one.
   Every start before the last one reported is reported. */
static inline uint64_t sqltok_o200k_ascii_starts(const unsigned char* s, size_t base, size_t n) {
    unsigned char buf[64];
    const unsigned char* p = s + base;
    size_t avail = n - base;
    uint64_t valid = ~(uint64_t)0;
    int limit = SQLTOK_WINDOW_DECIDED;
    if (avail < 64) {              /* the end of the text is in the window: pad, mark what is real */
        memset(buf, 0, 64);
        memcpy(buf, p, avail);
        p = buf;
        valid = SQLTOK_BIT(avail) - 1;
        limit = (int)avail;
    }
    sqltok_classes c;
    sqltok_classify64(p, &c);
    uint64_t non_ascii = ~c.ascii & valid;
    if (non_ascii) {               /* rules near a non-ASCII byte would need its Unicode class */
        int q = sqltok_ctz64(non_ascii) - 2;
        if (q < limit) limit = q;
    }
    if (limit <= 1) return 0;
    uint64_t letter = c.lo | c.up, ws = c.ws & valid, nl = c.nl & valid, sw = ws & ~nl;
    uint64_t digit = c.digit & valid;
    uint64_t punct = valid & c.ascii & ~(letter | digit | ws);
    uint64_t after_nonws = (~ws & valid) >> 1;     /* bit j: j + 1 is real and not whitespace */

    /* contractions: an apostrophe right after a word's letters (not after another contraction) */
    uint64_t con_apos = 0, con_letters = 0, con_end = 0;
    uint64_t cand = c.apos & (letter << 1) & valid & ~(uint64_t)1;
    while (cand) {
        int a = sqltok_ctz64(cand), len = 0;
        cand &= cand - 1;
        if (a + 1 >= 64 || !(valid & SQLTOK_BIT(a + 1)) || (con_letters & SQLTOK_BIT(a - 1))) continue;
        unsigned char c1 = p[a + 1] | 0x20;
        if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
            len = 1;
        } else if (a + 2 < 64 && (valid & SQLTOK_BIT(a + 2))) {
            unsigned char c2 = p[a + 2] | 0x20;
            if (((c1 == 'r' || c1 == 'v') && c2 == 'e') || (c1 == 'l' && c2 == 'l')) len = 2;
        }
        if (!len) continue;
        con_apos |= SQLTOK_BIT(a);
        con_letters |= SQLTOK_BIT(a + 1) | (len == 2 ? SQLTOK_BIT(a + 2) : 0);
        if (a + 1 + len < 64) con_end |= SQLTOK_BIT(a + 1 + len);
    }
    /* a P run's tail of CR, LF and '/' (from its first CR/LF): its pretoken's, up to the first other byte */
    uint64_t tail_chars = (nl | c.slash) & valid, tail = 0, tail_end = 0;
    uint64_t seeds = nl & (punct << 1);      /* a CR/LF right after a P (a '/' inside a tail is one) */
    while (seeds) {
        int j = sqltok_ctz64(seeds);
        uint64_t rest = ~(tail_chars >> j);
        int e = rest ? j + sqltok_ctz64(rest) : 64;
        uint64_t upto = e < 64 ? SQLTOK_BIT(e) - 1 : ~(uint64_t)0;
        tail |= upto & ~(SQLTOK_BIT(j) - 1);
        if (e < 64) tail_end |= SQLTOK_BIT(e);
        seeds &= ~upto;
    }
    /* digits: run starts, then every third digit */
    uint64_t groups = (digit & ~(digit << 1)) | (digit & 1), more;
    while ((more = groups | ((groups << 3) & digit & (digit << 1) & (digit << 2))) != groups) groups = more;
    /* P: not after P or SP, nor in a tail */
    uint64_t punct_start = punct & ~(punct << 1) & ~(c.sp << 1) & ~con_apos & ~tail;
    punct_start |= punct & (1 | tail_end | con_end);   /* base itself starts a pretoken */
    uint64_t letter_start = (letter & ((digit | nl | (punct & ~punct_start)) << 1)) | (c.up & (c.lo << 1));
    letter_start &= ~con_letters;
    /* whitespace */
    uint64_t ws_start = (sw & ~(ws << 1)) | (sw & (sw << 1) & after_nonws) | (nl & ~(ws << 1) & ~tail);
    uint64_t after_nl = sw & (nl << 1);
    while (after_nl) {             /* the first SW after a CR/LF starts one if no CR/LF follows in its run */
        int j = sqltok_ctz64(after_nl);
        after_nl &= after_nl - 1;
        uint64_t rest = ~(sw >> j);
        int e = rest ? j + sqltok_ctz64(rest) : 64;
        if (e >= 64) {
            if (avail > 64) {      /* the run goes on past the window: leave it to the caller */
                if (j < limit) limit = j;
                continue;
            }
        } else if (nl & SQLTOK_BIT(e)) {
            continue;
        } else if (non_ascii & SQLTOK_BIT(e)) {   /* the run may go on in Unicode whitespace (U+00A0) */
            if (j < limit) limit = j;
            continue;
        }
        ws_start |= SQLTOK_BIT(j);
    }
    uint64_t starts = (letter_start | groups | punct_start | ws_start | con_end | tail_end) & valid;
    return starts & ~(uint64_t)1 & (SQLTOK_BIT(limit) - 1);
}

#endif
