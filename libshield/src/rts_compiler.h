/* Private to libshield (not for applications): compiler hints. GCC and
 * Clang spell them as attributes; with another compiler they expand to
 * nothing and the code stays correct, only laid out differently. */
#ifndef RTSHIELD_SRC_RTS_COMPILER_H
#define RTSHIELD_SRC_RTS_COMPILER_H

/* Keep a function out of line: its rare work then costs the common path
 * that skips it no call and no register saves. */
#if defined(__GNUC__)
#define RTS_NOINLINE __attribute__((noinline))
#else
#define RTS_NOINLINE
#endif

#endif
