/* What the libFuzzer targets share: a finding aborts (must), and the input is
 * read as a stream of bytes that reads as zeros once it is used up (reader). */
#ifndef RTS_FUZZ_READER_H
#define RTS_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* A finding: abort, for libFuzzer to keep the input. */
static inline void must(int cond)
{
    if (!cond) abort();
}

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

/* The next byte, 0 once the input is used up. */
static inline uint8_t u8(reader *r)
{
    if (r->n == 0) return 0;
    r->n--;
    return *r->p++;
}

/* The next `bytes` bytes (at most 8), big-endian. */
static inline uint64_t ubytes(reader *r, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++) v = v << 8 | u8(r);
    return v;
}

#endif
