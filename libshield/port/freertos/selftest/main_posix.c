/* The self-test on FreeRTOS's POSIX port (portable/ThirdParty/GCC/Posix).
 * Tasks are pthreads and interrupts are signals: the RX interrupt is
 * emulated in the tick hook (SIGALRM handler, a real interrupt context for
 * the kernel), gated by an emulated enable bit with a pending latch. Tasks
 * write output with write(2), never stdio; the idle hook sleeps. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "selftest.h"
#include "task.h"

static volatile bool line_on, pending;

void st_busy_wait_us(uint32_t us)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const long long end = (long long)t0.tv_sec * 1000000000LL + t0.tv_nsec + (long long)us * 1000LL;
    do {
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((long long)t.tv_sec * 1000000000LL + t.tv_nsec < end);
}

static uint64_t monotonic_ns(void *drv)
{
    (void)drv;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
uint64_t (*const st_hw_clock)(void *drv) = monotonic_ns;

bool st_irq_masked(void)
{
    sigset_t s;
    pthread_sigmask(SIG_BLOCK, NULL, &s);
    return sigismember(&s, SIGALRM) == 1;
}

void st_rx_line_write(bool on)
{
    line_on = on;
}

void st_rx_raise(void)
{
    pending = true;
}

void st_isr_exit(BaseType_t woken)
{
    /* In the tick hook: a FromISR call that woke a higher-priority task set
     * the kernel's yield-pending flag, and the tick handler switches. */
    (void)woken;
}

void st_print(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        const ssize_t w = write(1, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

void st_exit(int status)
{
    _exit(status);
}

void vApplicationTickHook(void)
{
    st_tick();
    if (pending && line_on) {
        pending = false;
        st_rx_isr();
    }
}

void vApplicationIdleHook(void)
{
    const struct timespec t = {0, 1000000};
    nanosleep(&t, NULL); /* the POSIX port's idle task must not spin */
}

int main(void)
{
    st_create_tasks();
    vTaskStartScheduler();
    st_print("scheduler returned\n");
    return 4;
}
