/* The device's NIC on the FreeRTOS POSIX port (see nic/rts_nic.h), for
 * either IP stack's interface: an AF_PACKET socket on a veth end, read by a
 * receive pthread outside FreeRTOS that plays the NIC's DMA engine; the
 * tick hook is the RX interrupt (rts_nic_tick_isr()). */
#define _GNU_SOURCE /* AF_PACKET, if_nametoindex, pthread_setaffinity_np */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rts_nic.h"

static int fd = -1;
static pthread_t rx_thread;

/* CPU time of the calling thread: the cost of a call even when the host
 * (or a higher-priority FreeRTOS task) preempts it midway. */
uint64_t rts_nic_hw_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *rx_main(void *arg)
{
    (void)arg;
    static uint8_t scratch[RTS_NIC_SLOT_BYTES];
    for (;;) {
        uint16_t slot = 0;
        uint8_t *mem = rts_nic_hw_slot(&slot);
        uint8_t *dst = mem != NULL ? mem : scratch;
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        const ssize_t n = recvfrom(fd, dst, RTS_NIC_SLOT_BYTES, 0, (struct sockaddr *)&from, &fl);
        if (n <= 0) {
            if (n < 0 && errno == EBADF) return NULL;
            continue; /* timeout (EAGAIN), EINTR */
        }
        if (from.sll_pkttype == PACKET_OUTGOING) continue; /* our own transmissions */
        if (mem == NULL) {
            rts_nic_hw_ring_full(); /* the NIC found no posted descriptor */
            continue;
        }
        rts_nic_hw_filled(slot, (uint16_t)n);
    }
}

BaseType_t rts_nic_hw_open(void)
{
    if (fd >= 0) return pdPASS;
    const unsigned idx = if_nametoindex(rts_nic_hw_cfg()->ifname);
    if (idx == 0u) return pdFAIL;
    fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) return pdFAIL;
    struct sockaddr_ll a;
    memset(&a, 0, sizeof a);
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = (int)idx;
    struct timeval tv = {0, 100000}; /* wake up now and then */
    const int rcvbuf = 8 << 20;        /* a flood's burst waits in the socket, not in a kernel drop */
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
        close(fd);
        fd = -1;
        return pdFAIL;
    }
    return pdPASS;
}

BaseType_t rts_nic_hw_start(void)
{
    /* The NIC's thread must never take the kernel's signals. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const int e = pthread_create(&rx_thread, NULL, rx_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) return pdFAIL;
    (void)pthread_setname_np(rx_thread, "rts-nic"); /* its own name in per-thread CPU times */
    const int cpu = rts_nic_hw_cfg()->rx_cpu;
    if (cpu >= 0) { /* the NIC's DMA beside, not on, the FreeRTOS CPU */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        (void)pthread_setaffinity_np(rx_thread, sizeof set, &set);
    }
    return pdPASS;
}

BaseType_t rts_nic_hw_output(const uint8_t *frame, size_t len)
{
    return send(fd, frame, len, MSG_DONTWAIT) == (ssize_t)len ? pdPASS : pdFAIL;
}

uint64_t (*const rts_nic_hw_clock)(void *drv) = NULL; /* libshield on the tick count */

void rts_nic_hw_reposted(void)
{
    /* the receive thread looks for a posted slot before each frame */
}

void rts_nic_hw_rx_irq(bool on)
{
    (void)on; /* the tick hook checks the gate: rts_irq_gate_enabled() */
}

void rts_nic_tick_isr(void)
{
    BaseType_t woken = pdFALSE;
    rts_nic_rx_isr(&woken);
    (void)woken; /* in the tick hook the kernel switches on its own yield-pending flag */
}
