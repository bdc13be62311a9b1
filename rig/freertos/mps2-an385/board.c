/* The MPS2 board (app/rts_board.h): the device application on Cortex-M3 as
 * QEMU's mps2-an385 emulates it, its NIC the SMSC LAN9118 (rts_netif_mps2.c).
 *
 *   qemu-system-arm -M mps2-an385 -kernel rts_mps2_device.elf \
 *     -semihosting-config enable=on,target=native,arg=rts_mps2_device,arg=CONFIG ...
 *
 * The config is the host file CONFIG, read through semihosting (its path is
 * the command line's last word: no blanks in it); results are host files in
 * its `out` folder, written through semihosting; "ready", "done" and a
 * "sync GUEST_NS" line per 100 ms snapshot go to the semihosting console
 * (QEMU's stdout), error lines to stderr; the exit status is QEMU's
 * (SYS_EXIT_EXTENDED). Time is guest time on the board's 25 MHz timer
 * (mps2_clock.h); a task's work is a calibrated count of loop iterations,
 * so it is CPU time of that task (a preempted loop does not advance) and,
 * under QEMU's -icount, a fixed number of instructions. */
#include <stdbool.h>
#include <string.h>

#include "FreeRTOS.h"
#include "mps2_boot.h"
#include "mps2_clock.h"
#include "rts_board.h"
#include "task.h"


/* ------------------------------------------------------------ semihosting */

enum { SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITE = 0x05, SYS_READ = 0x06, SYS_FLEN = 0x0C, SYS_GET_CMDLINE = 0x15 };
enum { MODE_R = 0, MODE_WB = 5, MODE_A = 8 }; /* "r", "wb", "a" (":tt" with "a" is stderr) */

static int sh_open(const char *path, int mode)
{
    const uint32_t block[3] = {(uint32_t)(uintptr_t)path, (uint32_t)mode, (uint32_t)strlen(path)};
    return mps2_semihost(SYS_OPEN, block);
}

static void sh_write(int fd, const void *data, size_t len)
{
    const uint32_t block[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)data, (uint32_t)len};
    (void)mps2_semihost(SYS_WRITE, block);
}

/* ----------------------------------------------------------------- board */

uint64_t rts_board_now_ns(void)
{
    return rts_mps2_now_ns();
}

/* The work loop: two instructions per iteration. */
static void spin(uint32_t n)
{
    if (n == 0u) return;
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n)::"cc");
}

static uint32_t iters_per_ms; /* calibrated at boot */

static void calibrate(void)
{
    const uint32_t n = 1u << 20;
    const uint64_t t0 = rts_mps2_cycles();
    spin(n);
    const uint64_t dt = rts_mps2_cycles() - t0;
    iters_per_ms = (uint32_t)((uint64_t)n * (RTS_MPS2_CLOCK_HZ / 1000u) / (dt ? dt : 1u));
}

void rts_board_work(uint32_t us)
{
    uint64_t n = (uint64_t)us * iters_per_ms / 1000u;
    while (n > 0u) {
        const uint32_t k = n > 0x40000000u ? 0x40000000u : (uint32_t)n;
        spin(k);
        n -= k;
    }
}

void rts_board_say(const char *s)
{
    mps2_print(s);
}

void rts_board_error(const char *line)
{
    const int fd = sh_open(":tt", MODE_A);
    if (fd >= 0) {
        sh_write(fd, line, strlen(line));
    } else {
        mps2_print(line);
    }
}

void rts_board_exit(int status)
{
    mps2_exit(status);
}

int rts_board_open(const char *path)
{
    return sh_open(path, MODE_WB);
}

void rts_board_write(int fd, const void *data, size_t len)
{
    sh_write(fd, data, len);
}

void rts_board_close(int fd)
{
    const uint32_t block[1] = {(uint32_t)fd};
    (void)mps2_semihost(SYS_CLOSE, block);
}

bool rts_board_exists(const char *path)
{
    const int fd = sh_open(path, MODE_R);
    if (fd < 0) return false;
    rts_board_close(fd);
    return true;
}

/* The LAN9118 interrupt's time by the task it interrupted (rts_netif_mps2.c;
 * weak: the stock image, rts_net_stock.c, has no such count). */
