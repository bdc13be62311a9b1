/* Private to the simulator: compiler hints. GCC and Clang spell them as
 * attributes; with another compiler they expand to plain `inline` and the
 * code stays correct, only slower. */
#ifndef RTSIM_SRC_SIM_COMPILER_H
#define RTSIM_SRC_SIM_COMPILER_H

/* Inline a helper that runs once per packet into its callers: a call there
 * costs registers saved and values spilled on the engine's hottest path
 * (bench/engine_cost.sh counts it: 11 instructions per packet). */
#if defined(__GNUC__)
#define SIM_HOT_INLINE inline __attribute__((always_inline))
#else
#define SIM_HOT_INLINE inline
#endif

#endif
