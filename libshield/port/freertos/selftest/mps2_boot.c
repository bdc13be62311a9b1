/* Start-up, vector table and semihosting on QEMU's mps2-an385 (see
 * mps2_boot.h). The memory map is mps2_an385.ld's. */
#include "mps2_boot.h"

#include <stdint.h>

/* ---------------------------------------------------------- semihosting */

int mps2_semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void mps2_print(const char *s)
{
    (void)mps2_semihost(0x04, s); /* SYS_WRITE0 */
}

void mps2_exit(int status)
{
    /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with the status */
    const uint32_t block[2] = {0x20026u, (uint32_t)status};
    (void)mps2_semihost(0x20, block);
    for (;;) {
    }
}

/* ------------------------------------------------------------- start-up */

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
extern void vPortSVCHandler(void);
extern void xPortPendSVHandler(void);
extern void xPortSysTickHandler(void);
int main(void);

void Reset_Handler(void);
void Reset_Handler(void)
{
    uint32_t *src = &_sidata;
    for (uint32_t *dst = &_sdata; dst < &_edata;) *dst++ = *src++;
    for (uint32_t *dst = &_sbss; dst < &_ebss;) *dst++ = 0u;
    (void)main();
    mps2_exit(6);
}

static void fault_handler(void)
{
    mps2_print("fault or unexpected interrupt\n");
    mps2_exit(7);
}

typedef void (*vector_fn)(void);
__attribute__((section(".isr_vector"), used)) static const vector_fn vectors[16 + 32] = {
    (vector_fn)(uintptr_t)&_estack,
    Reset_Handler,
    fault_handler, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
    0, 0, 0, 0,
    vPortSVCHandler,
    fault_handler, /* DebugMon */
    0,
    xPortPendSVHandler,
    xPortSysTickHandler,
#define F4 fault_handler, fault_handler, fault_handler, fault_handler
    F4, F4, F4, fault_handler, /* IRQ 0..12 */
    mps2_irq13_handler,        /* IRQ 13: Ethernet (the self-test's RX line) */
    F4, F4, F4, F4, fault_handler, fault_handler, /* IRQ 14..31 */
};
