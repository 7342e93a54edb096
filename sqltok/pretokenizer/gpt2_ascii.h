/* Where GPT-2's pretokens start in a window of ASCII text, 64 bytes at a time, as o200k_ascii.h and
   cl100k_ascii.h do for theirs.

   The pattern (HF ByteLevel(use_regex=True); tiktoken's r50k_base/p50k_base splits alike, see
   matcher.pxd):
     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
   With the classes of o200k_ascii.h (L letters, D digits, WS whitespace: SP the space, CR, LF, tab,
   VT, FF; P everything else), a position j > base starts a pretoken when (base starts one):
     an L, a D or a P: unless after a byte of its own class (its run: a digit run is one pretoken, an
       apostrophe inside a P run is the run's) or after SP (a space before a non-whitespace byte
       always starts a pretoken and joins that byte's run: " word", " 123", " '");
     a contraction ('s, 't, 'm, 'd, 'll, 've, 're, lowercase only) is an apostrophe that starts a
       pretoken (by the P rule) and its letters: the letters are no starts, what follows is one
       ("'sa" -> "'s", "a"; "x's" -> "x", "'s"; "?!'ll" -> "?!'", "ll"; " 's" -> " '", "s");
     WS: at the start of a whitespace run; the last of a run that a non-whitespace byte follows (the
       rest of the run is one pretoken, \s+(?!\S); the last one is a pretoken of its own, or joins
       the next run if it is SP). A run that ends the text is one pretoken from its start (\s+(?!\S)
       takes it whole). No CR/LF rules: "a \n b" -> "a", " \n", " b".
   The rules look at most one byte back and 3 ahead (a contraction). Positions whose rule would look
   at a byte outside the 64 or at a non-ASCII byte are left to the caller (no start is reported
   there). tests/test_pretokenize_patterns.py checks these starts against `regex`. */
#ifndef SQLTOK_GPT2_ASCII_H
#define SQLTOK_GPT2_ASCII_H

#include "ascii_window.h"

/* The starts in the window at s[base:n], given as sqltok_o200k_ascii_starts gives o200k's. */
static inline uint64_t sqltok_gpt2_ascii_starts(const unsigned char* s, size_t base, size_t n) {
    unsigned char buf[64];
    sqltok_window w;
    if (!sqltok_window_open(&w, s, base, n, buf)) return 0;
    uint64_t letter = w.letter, digit = w.digit, punct = w.punct, ws = w.ws;
    uint64_t after_sp = w.c.sp << 1;

    /* L, D, P: the first of a run, unless a space (which joins it) comes before */
    uint64_t punct_start = (punct & ~(punct << 1) & ~after_sp) | (punct & 1);   /* base starts one */
    uint64_t run_start = ((letter & ~(letter << 1)) | (digit & ~(digit << 1)) | punct_start) & ~after_sp;
    /* contractions: an apostrophe that starts a pretoken, then its letters */
    uint64_t con_letters, con_end;
    sqltok_contractions(&w, w.c.apos & punct_start, 0, 1, &con_letters, &con_end);
    /* whitespace: the run's first byte, and its last one when a non-whitespace byte follows */
    uint64_t ws_start = (ws & ~(ws << 1)) | (ws & w.after_nonws);
    uint64_t starts = ((run_start & ~con_letters) | con_end | ws_start) & w.valid;
    return starts & ~(uint64_t)1 & (SQLTOK_BIT(w.limit) - 1);
}

#endif
