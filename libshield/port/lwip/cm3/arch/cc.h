/* lwIP's arch/cc.h for a Cortex-M3 built with arm-none-eabi-gcc and newlib
 * (the platform's file; lwIP's arch.h supplies the rest: little-endian,
 * <stdint.h> and <inttypes.h> types and formats). */
#ifndef LWIP_ARCH_CC_H
#define LWIP_ARCH_CC_H

#include <stdint.h>

/* SYS_ARCH_PROTECT's saved state: with NO_SYS 1 the platform's
 * sys_arch_protect() returns PRIMASK and masks interrupts (cpsid i),
 * sys_arch_unprotect() restores it; with FreeRTOS, its sys_arch. */
typedef uint32_t sys_prot_t;

/* errno values (the netconn API's err_to_errno()): newlib's <errno.h>. */
#define LWIP_ERRNO_STDINCLUDE 1

/* Random numbers (initial UDP/TCP ports, TCP sequence numbers): the
 * platform's generator. */
unsigned int lwip_port_rand(void);
#define LWIP_RAND() (lwip_port_rand())

/* lwIP's diagnostics are off (LWIP_DEBUG undefined); a failed LWIP_ASSERT
 * goes to the platform, which reports it and stops. */
void lwip_port_assert(const char *msg, int line, const char *file);
#define LWIP_PLATFORM_DIAG(x) do { } while (0)
#define LWIP_PLATFORM_ASSERT(x) lwip_port_assert((x), __LINE__, __FILE__)

#endif
