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
   checks these starts against `regex`.

   Mistral's Tekken pattern is this one without the contractions and with \p{N} for \p{N}{1,3}:
   `contractions` = 0 and `three_digits` = 0 (sqltok_tekken_ascii_starts; tests/test_pretokenize_patterns.py). */
#ifndef SQLTOK_O200K_ASCII_H
#define SQLTOK_O200K_ASCII_H

#include "ascii_window.h"

/* Starts of pretokens at positions base + j (bit j, j > 0) that the window decides; base starts one.
   Every start before the last one reported is reported. */
static inline uint64_t sqltok_o200k_like_ascii_starts(const unsigned char* s, size_t base, size_t n,
                                                      int contractions, int three_digits) {
    unsigned char buf[64];
    sqltok_window w;
    if (!sqltok_window_open(&w, s, base, n, buf)) return 0;
    const sqltok_classes c = w.c;
    uint64_t letter = w.letter, ws = w.ws, nl = w.nl, sw = w.sw, punct = w.punct;
    int limit = w.limit;

    /* contractions: an apostrophe right after a word's letters (not after another contraction) */
    uint64_t con_letters = 0, con_end = 0, con_apos = 0;
    if (contractions)
        con_apos = sqltok_contractions(&w, c.apos & (letter << 1) & w.valid & ~(uint64_t)1, 1, 0,
                                       &con_letters, &con_end);
    /* a P run's tail of CR, LF and '/' (from its first CR/LF): its pretoken's, up to the first other byte */
    uint64_t tail, tail_end;   /* a CR/LF right after a P seeds one (a '/' inside a tail is one) */
    sqltok_tails(nl & (punct << 1), (nl | c.slash) & w.valid, &tail, &tail_end);
    uint64_t groups = three_digits ? sqltok_digit_groups(w.digit) : w.digit;
    /* P: not after P or SP, nor in a tail */
    uint64_t punct_start = punct & ~(punct << 1) & ~(c.sp << 1) & ~con_apos & ~tail;
    punct_start |= punct & (1 | tail_end | con_end);   /* base itself starts a pretoken */
    uint64_t letter_start = (letter & ((w.digit | nl | (punct & ~punct_start)) << 1)) | (c.up & (c.lo << 1));
    letter_start &= ~con_letters;
    /* whitespace */
    uint64_t ws_start = (sw & ~(ws << 1)) | (sw & (sw << 1) & w.after_nonws) | (nl & ~(ws << 1) & ~tail);
    uint64_t after_nl = sw & (nl << 1);
    while (after_nl) {             /* the first SW after a CR/LF starts one if no CR/LF follows in its run */
        int j = sqltok_ctz64(after_nl);
        after_nl &= after_nl - 1;
        uint64_t rest = ~(sw >> j);
        int e = rest ? j + sqltok_ctz64(rest) : 64;
        if (e >= 64) {
            if (w.avail > 64) {    /* the run goes on past the window: leave it to the caller */
                if (j < limit) limit = j;
                continue;
            }
        } else if (nl & SQLTOK_BIT(e)) {
            continue;
        } else if (w.non_ascii & SQLTOK_BIT(e)) {   /* the run may go on in Unicode whitespace (U+00A0) */
            if (j < limit) limit = j;
            continue;
        }
        ws_start |= SQLTOK_BIT(j);
    }
    uint64_t starts = (letter_start | groups | punct_start | ws_start | con_end | tail_end) & w.valid;
    return starts & ~(uint64_t)1 & (SQLTOK_BIT(limit) - 1);
}

static inline uint64_t sqltok_o200k_ascii_starts(const unsigned char* s, size_t base, size_t n) {
    return sqltok_o200k_like_ascii_starts(s, base, n, 1, 1);
}

static inline uint64_t sqltok_tekken_ascii_starts(const unsigned char* s, size_t base, size_t n) {
    return sqltok_o200k_like_ascii_starts(s, base, n, 0, 0);
}

#endif
