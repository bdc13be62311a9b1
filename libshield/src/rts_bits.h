/* Private to libshield (not for applications): bit scans used by the O(1)
 * priority lookups. GCC and Clang builtins; a port to another compiler
 * replaces these three functions. Arguments must be non-zero. */
#ifndef RTSHIELD_SRC_RTS_BITS_H
#define RTSHIELD_SRC_RTS_BITS_H

#include <stdint.h>

/* Index of the highest set bit of a non-zero word. */
static inline unsigned rts_bits_msb32(uint32_t x)
{
    return 31u - (unsigned)__builtin_clz(x);
}

/* Index of the lowest set bit of a non-zero word. */
static inline unsigned rts_bits_lsb32(uint32_t x)
{
    return (unsigned)__builtin_ctz(x);
}

/* Index of the lowest set bit of a non-zero 64-bit word, in two 32-bit scans
 * so that 32-bit cores need no library helper. */
static inline unsigned rts_bits_lsb64(uint64_t x)
{
    const uint32_t lo = (uint32_t)x;
    return lo != 0u ? rts_bits_lsb32(lo) : 32u + rts_bits_lsb32((uint32_t)(x >> 32));
}

#endif
