/* The ASCII bytes of 64 bytes of text as BERT's pre-tokenizer and str.split both see them, for the
   WordPiece split-word kernel (_word_splits.pyx) to count whole blocks of plain ASCII words at once:
     space: \t \n \r and ' ' (whitespace to both: ends a word and a pre-token),
     run:   letters and digits (a run of them is one pre-token),
     alone: ASCII punctuation (a pre-token of its own).
   Every other byte (non-ASCII, the other control characters, DEL) is in none of the three: the
   kernel counts it character by character. The kernel checks once that a tokenizer's normalizer
   gives these bytes these classes before it takes this path. */
#ifndef SQLTOK_BERT_ASCII_H
#define SQLTOK_BERT_ASCII_H

#include <stdint.h>

#include "portable.h"

typedef struct {
    uint64_t space, run, alone;
} sqltok_bert_ascii;

#if defined(__SSE2__)
static inline void sqltok_bert_classify64(const unsigned char* p, sqltok_bert_ascii* c) {
    c->space = c->run = c->alone = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i*)(p + 16 * k));
        int shift = 16 * k;
        __m128i sp = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
        c->space |= (uint64_t)(uint16_t)_mm_movemask_epi8(sp) << shift;
        c->run |= (sqltok_in_range16(v, 'a', 26) | sqltok_in_range16(v, 'A', 26) | sqltok_in_range16(v, '0', 10)) << shift;
        c->alone |= (sqltok_in_range16(v, 0x21, 15) | sqltok_in_range16(v, 0x3A, 7) | sqltok_in_range16(v, 0x5B, 6)
                     | sqltok_in_range16(v, 0x7B, 4)) << shift;
    }
}
#else
static inline void sqltok_bert_classify64(const unsigned char* p, sqltok_bert_ascii* c) {
    c->space = c->run = c->alone = 0;
    for (int j = 0; j < 64; j++) {
        unsigned char b = p[j];
        uint64_t bit = (uint64_t)1 << j;
        if (b == ' ' || b == '\t' || b == '\n' || b == '\r') c->space |= bit;
        else if ((unsigned char)(b - 'a') < 26 || (unsigned char)(b - 'A') < 26 || (unsigned char)(b - '0') < 10) c->run |= bit;
        else if (b > ' ' && b < 0x7F) c->alone |= bit;
    }
}
#endif

#endif