extern uint64_t rts_netif_mps2_isr_ns_in(TaskHandle_t task) __attribute__((weak));
extern uint64_t rts_netif_mps2_isr_ns(void) __attribute__((weak));

/* Run time of each task (FreeRTOS run-time stats on the board's clock),
 * "name#number": ns. FreeRTOS counts an interrupt in the task it
 * interrupted; the LAN9118 interrupt's time is taken out of each task's and
 * reported as a thread of its own, "eth-isr#0" (the tick's and the other
 * interrupts' stay in the tasks they hit). */
void rts_board_put_threads(void)
{
    static TaskStatus_t st[24];
    const UBaseType_t n = uxTaskGetSystemState(st, sizeof st / sizeof st[0], NULL);
    const bool apart = rts_netif_mps2_isr_ns_in != NULL && rts_netif_mps2_isr_ns != NULL;
    rts_device_put(" \"threads_cpu_ns\": {");
    for (UBaseType_t i = 0; i < n; i++) {
        const uint64_t run = (uint64_t)st[i].ulRunTimeCounter * RTS_MPS2_NS_PER_CYCLE;
        const uint64_t isr = apart ? rts_netif_mps2_isr_ns_in(st[i].xHandle) : 0u;
        rts_device_put("%s\"%s#%u\": %llu", i ? ", " : "", st[i].pcTaskName, (unsigned)st[i].xTaskNumber,
                       (unsigned long long)(run > isr ? run - isr : 0u));
    }
    if (apart) rts_device_put(", \"eth-isr#0\": %llu", (unsigned long long)rts_netif_mps2_isr_ns());
    rts_device_put("},\n");
}

void rts_board_tick_isr(void)
{
    /* The clock was read by the tick hook: its 32-bit timer never wraps unseen. */
}

void rts_board_idle(void)
{
    /* No WFI: the idle loop spins, so guest time advances only with
     * instructions and never jumps (docs/decisions/mps2-board.md). */
}

void rts_board_put_link(void)
{
    /* No arrival times: QEMU's TAP hands frames to the emulated NIC unstamped
     * (the runner counts them with its TAP samples). */
}

void rts_board_snapshot(uint64_t t_ns)
{
    char line[48];
    (void)rts_device_fmt(line, sizeof line, "sync %llu %lu\n", (unsigned long long)t_ns,
                         (unsigned long)xTaskGetTickCount());
    mps2_print(line);
}

void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    char line[64];
    (void)rts_device_fmt(line, sizeof line, "%s: stack overflow in task %s\n", RTS_BOARD_PROGRAM, name);
    rts_board_error(line);
    mps2_exit(5);
}


static void fail(const char *what, const char *arg)
{
    char line[700];
    (void)rts_device_fmt(line, sizeof line, "%s: %s%s\n", RTS_BOARD_PROGRAM, what, arg);
    rts_board_error(line);
    mps2_exit(2);
}

int main(void)
{
    rts_mps2_clock_start();
    calibrate();
    static char cmdline[768];
    uint32_t block[2] = {(uint32_t)(uintptr_t)cmdline, sizeof cmdline};
    if (mps2_semihost(SYS_GET_CMDLINE, block) != 0) fail("no command line (semihosting)", "");
    const char *path = strrchr(cmdline, ' ');
    path = path != NULL ? path + 1 : cmdline;
    if (*path == '\0' || strcmp(path, RTS_BOARD_PROGRAM) == 0)
        fail("usage: -semihosting-config enable=on,target=native,arg=" RTS_BOARD_PROGRAM ",arg=CONFIG", "");
    const int fd = sh_open(path, MODE_R);
    if (fd < 0) fail("cannot open config ", path);
    static char config[16384];
    const uint32_t flen[1] = {(uint32_t)fd};
    const int len = mps2_semihost(SYS_FLEN, flen);
    if (len < 0 || (size_t)len >= sizeof config) fail("config too long or unreadable: ", path);
    const uint32_t rd[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)config, (uint32_t)len};
    if (mps2_semihost(SYS_READ, rd) != 0) fail("cannot read config ", path);
    rts_board_close(fd);
    config[len] = '\0';
    rts_device_start(config);
    vTaskStartScheduler();
    fail("the scheduler returned", "");
    return 1;
}
