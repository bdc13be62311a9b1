/* Booting a FreeRTOS program on QEMU's mps2-an385 (Cortex-M3): start-up
 * code, the vector table and semihosting, shared by the port's self-test
 * (main_cm3.c) and the rig's MPS2 board (rig/freertos/mps2-an385/). */
#ifndef RTS_MPS2_BOOT_H
#define RTS_MPS2_BOOT_H

/** The program's Ethernet interrupt (IRQ 13, the LAN9118's line on the
 *  mps2-an385); each program defines it. */
void mps2_irq13_handler(void);

/** A semihosting call: operation `op` with its parameter block `arg`
 *  (ARM semihosting: SYS_OPEN 0x01, SYS_CLOSE 0x02, SYS_WRITE 0x05,
 *  SYS_READ 0x06, SYS_FLEN 0x0C, SYS_GET_CMDLINE 0x15, ...). Returns r0. */
int mps2_semihost(int op, const void *arg);

/** Write a NUL-terminated string to the host (semihosting SYS_WRITE0). */
void mps2_print(const char *s);

/** End QEMU with `status` as its exit status (semihosting SYS_EXIT_EXTENDED). */
void mps2_exit(int status) __attribute__((noreturn));

#endif
