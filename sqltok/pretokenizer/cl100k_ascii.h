/* Where cl100k's pretokens start in a window of ASCII text, 64 bytes at a time, as o200k_ascii.h
   does for o200k.

   The pattern (tiktoken's cl100k_base, see matcher.pxd):
     '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
     |\s++$|\s*[\r\n]|\s+(?!\S)|\s
   With the classes of o200k_ascii.h (L letters, D digits, NL CR/LF, SW the other whitespace, SP the
   space, P everything else), a position j > base starts a pretoken when (base starts one):
     a P: unless after another P (its run) or after SP (" (" is one pretoken);
     a letter: after D or NL, or after a P that does not start a pretoken (a P that does takes the
       letters as its word: "(word"); never after SW (" word", "\tword") nor after another letter,
       but for the letter right after a contraction;
     a contraction ('s, 't, 'm, 'd, 'll, 've, 're in any case) is an apostrophe that starts a
       pretoken (by the P rule) and its letters: the letters are no starts, what follows is one;
     a digit: at the start of its run and every third digit after;
     NL: at the start of a whitespace run, unless it follows a P (the P run's pretoken takes the
       CR/LF that follow it, up to the first other byte, which starts one);
     SW: at the start of a whitespace run; the last of a run that a non-whitespace byte follows; the
       first after the run's last CR/LF when a non-whitespace byte ends the run. A run that goes
       on to the end of the text is one pretoken from its first start (\s++$).
   The rules look at most 3 bytes back and 3 ahead, but for the first whitespace after a CR/LF,
   whose run is scanned to its end. Positions whose rule would look at a byte outside the 64 or at
   a non-ASCII byte are left to the caller (no start is reported there). tests/test_pretokenize_
   patterns.py checks these starts against `regex`. */
#ifndef SQLTOK_CL100K_ASCII_H
#define SQLTOK_CL100K_ASCII_H

#include "o200k_ascii.h"

/* Starts of pretokens at positions base + j (bit j, j > 0) that the window decides; base starts one.
   Every start before the last one reported is reported. */
static inline uint64_t sqltok_cl100k_ascii_starts(const unsigned char* s, size_t base, size_t n) {
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
    uint64_t letter = (c.lo | c.up) & valid, ws = c.ws & valid, nl = c.nl & valid, sw = ws & ~nl;
    uint64_t digit = c.digit & valid, sp = c.sp & valid;
    uint64_t punct = valid & c.ascii & ~(letter | digit | ws);
    uint64_t after_nonws = (~ws & valid) >> 1;     /* bit j: j + 1 is real and not whitespace */

    /* P: not after P or SP */
    uint64_t punct_start = punct & ~(punct << 1) & ~(sp << 1);
    punct_start |= punct & 1;      /* base itself starts a pretoken */
    /* contractions: an apostrophe that starts a pretoken, then its letters */
    uint64_t con_letters = 0, con_end = 0;
    uint64_t cand = c.apos & punct_start;
    while (cand) {
        int a = sqltok_ctz64(cand), len = 0;
        cand &= cand - 1;
        if (a + 1 >= 64 || !(valid & SQLTOK_BIT(a + 1))) continue;
        unsigned char c1 = p[a + 1] | 0x20;
        if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
            len = 1;
        } else if (a + 2 < 64 && (valid & SQLTOK_BIT(a + 2))) {
            unsigned char c2 = p[a + 2] | 0x20;
            if (((c1 == 'r' || c1 == 'v') && c2 == 'e') || (c1 == 'l' && c2 == 'l')) len = 2;
        }
        if (!len) continue;
        con_letters |= SQLTOK_BIT(a + 1) | (len == 2 ? SQLTOK_BIT(a + 2) : 0);
        if (a + 1 + len < 64) con_end |= SQLTOK_BIT(a + 1 + len);
    }
    /* a P run's tail of CR/LF: its pretoken's, up to the first other byte */
    uint64_t tail = 0, tail_end = 0;
    uint64_t seeds = nl & (punct << 1);
    while (seeds) {
        int j = sqltok_ctz64(seeds);
        uint64_t rest = ~(nl >> j);
        int e = rest ? j + sqltok_ctz64(rest) : 64;
        uint64_t upto = e < 64 ? SQLTOK_BIT(e) - 1 : ~(uint64_t)0;
        tail |= upto & ~(SQLTOK_BIT(j) - 1);
        if (e < 64) tail_end |= SQLTOK_BIT(e);
        seeds &= ~upto;
    }
    /* digits: run starts, then every third digit */
    uint64_t groups = (digit & ~(digit << 1)) | (digit & 1), more;
    while ((more = groups | ((groups << 3) & digit & (digit << 1) & (digit << 2))) != groups) groups = more;
    /* letters */
    uint64_t letter_start = letter & ((digit | nl | (punct & ~punct_start)) << 1);
    letter_start = (letter_start | (letter & con_end)) & ~con_letters;
    /* whitespace: run starts (a CR/LF after a P is its tail), the last SW before a non-space */
    uint64_t ws_start = (ws & ~(ws << 1) & ~tail) | (sw & after_nonws);
    uint64_t after_nl = sw & (nl << 1) & ~(tail_end);
    while (after_nl) {             /* the first SW after a CR/LF: a start if no CR/LF follows in its
                                      run and a non-whitespace byte ends it */
        int j = sqltok_ctz64(after_nl);
        after_nl &= after_nl - 1;
        uint64_t rest = ~(ws >> j);
        int e = rest ? j + sqltok_ctz64(rest) : 64;
        if (e >= 64) {             /* the run goes on past the window: leave it to the caller */
            if (j < limit) limit = j;
            continue;
        }
        if (non_ascii & SQLTOK_BIT(e)) {   /* the run may go on in Unicode whitespace (U+00A0) */
            if (j < limit) limit = j;
            continue;
        }
        if (!(valid & SQLTOK_BIT(e))) continue;   /* the run ends the text: one pretoken (\s++$) */
        if (nl & (SQLTOK_BIT(e) - 1) & ~(SQLTOK_BIT(j) - 1)) continue;   /* a CR/LF follows in it */
        ws_start |= SQLTOK_BIT(j);
    }
    uint64_t starts = (letter_start | groups | punct_start | ws_start | con_end | tail_end) & valid;
    return starts & ~(uint64_t)1 & (SQLTOK_BIT(limit) - 1);
}

#endif
