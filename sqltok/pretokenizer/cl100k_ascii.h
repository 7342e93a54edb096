/* Where cl100k's pretokens start in a window of ASCII text, 64 bytes at a time, as o200k_ascii.h
   does for o200k; and those of the two patterns that differ from it only as said at the end
   (Llama 3's, Qwen 2's).

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
   Llama 3 (HF tokenizer.json) has no \s++$: a whitespace run that ends the text splits as one in the
   text does (after its last CR/LF); Qwen 2 also takes each digit alone (\p{N}).
   The rules look at most 3 bytes back and 3 ahead, but for the first whitespace after a CR/LF,
   whose run is scanned to its end. Positions whose rule would look at a byte outside the 64 or at
   a non-ASCII byte are left to the caller (no start is reported there). tests/test_pretokenize_
   patterns.py checks these starts against `regex`. */
#ifndef SQLTOK_CL100K_ASCII_H
#define SQLTOK_CL100K_ASCII_H

#include "ascii_window.h"

/* The starts in the window at s[base:n], given as sqltok_o200k_ascii_starts gives o200k's, of cl100k
   (three_digits, whole_at_end), Llama 3 (three_digits) or Qwen 2. */
static inline uint64_t sqltok_cl100k_ascii_starts(const unsigned char* s, size_t base, size_t n,
                                                  int three_digits, int whole_at_end) {
    unsigned char buf[64];
    sqltok_window w;
    if (!sqltok_window_open(&w, s, base, n, buf)) return 0;
    uint64_t ws = w.ws, nl = w.nl, punct = w.punct;
    int limit = w.limit;

    /* P: not after P or SP */
    uint64_t punct_start = punct & ~(punct << 1) & ~(w.c.sp << 1);
    punct_start |= punct & 1;      /* base itself starts a pretoken */
    /* contractions: an apostrophe that starts a pretoken, then its letters */
    uint64_t con_letters, con_end;
    sqltok_contractions(&w, w.c.apos & punct_start, 1, 1, &con_letters, &con_end);
    uint64_t tail, tail_end;   /* a P run's tail of CR/LF: its pretoken's, up to the first other byte */
    sqltok_tails(nl & (punct << 1), nl, &tail, &tail_end);
    uint64_t groups = three_digits ? sqltok_digit_groups(w.digit) : w.digit;
    /* letters */
    uint64_t letter_start = w.letter & ((w.digit | nl | (punct & ~punct_start)) << 1);
    letter_start = (letter_start | (w.letter & con_end)) & ~con_letters;
    /* whitespace: run starts (a CR/LF after a P is its tail), the last SW before a non-space */
    uint64_t ws_start = (ws & ~(ws << 1) & ~tail) | (w.sw & w.after_nonws);
    uint64_t after_nl = w.sw & (nl << 1) & ~tail_end;
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
        if (w.non_ascii & SQLTOK_BIT(e)) {   /* the run may go on in Unicode whitespace (U+00A0) */
            if (j < limit) limit = j;
            continue;
        }
        if (whole_at_end && !(w.valid & SQLTOK_BIT(e))) continue;   /* it ends the text: one pretoken (\s++$) */
        if (nl & (SQLTOK_BIT(e) - 1) & ~(SQLTOK_BIT(j) - 1)) continue;   /* a CR/LF follows in it */
        ws_start |= SQLTOK_BIT(j);
    }
    uint64_t starts = (letter_start | groups | punct_start | ws_start | con_end | tail_end) & w.valid;
    return starts & ~(uint64_t)1 & (SQLTOK_BIT(limit) - 1);
}

#endif
