/* Per-packet cost of the receive path's ISR half, for callgrind.
 *
 *   rx_isr_cost SCENARIO N
 *
 * runs N packets through one scenario. Each scenario's per-packet work is a
 * noinline function named path_<scenario>; bench/rx_isr_cost.sh counts the
 * instructions inside it with `valgrind --tool=callgrind --toggle-collect`
 * and divides by N. Work needed to keep the state steady between packets
 * (the task taking the packet, refilling the ring) happens outside it.
 *
 * Scenarios:
 *   udp_registered  classify + enqueue of a UDP frame to a bound port
 *                   (eager half, path "queued", priority raise)
 *   short_circuit   a lowest-priority UDP frame while the ring is low:
 *                   classify + path (a) of Behnke Figure 8
 *   classify        the classifier alone on the registered-UDP frame
 *   descriptor      eager half from a NIC descriptor (Behnke §9): no classification
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../libshield/tests/rts_frames.h"
#include "cost_args.h"
#include "rtshield/rts_rx_driver.h"

static rts_rx_driver rx;
static uint8_t frame[128];
static size_t frame_len;
static volatile unsigned sink;

/* Not static, never inlined or cloned: callgrind finds them by name. */
void path_udp_registered(unsigned buf, rts_time_ns now);
void path_short_circuit(unsigned buf, rts_time_ns now);
void path_classify(void);
void path_descriptor(unsigned buf, unsigned flow, rts_time_ns now);

__attribute__((noinline, noclone)) void path_udp_registered(unsigned buf, rts_time_ns now)
{
    rts_rx_result r;
    (void)rts_rx_driver_eager_isr(&rx, buf, frame, frame_len, now, &r);
    sink += r.outcome;
}

__attribute__((noinline, noclone)) void path_short_circuit(unsigned buf, rts_time_ns now)
{
    rts_rx_result r;
    (void)rts_rx_driver_eager_isr(&rx, buf, frame, frame_len, now, &r);
    sink += r.outcome;
}

__attribute__((noinline, noclone)) void path_classify(void)
{
    sink += rts_classifier_classify_isr(&rx.flows, frame, frame_len, NULL);
}

__attribute__((noinline, noclone)) void path_descriptor(unsigned buf, unsigned flow, rts_time_ns now)
{
    rts_rx_result r;
    (void)rts_rx_driver_eager_desc_isr(&rx, buf, flow, 12, now, &r);
    sink += r.outcome;
}

/* A realistic table: eight bound sockets, the target bound last. */
static uint8_t setup(void)
{
    if (rts_rx_driver_init(&rx, NULL, 64, 32, 1, 0, 0, 0) != RTS_OK) abort();
    uint8_t id = 0;
    for (unsigned i = 0; i < 8; i++) {
        if (rts_flow_table_bind(&rx.flows, i % 2 ? RTS_PROTO_TCP : RTS_PROTO_UDP, 1000 + i, 0, &id) != RTS_OK) abort();
        (void)rts_flow_table_setopt(&rx.flows, id, RTS_FLOWOPT_PRIORITY, 2 + i, 0);
    }
    if (rts_flow_table_setopt(&rx.flows, id, RTS_FLOWOPT_CAPACITY, 1000000, 0) != RTS_OK) abort();
    if (rts_flow_table_setopt(&rx.flows, id, RTS_FLOWOPT_PERIOD_NS, 1000000, 0) != RTS_OK) abort();
    return id; /* UDP/TCP alternate: the last one, port 1007, is TCP */
}

/* The task side, outside the measured function: take the packet, free it,
 * refill the ring. */
static void drain(void)
{
    rts_rx_job job;
    while (rts_rx_driver_task_next(&rx, &job, NULL) == RTS_OK) {
        (void)rts_rx_driver_task_complete(&rx, job.prio);
        (void)rts_rx_driver_buf_free(&rx, job.buf);
        uint16_t b;
        (void)rts_rx_driver_task_refill(&rx, &b);
    }
}

/* A buffer currently in the ring. */
static unsigned ring_buf(void)
{
    for (unsigned b = 0; b < rx.fq.nbufs; b++) {
        if (rx.fq.state[b] == RTS_BUF_RING) return b;
    }
    abort();
}

int main(int argc, char **argv)
{
    const char *sc;
    const char *usage = "rx_isr_cost udp_registered|short_circuit|classify|descriptor N";
    const long n = cost_args(argc, argv, usage, &sc);
    uint8_t tcp_flow = setup();
    uint8_t udp_flow;
    if (rts_flow_table_bind(&rx.flows, RTS_PROTO_UDP, 502, 0, &udp_flow) != RTS_OK) abort();
    (void)rts_flow_table_setopt(&rx.flows, udp_flow, RTS_FLOWOPT_PRIORITY, 12, 0);
    frame_len = rts_fr_udp(frame, 0x0A000002u, 502, 12);
    (void)tcp_flow;
    if (strcmp(sc, "short_circuit") == 0) {
        /* Fill queues with the lowest-priority flow until the ring is low,
         * then keep sending that flow: every packet takes path (a). */
        uint8_t lp;
        if (rts_flow_table_bind(&rx.flows, RTS_PROTO_UDP, 600, 0, &lp) != RTS_OK) abort();
        (void)rts_flow_table_setopt(&rx.flows, lp, RTS_FLOWOPT_PRIORITY, 0, 0);
        frame_len = rts_fr_udp(frame, 0x0A000002u, 600, 12);
        rts_rx_result r;
        unsigned k = 0;
        do {
            (void)rts_rx_driver_eager_isr(&rx, ring_buf(), frame, frame_len, 0, &r);
        } while (r.outcome != RTS_RX_SHORT_CIRCUIT && ++k < 64);
        if (r.outcome != RTS_RX_SHORT_CIRCUIT) abort();
        rx.outcomes[RTS_RX_SHORT_CIRCUIT] = 0;
    }
    for (long i = 0; i < n; i++) {
        const rts_time_ns now = (rts_time_ns)i * 1000u;
        if (strcmp(sc, "udp_registered") == 0) {
            path_udp_registered(ring_buf(), now);
            drain();
        } else if (strcmp(sc, "short_circuit") == 0) {
            path_short_circuit(ring_buf(), now);
        } else if (strcmp(sc, "classify") == 0) {
            path_classify();
        } else if (strcmp(sc, "descriptor") == 0) {
            path_descriptor(ring_buf(), udp_flow, now);
            drain();
        } else {
            fprintf(stderr, "rx_isr_cost: unknown scenario %s\n", sc);
            return 2;
        }
    }
    if (strcmp(sc, "short_circuit") == 0 && rx.outcomes[RTS_RX_SHORT_CIRCUIT] < (uint32_t)n) abort();
    if (strcmp(sc, "udp_registered") == 0 && rx.outcomes[RTS_RX_QUEUED] < (uint32_t)n) abort();
    printf("%s: %ld packets, outcomes queued=%u short_circuit=%u\n", sc, n, rx.outcomes[RTS_RX_QUEUED],
           rx.outcomes[RTS_RX_SHORT_CIRCUIT]);
    return 0;
}
