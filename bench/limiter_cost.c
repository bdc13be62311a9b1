/* Instructions per decision of each interrupt limiter, for callgrind.
 *
 *   limiter_cost SCENARIO N
 *
 * makes N decisions of one limiter in its steady state (the common case:
 * the interrupt or packet is admitted and nothing else happens, or the
 * stated refusal). bench/limiter_cost.sh counts the instructions inside the
 * library function with `valgrind --tool=callgrind --toggle-collect=FN`
 * and divides by N.
 *
 * Scenarios (FN in brackets):
 *   strict_admit     strict limiter, interarrival above t_min  [rts_strict_on_irq_isr]
 *   bursty_admit     bursty limiter, within the burst          [rts_bursty_on_irq_isr]
 *   burst_admit      Burst Mitigation, within the slice        [rts_burst_mit_on_rx_isr]
 *   burst_refuse     Burst Mitigation, slice used up (line off) [rts_burst_mit_on_rx_isr]
 *   countdown_pass   countdown filter, window open: delivered  [rts_countdown_on_arrival_isr]
 *   glim_admit       global limit, under capacity              [rts_global_limit_admit_isr]
 *   flow_admit       flow server, budget left                  [rts_flow_table_admit_isr]
 *   queue_fail       Queue Mitigation, enqueue failed (line already off) [rts_queue_mit_on_enqueue_fail_isr]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_args.h"
#include "rtshield/rts_burst_mit.h"
#include "rtshield/rts_bursty.h"
#include "rtshield/rts_countdown.h"
#include "rtshield/rts_flow_table.h"
#include "rtshield/rts_global_limit.h"
#include "rtshield/rts_queue_mit.h"
#include "rtshield/rts_strict.h"

static volatile uint32_t sink;

int main(int argc, char **argv)
{
    const char *sc;
    const long n = cost_args(argc, argv, "limiter_cost SCENARIO N", &sc);
    uint32_t admitted = 0;
    if (strcmp(sc, "strict_admit") == 0) {
        rts_strict s;
        if (rts_strict_init(&s, 1000) != RTS_OK) abort();
        for (long i = 0; i < n; i++) {
            const rts_time_ns t = (rts_time_ns)(i + 1) * 10000u;
            rts_action a = rts_strict_on_irq_isr(&s, t);
            admitted += !(a.flags & RTS_ACT_DROP);
            sink += a.flags + rts_strict_on_timer_isr(&s, t + 1000u).flags; /* the line back on */
        }
    } else if (strcmp(sc, "bursty_admit") == 0) {
        rts_bursty b;
        uint32_t id;
        if (rts_bursty_init(&b, 1000000u, RTS_BURSTY_TIMER_PERIODIC) != RTS_OK) abort();
        if (rts_bursty_add_source(&b, 0xFFFFFFFu, &id) != RTS_OK) abort();
        sink += rts_bursty_start(&b, 0).flags;
        for (long i = 0; i < n; i++) {
            rts_action a = rts_bursty_on_irq_isr(&b, id, (rts_time_ns)i * 10u);
            admitted += !(a.flags & RTS_ACT_DROP);
            sink += a.flags;
        }
    } else if (strcmp(sc, "burst_admit") == 0 || strcmp(sc, "burst_refuse") == 0) {
        rts_burst_mit m;
        rts_burst_mit_cfg cfg;
        rts_burst_mit_cfg_default(&cfg);
        cfg.capacity = strcmp(sc, "burst_admit") == 0 ? 0xFFFFFFFu : 1u;
        cfg.slice_ns = 1000000000000ull;
        if (rts_burst_mit_init(&m, &cfg) != RTS_OK) abort();
        sink += rts_burst_mit_on_rx_isr(&m, 0).flags; /* opens the slice */
        for (long i = 0; i < n; i++) {
            rts_action a = rts_burst_mit_on_rx_isr(&m, (rts_time_ns)i * 1000u);
            admitted += !(a.flags & RTS_ACT_DROP);
            sink += a.flags;
        }
    } else if (strcmp(sc, "countdown_pass") == 0) {
        rts_countdown c;
        if (rts_countdown_init(&c, 1, 0) != RTS_OK) abort();
        for (long i = 0; i < n; i++) {
            rts_action a = rts_countdown_on_arrival_isr(&c, (rts_time_ns)(i + 1) * 1000u);
            admitted += (a.flags & RTS_ACT_DELIVER) != 0;
            sink += a.flags;
        }
    } else if (strcmp(sc, "glim_admit") == 0) {
        rts_global_limit g;
        if (rts_global_limit_init(&g, 0xFFFFFFFu, 1000000000000ull, 0) != RTS_OK) abort();
        for (long i = 0; i < n; i++) {
            rts_action a;
            admitted += rts_global_limit_admit_isr(&g, (rts_time_ns)i * 1000u, &a);
            sink += a.flags;
        }
    } else if (strcmp(sc, "flow_admit") == 0) {
        rts_flow_table t;
        uint8_t id;
        rts_flow_table_init(&t, 0);
        if (rts_flow_table_bind(&t, RTS_PROTO_UDP, 502, 0, &id) != RTS_OK) abort();
        if (rts_flow_table_setopt(&t, id, RTS_FLOWOPT_PERIOD_NS, 1000000000000ull, 0) != RTS_OK) abort();
        if (rts_flow_table_setopt(&t, id, RTS_FLOWOPT_CAPACITY, 0xFFFFFFFu, 0) != RTS_OK) abort();
        for (long i = 0; i < n; i++) admitted += rts_flow_table_admit_isr(&t, id, (rts_time_ns)i * 1000u);
    } else if (strcmp(sc, "queue_fail") == 0) {
        rts_queue_mit q;
        if (rts_queue_mit_init(&q) != RTS_OK) abort();
        sink += rts_queue_mit_on_enqueue_fail_isr(&q, 0).flags; /* the line goes off */
        for (long i = 0; i < n; i++) sink += rts_queue_mit_on_enqueue_fail_isr(&q, (rts_time_ns)i).flags;
        admitted = (uint32_t)n;
    } else {
        fprintf(stderr, "limiter_cost: unknown scenario %s\n", sc);
        return 2;
    }
    const int refuse = strcmp(sc, "burst_refuse") == 0;
    if ((refuse ? admitted != 0 : admitted != (uint32_t)n)) {
        fprintf(stderr, "limiter_cost: %s: %u of %ld admitted, not the steady state measured\n", sc,
                admitted, n);
        return 1;
    }
    printf("%s: %ld decisions\n", sc, n);
    return 0;
}
