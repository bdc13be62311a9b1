/* The self-test on Cortex-M3 (portable/GCC/ARM_CM3), booted in QEMU's
 * mps2-an385: start-up code and vector table, the RX interrupt as a real
 * NVIC line (IRQ 13, the board's Ethernet line; the self-test pends it in
 * software), semihosting for output and the exit status (start-up, vectors
 * and semihosting in mps2_boot.c). */
#include <string.h>

#include "mps2_boot.h"
#include "selftest.h"
#include "task.h"

#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xE000E200u)
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define RX_IRQ 13u

void st_print(const char *s)
{
    mps2_print(s);
}

void st_exit(int status)
{
    mps2_exit(status);
}

/* ------------------------------------------------------------- platform */

void st_busy_wait_us(uint32_t us)
{
    /* SysTick keeps counting with interrupts masked: measure on it. */
    const uint32_t reload = SYST_RVR + 1u;
    const uint64_t need = (uint64_t)us * (configCPU_CLOCK_HZ / 1000000u);
    uint64_t elapsed = 0;
    uint32_t prev = SYST_CVR;
    while (elapsed < need) {
        const uint32_t cur = SYST_CVR;
        elapsed += prev >= cur ? prev - cur : prev + reload - cur;
        prev = cur;
    }
}

/* The tick clock only: a SysTick-derived ns clock would need the tick and
 * the counter read atomically, which the test does not exercise here. */
uint64_t (*const st_hw_clock)(void *drv) = NULL;

bool st_irq_masked(void)
{
    uint32_t basepri, primask;
    __asm__ volatile("mrs %0, basepri" : "=r"(basepri));
    __asm__ volatile("mrs %0, primask" : "=r"(primask));
    return basepri != 0u || (primask & 1u) != 0u;
}

void st_rx_line_write(bool on)
{
    if (on) {
        NVIC_ISER0 = 1u << RX_IRQ;
    } else {
        NVIC_ICER0 = 1u << RX_IRQ;
    }
    __asm__ volatile("dsb\n isb" ::: "memory");
}

void st_rx_raise(void)
{
    NVIC_ISPR0 = 1u << RX_IRQ;
    __asm__ volatile("dsb\n isb" ::: "memory");
}

void st_isr_exit(BaseType_t woken)
{
    portYIELD_FROM_ISR(woken);
}

void mps2_irq13_handler(void)
{
    st_rx_isr();
}

void vApplicationTickHook(void)
{
    st_tick();
}

void vApplicationIdleHook(void)
{
}

void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    st_print("stack overflow in task ");
    st_print(name);
    st_print("\n");
    st_exit(5);
}

_Static_assert(RX_IRQ == 13u, "mps2_boot.c puts mps2_irq13_handler at IRQ 13");

int main(void)
{
    /* The RX interrupt may call FromISR APIs: priority at the syscall limit. */
    NVIC_IPR[RX_IRQ] = (uint8_t)configMAX_SYSCALL_INTERRUPT_PRIORITY;
    NVIC_ICER0 = 1u << RX_IRQ;
    st_create_tasks();
    vTaskStartScheduler();
    st_print("scheduler returned\n");
    return 4;
}
