/* The device's NIC on the FreeRTOS POSIX port (see nic/rts_nic.h), for
 * either IP stack's interface: an AF_PACKET socket on a veth end, read by a
 * receive pthread outside FreeRTOS that plays the NIC's DMA engine; the
 * tick hook is the RX interrupt (rts_nic_tick_isr()).
 *
 * Beside the NIC's own counters it records when the frames reached the
 * link: each frame's kernel arrival time (SO_TIMESTAMPNS: when the veth's
 * peer handed it over, however late the receive thread reads it) binned by
 * LINK_BIN_NS of the board's clock (device.json "link_frames"). The NIC's
 * counts follow the receive thread, which a loaded host runs late and in
 * bursts; the bins show how the traffic itself was spaced. */
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

#include "rts_board.h" /* RTS_BOARD_MAX_SNAP */
#include "rts_nic.h"

static int fd = -1;
static pthread_t rx_thread;

/* Frames that reached the link per LINK_BIN_NS of the board's clock from
 * link_t0 (set when the NIC opens); one bin per snapshot the board records.
 * Written by the receive thread only, read by the report. */
#define LINK_BIN_NS 100000000ull
#define LINK_BINS RTS_BOARD_MAX_SNAP
static uint32_t link_bins[LINK_BINS];
static uint64_t link_t0;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Count a frame that the kernel timestamped `arrived` (CLOCK_REALTIME; NULL:
 * none, then now) in its bin of the board's clock (CLOCK_MONOTONIC). */
static void link_count(const struct timespec *arrived)
{
    const uint64_t mono = clock_ns(CLOCK_MONOTONIC);
    uint64_t at = mono;
    if (arrived != NULL) {
        const uint64_t real = clock_ns(CLOCK_REALTIME);
        const uint64_t stamp = (uint64_t)arrived->tv_sec * 1000000000u + (uint64_t)arrived->tv_nsec;
        const uint64_t ago = real > stamp ? real - stamp : 0u; /* time since it arrived */
        at = mono > ago ? mono - ago : 0u;
    }
    if (at < link_t0) return;
    const uint64_t bin = (at - link_t0) / LINK_BIN_NS;
    if (bin < LINK_BINS) __atomic_fetch_add(&link_bins[bin], 1u, __ATOMIC_RELAXED);
}

const uint32_t *rts_nic_posix_link(uint64_t *t0_ns, uint64_t *bin_ns, uint32_t *n)
{
    uint32_t k = LINK_BINS;
    while (k > 0 && __atomic_load_n(&link_bins[k - 1], __ATOMIC_RELAXED) == 0u) k--;
    *t0_ns = link_t0;
    *bin_ns = LINK_BIN_NS;
    *n = k;
    return link_bins;
}

/* CPU time of the calling thread: the cost of a call even when the host
 * (or a higher-priority FreeRTOS task) preempts it midway. */
uint64_t rts_nic_hw_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
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
        struct iovec iov = {dst, RTS_NIC_SLOT_BYTES};
        union {
            char buf[CMSG_SPACE(sizeof(struct timespec))];
            struct cmsghdr align;
        } ctl;
        struct msghdr msg = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
                             .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
        const ssize_t n = recvmsg(fd, &msg, 0);
        if (n <= 0) {
            if (n < 0 && errno == EBADF) return NULL;
            continue; /* timeout (EAGAIN), EINTR */
        }
        if (from.sll_pkttype == PACKET_OUTGOING) continue; /* our own transmissions */
        const struct timespec *arrived = NULL;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
                c->cmsg_len >= CMSG_LEN(sizeof(struct timespec)))
                arrived = (const struct timespec *)(void *)CMSG_DATA(c);
        link_count(arrived);
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
    const int on = 1;
    const int rcvbuf = 8 << 20;        /* a flood's burst waits in the socket, not in a kernel drop */
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0) {
        close(fd);
        fd = -1;
        return pdFAIL;
    }
    link_t0 = clock_ns(CLOCK_MONOTONIC);
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
