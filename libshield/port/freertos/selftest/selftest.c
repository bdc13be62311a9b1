/* Self-test of the FreeRTOS port (rts_port_freertos) and of the glue that
 * performs rts_shield decisions (rts_shield_freertos), on the real kernel.
 *
 *  1. critical sections: task and ISR pairs mask the tick and nest;
 *  2. timers: one-shot from a task and from the RX ISR fire at the armed
 *     tick, a cancelled one never, a re-armed one once at its new time, a
 *     timer whose interrupt is off not at all, a periodic one every period;
 *  3. priorities: a control frame raises the network task (deferred from
 *     the ISR through the timer service task), which falls back after;
 *  4. a flood through rts_shield's receive path: a SYN flood (unbound port,
 *     best effort) and a bulk UDP flow over its flow server, with a control
 *     flow: every control frame delivered at the inherited priority, the
 *     flood shed by libshield with its reasons counted, every frame
 *     accounted for, no buffer lost;
 *  5. the global limit: over capacity the RX line goes off, the poll timer
 *     wakes the polling task (F_POLL) until a period starts below capacity,
 *     then the line comes back on;
 *  6. Budget Mitigation with a periodic critical task below the network
 *     task: the network task is suspended (F_SUSPEND) when its budget is
 *     spent and resumed (F_RESUME) by the critical task's next report; the
 *     RX line is held meanwhile; the critical task keeps completing cycles
 *     and the network stays within the granted budget.
 * The program prints its counters and exits 0 when every check holds. */
#include "selftest.h"

#include <string.h>

#include "rts_shield_freertos.h"
#include "task.h"

/* ------------------------------------------------------------- checks */

static volatile unsigned failures;
static char line_buf[160];

static void put_str(char **p, const char *s)
{
    while (*s != '\0' && *p < line_buf + sizeof line_buf - 2) *(*p)++ = *s++;
}

static void put_u64(char **p, uint64_t v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u && n < (int)sizeof d);
    while (n > 0 && *p < line_buf + sizeof line_buf - 2) *(*p)++ = d[--n];
}

static void say(const char *a, const char *b, uint64_t v, bool with_v)
{
    char *p = line_buf;
    put_str(&p, a);
    put_str(&p, b);
    if (with_v) put_u64(&p, v);
    *p++ = '\n';
    *p = '\0';
    st_print(line_buf);
}

static void check(bool ok, const char *what, uint64_t got)
{
    if (ok) return;
    failures++;
    say("FAIL: ", what, got, true);
}

#define CHECK(cond, got) check((cond), #cond " -- got ", (uint64_t)(got))

static void report(const char *name, uint64_t v)
{
    say("  ", name, v, true);
}

void rts_selftest_assert(const char *file, int line)
{
    say("kernel assert failed: ", file, (uint64_t)line, true);
    st_exit(2);
}

static void lib_assert(const char *msg, const char *file, int line)
{
    (void)file;
    say("libshield assert failed: ", msg, (uint64_t)line, true);
    st_exit(3);
}

/* ------------------------------------------------------------ the device */

enum {
    PRIO_NET = 2,     /* network task's base priority */
    PRIO_POLL = 4,    /* global limit's polling task */
    PRIO_RUNNER = 5,  /* this test: sleeps while the device works */
    PRIO_CTRL = 6,    /* control flow: its receiver's priority */
    PRIO_CRIT = 1,    /* phase 6: below the network task, as a driver at the critical
                         task's level in Danicki et al.: only the budget protects it */
    CRIT_PERIOD_MS = 10,
    CRIT_WORK_US = 3000,
    PRIO_BULK = 1,
    NBUFS = 32,
    RING = 16,
    FRAME_BYTES = 96,
    WORK_US = 250,    /* network task: CPU per frame (4 per 1 ms tick) */
    PORT_CTRL = 502,
    PORT_BULK = 600,
    PORT_SYN = 80     /* not bound: the default (best effort) flow */
};

enum { K_CTRL, K_BULK, K_SYN, KINDS };
static const char *const kind_name[KINDS] = {"control", "bulk", "syn"};

static rts_freertos fr;
static rts_freertos_shield g;
static rts_shield sh;
static TaskHandle_t net_task, poll_task, runner_task, crit_task;
static StaticTask_t net_tcb, poll_tcb, runner_tcb, crit_tcb;
static StackType_t crit_stack[configMINIMAL_STACK_SIZE * 2];
static StackType_t net_stack[configMINIMAL_STACK_SIZE * 2];
static StackType_t poll_stack[configMINIMAL_STACK_SIZE * 2];
static StackType_t runner_stack[configMINIMAL_STACK_SIZE * 4];

/* The NIC: a FIFO of posted buffers (the descriptor ring) and a FIFO of
 * filled descriptors waiting to be harvested. Shared by the wire and the RX
 * ISR (interrupt context) and the tasks (inside rts_freertos_lock()). */
static uint8_t mem[NBUFS][FRAME_BYTES];
static uint16_t len_of[NBUFS];
static uint8_t kind_of[NBUFS];
static uint16_t posted[NBUFS], posted_head, posted_n;
static uint16_t filled[NBUFS], filled_head, filled_n;

/* Give buffer `b` to the ring (ctx unused: the ring is this file's). */
static void post(void *ctx, uint16_t b)
{
    (void)ctx;
    posted[(posted_head + posted_n) % NBUFS] = b;
    posted_n++;
}

/* Counters (written in one context each, read by the runner when quiet). */
typedef struct {
    volatile uint32_t sent[KINDS], nic_drops[KINDS], dropped[KINDS], delivered[KINDS];
    volatile uint32_t outcome[RTS_RX_OUTCOMES + 1];
    volatile uint32_t ctrl_prio_min, isr_runs, line_off, line_on, left_for_poll, stops, poll_wakes,
        poll_harvested;
} counters;
static counters c;

/* The wire: what arrives per tick while `wire` is on. */
static volatile bool wire;
static volatile uint32_t wire_ticks, wire_max, syn_per_tick, bulk_per_tick, ctrl_every;
static uint8_t frame_tmpl[KINDS][FRAME_BYTES];
static uint16_t frame_len[KINDS];

/* The driver's RX line callback (rts_freertos_cfg.rx_irq_set). */
static volatile bool rx_line_on;
static void drv_rx_irq_set(void *drv, unsigned line, bool on)
{
    (void)drv;
    (void)line;
    rx_line_on = on;
    if (on) {
        c.line_on++;
    } else {
        c.line_off++;
    }
    st_rx_line_write(on);
}

/* ------------------------------------------------------- hand-built frames */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Ethernet II + IPv4 + UDP (17) or TCP SYN (6), 60 bytes or more. */
static uint16_t build_frame(uint8_t *f, uint8_t proto, uint32_t src, uint16_t dport)
{
    memset(f, 0, FRAME_BYTES);
    static const uint8_t dst_mac[6] = {0x02, 0, 0, 0, 0, 0x01}, src_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
    memcpy(f, dst_mac, 6);
    memcpy(f + 6, src_mac, 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    const uint16_t l4 = proto == 6 ? 20u : 8u, total = (uint16_t)(20u + l4 + 4u);
    ip[0] = 0x45;
    put16(ip + 2, total);
    ip[8] = 64;
    ip[9] = proto;
    put16(ip + 12, (uint16_t)(src >> 16));
    put16(ip + 14, (uint16_t)src);
    put16(ip + 16, 0x0A00);
    put16(ip + 18, 0x0001);
    uint8_t *t = ip + 20;
    put16(t, 40000);
    put16(t + 2, dport);
    if (proto == 17) put16(t + 4, (uint16_t)(l4 + 4u));
    if (proto == 6) {
        t[12] = 0x50;
        t[13] = 0x02; /* SYN */
    }
    const uint16_t len = (uint16_t)(14u + total);
    return len < 60u ? 60u : len;
}

/* ----------------------------------------------------------- interrupts */

/* ISR-context probes requested by the runner. */
static volatile uint32_t probe_nesting, probe_timer;
static volatile uint32_t nest_result; /* bit 0 done, 1..3 masked states, 4 restored */
static volatile rts_time_ns probe_armed_at;

static void deliver(unsigned k)
{
    c.sent[k]++;
    if (posted_n == 0u) {
        c.nic_drops[k]++; /* the NIC finds no posted buffer */
        return;
    }
    const uint16_t b = posted[posted_head];
    posted_head = (uint16_t)((posted_head + 1u) % NBUFS);
    posted_n--;
    memcpy(mem[b], frame_tmpl[k], frame_len[k]);
    len_of[b] = frame_len[k];
    kind_of[b] = (uint8_t)k;
    filled[(filled_head + filled_n) % NBUFS] = b;
    filled_n++;
}

void st_tick(void)
{
    if (!wire) return;
    if (wire_ticks >= wire_max) {
        wire = false; /* exactly wire_max ticks of traffic */
        return;
    }
    const uint32_t t = wire_ticks++;
    if (ctrl_every != 0u && t % ctrl_every == 0u) deliver(K_CTRL); /* first in its batch */
    for (uint32_t i = 0; i < bulk_per_tick; i++) deliver(K_BULK);
    for (uint32_t i = 0; i < syn_per_tick; i++) deliver(K_SYN);
    st_rx_raise();
}

/* Harvest filled descriptors through the shield (RX ISR, or the polling task
 * inside the critical section). Returns after at most `max` frames, at the
 * global limit, or when none is left. */
static uint32_t harvest(void *ctx, uint32_t max, BaseType_t *woken)
{
    (void)ctx;
    uint32_t n = 0;
    while (n < max && filled_n > 0u) {
        const uint16_t b = filled[filled_head];
        rts_shield_rx rx;
        uint32_t flags = 0;
        uint8_t why = 0;
        if (rts_freertos_shield_frame_isr(&g, b, mem[b], len_of[b], 0, 0, &rx, &flags, &why, woken) != RTS_OK) {
            failures++;
            break;
        }
        c.outcome[rx.outcome <= RTS_RX_OUTCOMES ? rx.outcome : RTS_RX_OUTCOMES]++;
        if (rx.outcome == RTS_RX_GLOBAL_LIMIT) {
            c.left_for_poll++; /* stays in the ring for the polling task */
            break;
        }
        filled_head = (uint16_t)((filled_head + 1u) % NBUFS);
        filled_n--;
        n++;
        if (rx.repost != RTS_BUF_NONE) {
            c.dropped[kind_of[rx.repost]]++; /* its own buffer, or a recycled one */
            post(ctx, rx.repost);
        }
        if (flags & RTS_SHIELD_F_STOP) {
            c.stops++; /* the global limit took its last frame: go polling */
            break;
        }
    }
    return n;
}

void st_rx_isr(void)
{
    BaseType_t woken = pdFALSE;
    c.isr_runs++;
    if (probe_nesting) {
        probe_nesting = 0;
        const bool m0 = st_irq_masked();
        const UBaseType_t s1 = rts_freertos_lock_isr();
        const bool m1 = st_irq_masked();
        const UBaseType_t s2 = rts_freertos_lock_isr();
        const bool m2 = st_irq_masked();
        rts_freertos_unlock_isr(s2);
        const bool m3 = st_irq_masked();
        rts_freertos_unlock_isr(s1);
        const bool m4 = st_irq_masked() == m0;
        nest_result = 1u | (m1 ? 2u : 0u) | (m2 ? 4u : 0u) | (m3 ? 8u : 0u) | (m4 ? 16u : 0u);
    }
    if (probe_timer) {
        probe_timer = 0;
        probe_armed_at = rts_freertos_now_ns_isr(&fr) + 3000000u;
        fr.port.timer_arm(fr.port.ctx, 1, probe_armed_at);
        if (rts_freertos_take_woken(&fr) != pdFALSE) woken = pdTRUE;
    }
    if (g.sh != NULL && rts_freertos_shield_irq_isr(&g, 0, &woken)) (void)harvest(NULL, NBUFS, &woken);
    st_isr_exit(woken);
}

/* ---------------------------------------------------------------- tasks */

/* The stack's processing of job->buf, at the network task's priority. */
static rts_time_ns process(void *ctx, const rts_rx_job *job)
{
    (void)ctx;
    const unsigned k = kind_of[job->buf];
    if (k == K_CTRL) {
        const uint32_t p = (uint32_t)uxTaskPriorityGet(NULL);
        if (p < c.ctrl_prio_min) c.ctrl_prio_min = p;
    }
    st_busy_wait_us(WORK_US);
    c.delivered[k]++;
    return (rts_time_ns)WORK_US * 1000u;
}

static void net_task_fn(void *arg)
{
    (void)arg;
    for (;;) {
        if (g.sh == NULL) {
            (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
        } else if (rts_freertos_shield_task_step(&g, process, post, NULL) != RTS_OK) {
            failures++;
        }
    }
}

static void poll_task_fn(void *arg)
{
    (void)arg;
    for (;;) {
        const uint32_t n = rts_freertos_shield_poll_step(&g, harvest, NULL); /* F_POLL */
        c.poll_wakes++;
        c.poll_harvested += n;
    }
}

/* ------------------------------------------------------------- 1: locks */

static void test_critical_sections(void)
{
    say("critical sections", "", 0, false);
    CHECK(!st_irq_masked(), 1);
    rts_freertos_lock();
    const bool m1 = st_irq_masked();
    const TickType_t t0 = xTaskGetTickCount();
    rts_freertos_lock();
    st_busy_wait_us(4000);
    const TickType_t t1 = xTaskGetTickCount();
    rts_freertos_unlock();
    const bool m2 = st_irq_masked();
    st_busy_wait_us(4000);
    const TickType_t t2 = xTaskGetTickCount();
    rts_freertos_unlock();
    const bool m3 = st_irq_masked();
    TickType_t t3 = xTaskGetTickCount();
    for (int i = 0; i < 200 && t3 == t0; i++) { /* the pended tick, or the next one */
        st_busy_wait_us(500);
        t3 = xTaskGetTickCount();
    }
    CHECK(m1, m1);
    CHECK(m2, m2);  /* still inside the outer section */
    CHECK(!m3, m3); /* both left */
    CHECK(t1 == t0, t1 - t0); /* no tick while masked, nested */
    CHECK(t2 == t0, t2 - t0); /* nor after leaving the inner one */
    CHECK(t3 > t0, t3 - t0);  /* ticks again */

    probe_nesting = 1; /* the same pair from the RX interrupt */
    st_rx_line_write(true);
    st_rx_raise();
    for (int i = 0; i < 50 && (nest_result & 1u) == 0u; i++) vTaskDelay(1);
    st_rx_line_write(false);
    CHECK(nest_result & 1u, nest_result);   /* the ISR ran */
    CHECK(nest_result & 2u, nest_result);   /* masked after the first */
    CHECK(nest_result & 4u, nest_result);   /* and the nested one */
    CHECK(nest_result & 8u, nest_result);   /* still masked after the inner exit */
    CHECK(nest_result & 16u, nest_result);  /* the ISR's own level restored */
}

/* ------------------------------------------------------------ 2: timers */

static volatile uint32_t fires[RTS_FREERTOS_TIMERS];
static volatile rts_time_ns fired_at[RTS_FREERTOS_TIMERS];

static volatile uint32_t rearm_from_callback;
static volatile rts_time_ns rearmed_at;

static void record_timer(void *arg, unsigned t)
{
    (void)arg;
    if (t < RTS_FREERTOS_TIMERS) {
        fires[t]++;
        fired_at[t] = rts_freertos_now_ns(&fr);
    }
    if (t == 0u && rearm_from_callback) {
        /* Timer 3 is due in this same tick: the re-arm must win over the
         * expiry that is already due. */
        rearm_from_callback = 0;
        rts_freertos_lock();
        rearmed_at = rts_freertos_now_ns_isr(&fr) + 6000000u;
        fr.port.timer_arm(fr.port.ctx, 3, rearmed_at);
        (void)rts_freertos_take_woken(&fr);
        rts_freertos_unlock();
    }
}

static rts_time_ns arm_in(unsigned t, rts_time_ns delay)
{
    rts_freertos_lock();
    const rts_time_ns at = rts_freertos_now_ns_isr(&fr) + delay;
    fr.port.timer_arm(fr.port.ctx, t, at);
    const BaseType_t w = rts_freertos_take_woken(&fr);
    rts_freertos_unlock();
    if (w != pdFALSE) taskYIELD();
    return at;
}

/* Expiries are checked to fire no earlier than armed and at most three
 * ticks late (one-tick resolution, the service task's wake-up, host load on
 * the POSIX port). */
static void test_timers(void)
{
    say("timers", "", 0, false);
    const rts_time_ns tick = fr.tick_ns;
    /* one-shot from a task */
    const rts_time_ns at0 = arm_in(0, 5000000u);
    /* cancelled at once */
    (void)arm_in(2, 4000000u);
    rts_freertos_lock();
    fr.port.timer_cancel(fr.port.ctx, 2);
    rts_freertos_unlock();
    /* re-armed: fires once, at the second time */
    (void)arm_in(3, 2000000u);
    const rts_time_ns at3 = arm_in(3, 8000000u);
    /* its interrupt off: the expiry is discarded */
    rts_freertos_lock();
    fr.port.irq_set_enabled(fr.port.ctx, RTS_FREERTOS_TIMER_LINE + 5, false);
    rts_freertos_unlock();
    (void)arm_in(5, 2000000u);
    /* one-shot from the RX interrupt */
    probe_timer = 1;
    st_rx_line_write(true);
    st_rx_raise();
    vTaskDelay(pdMS_TO_TICKS(20));
    st_rx_line_write(false);

    CHECK(fires[0] == 1u, fires[0]);
    CHECK(fired_at[0] >= at0 && fired_at[0] <= at0 + 3u * tick, fired_at[0] - at0);
    CHECK(fires[1] == 1u, fires[1]);
    CHECK(fired_at[1] >= probe_armed_at && fired_at[1] <= probe_armed_at + 3u * tick,
          fired_at[1] - probe_armed_at);
    CHECK(fires[2] == 0u, fires[2]);
    CHECK(fires[3] == 1u, fires[3]);
    CHECK(fired_at[3] >= at3 && fired_at[3] <= at3 + 3u * tick, fired_at[3] - at3);
    CHECK(fires[5] == 0u, fires[5]);
    CHECK(fr.stats.timer_stale >= 1u, fr.stats.timer_stale);

    /* interrupt on again: the next arming fires */
    rts_freertos_lock();
    fr.port.irq_set_enabled(fr.port.ctx, RTS_FREERTOS_TIMER_LINE + 5, true);
    rts_freertos_unlock();
    (void)arm_in(5, 1000000u);
    vTaskDelay(pdMS_TO_TICKS(5));
    CHECK(fires[5] == 1u, fires[5]);

    /* re-armed while its old expiry is already due: fires once, late */
    fires[0] = fires[3] = 0;
    rearm_from_callback = 1;
    rts_freertos_lock();
    const rts_time_ns due = rts_freertos_now_ns_isr(&fr) + 3000000u;
    fr.port.timer_arm(fr.port.ctx, 0, due);
    fr.port.timer_arm(fr.port.ctx, 3, due);
    (void)rts_freertos_take_woken(&fr);
    rts_freertos_unlock();
    vTaskDelay(pdMS_TO_TICKS(15));
    CHECK(fires[0] == 1u, fires[0]);
    CHECK(fires[3] == 1u, fires[3]);
    CHECK(fired_at[3] >= rearmed_at, rearmed_at - fired_at[3]);

    /* periodic, 2 ms: ten periods in 20 ms, then cancelled */
    rts_freertos_lock();
    const rts_err e = rts_freertos_timer_periodic(&fr, 4, 2000000u);
    const BaseType_t w = rts_freertos_take_woken(&fr);
    rts_freertos_unlock();
    if (w != pdFALSE) taskYIELD();
    CHECK(e == RTS_OK, e);
    const TickType_t start = xTaskGetTickCount();
    vTaskDelayUntil(&(TickType_t){start}, pdMS_TO_TICKS(21));
    const uint32_t n = fires[4];
    rts_freertos_lock();
    fr.port.timer_cancel(fr.port.ctx, 4);
    rts_freertos_unlock();
    vTaskDelay(pdMS_TO_TICKS(10));
    CHECK(n >= 9u && n <= 11u, n);
    CHECK(fires[4] == n, fires[4]);
    /* with a driver clock finer than the tick (POSIX: CLOCK_MONOTONIC): the
     * same timer, converted to ticks, at most a tick early */
    if (st_hw_clock != NULL) {
        fires[0] = 0;
        fr.cfg.clock_ns = st_hw_clock; /* test only: every timer is idle */
        const rts_time_ns a = rts_freertos_now_ns(&fr), b = rts_freertos_now_ns(&fr);
        CHECK(b >= a && a > fr.tick_ns, a);
        const rts_time_ns at_hw = arm_in(0, 5000000u);
        vTaskDelay(pdMS_TO_TICKS(15));
        CHECK(fires[0] == 1u, fires[0]);
        /* late bound in real time: a POSIX-port tick lasts longer than its
         * nominal period (usleep() plus the host's load) */
        CHECK(fired_at[0] + tick >= at_hw && fired_at[0] <= at_hw + 10u * tick, fired_at[0] - at_hw);
        fr.cfg.clock_ns = NULL;
    }
    report("timer arms ", fr.stats.timer_arms);
    report("timer fires ", fr.stats.timer_fires);
    report("expiries discarded ", fr.stats.timer_stale);
}

/* ---------------------------------------------- 3-5: shield on FreeRTOS */

static rts_err start_shield(uint32_t global_capacity, uint32_t extra)
{
    /* quiet: wire off, line off, every buffer back in the ring */
    if (g.sh != NULL) rts_freertos_shield_rx_enable(&g, 0, false);
    rts_freertos_lock();
    g.sh = NULL;
    posted_head = posted_n = filled_head = filled_n = 0;
    for (uint16_t b = 0; b < RING; b++) post(NULL, b);
    rts_freertos_unlock();
    rts_shield_cfg cfg;
    rts_shield_cfg_default(&cfg);
    cfg.protections = RTS_SHIELD_RX_PATH | extra;
    cfg.budget.initial_budget_ns = 0; /* suspended until the first report */
    cfg.budget.charge_isr = false;
    cfg.nbufs = NBUFS;
    cfg.ring_size = RING;
    cfg.task_base_prio = PRIO_NET;
    cfg.short_circuit = 1;
    cfg.global_capacity = global_capacity;
    cfg.global_period = 10000000u; /* 10 ms */
    const rts_freertos_shield_cfg gc = {net_task, poll_task, {0, 1, 2, 3}};
    const rts_err e = rts_freertos_shield_init(&g, &sh, &fr, &cfg, &gc);
    if (e != RTS_OK) return e;
    const rts_shield_flow ctrl = {RTS_PROTO_UDP, PORT_CTRL, 0, PRIO_CTRL, 0, 0, 0};
    const rts_shield_flow bulk = {RTS_PROTO_UDP, PORT_BULK, 0, PRIO_BULK, 10, 10000000u, 0};
    uint8_t id;
    rts_err b = rts_freertos_shield_bind(&g, &ctrl, &id);
    if (b == RTS_OK) b = rts_freertos_shield_bind(&g, &bulk, &id);
    if (b != RTS_OK) return b;
    memset(&c, 0, sizeof c);
    c.ctrl_prio_min = 0xFFFFFFFFu;
    rts_freertos_shield_rx_enable(&g, 0, true);
    return RTS_OK;
}

static void run_wire(uint32_t ticks, uint32_t syn, uint32_t bulk, uint32_t ctrl)
{
    syn_per_tick = syn;
    bulk_per_tick = bulk;
    ctrl_every = ctrl;
    wire_ticks = 0;
    wire_max = ticks;
    wire = true;
    while (wire) vTaskDelay(1);
    vTaskDelay(pdMS_TO_TICKS(200)); /* drain: the network task catches up */
}

static void print_counts(void)
{
    for (unsigned k = 0; k < KINDS; k++) {
        say("  flow ", kind_name[k], 0, false);
        report("  sent ", c.sent[k]);
        report("  delivered ", c.delivered[k]);
        report("  dropped by libshield ", c.dropped[k]);
        report("  nic drops (ring empty) ", c.nic_drops[k]);
    }
    report("queued ", c.outcome[RTS_RX_QUEUED]);
    report("short circuit ", c.outcome[RTS_RX_SHORT_CIRCUIT]);
    report("flow server ", c.outcome[RTS_RX_FLOW_LIMIT]);
    report("queue full ", c.outcome[RTS_RX_QUEUE_FULL]);
    report("global limit ", c.outcome[RTS_RX_GLOBAL_LIMIT]);
    report("recycled ", sh.rx.recycled);
    report("rx interrupts ", c.isr_runs);
    report("rx line off writes ", c.line_off);
    report("rx line on writes ", c.line_on);
    report("priority syncs deferred from the ISR ", g.stats.prio_deferred);
    report("vTaskPrioritySet calls ", g.stats.prio_sets);
    report("highest network task priority ", g.stats.prio_max);
}

static void check_conservation(void)
{
    for (unsigned k = 0; k < KINDS; k++) {
        const uint32_t out = c.delivered[k] + c.dropped[k] + c.nic_drops[k];
        CHECK(c.sent[k] == out, c.sent[k] - out);
    }
    CHECK(filled_n == 0u, filled_n);
    CHECK(rts_shield_waiting(&sh) == 0u, rts_shield_waiting(&sh));
    CHECK(rts_flow_queue_check(&sh.rx.fq) == RTS_OK, 1);
    CHECK(rts_flow_queue_count(&sh.rx.fq, RTS_BUF_RING) == posted_n, posted_n); /* no buffer lost */
    CHECK(uxTaskPriorityGet(net_task) == PRIO_NET, uxTaskPriorityGet(net_task));
}

static void test_priority(void)
{
    say("priority inheritance", "", 0, false);
    CHECK(start_shield(0, 0) == RTS_OK, sh.bad_field);
    CHECK(uxTaskPriorityGet(net_task) == PRIO_NET, uxTaskPriorityGet(net_task));
    run_wire(1, 0, 0, 1); /* one control frame */
    CHECK(c.delivered[K_CTRL] == 1u, c.delivered[K_CTRL]);
    CHECK(c.ctrl_prio_min == PRIO_CTRL, c.ctrl_prio_min); /* raised before it was taken */
    CHECK(g.stats.prio_deferred >= 1u, g.stats.prio_deferred);
    CHECK(g.stats.prio_max == PRIO_CTRL, g.stats.prio_max);
    check_conservation(); /* and back at its base */
}

static void test_flood(void)
{
    say("flood through the receive path", "", 0, false);
    CHECK(start_shield(0, 0) == RTS_OK, sh.bad_field);
    run_wire(400, 6, 2, 4);
    print_counts();
    CHECK(c.sent[K_CTRL] == 100u, c.sent[K_CTRL]);
    CHECK(c.delivered[K_CTRL] == c.sent[K_CTRL], c.sent[K_CTRL] - c.delivered[K_CTRL]);
    CHECK(c.ctrl_prio_min == PRIO_CTRL, c.ctrl_prio_min);
    CHECK(c.dropped[K_SYN] > c.sent[K_SYN] / 4u, c.dropped[K_SYN]); /* the flood is shed */
    CHECK(c.outcome[RTS_RX_SHORT_CIRCUIT] > 0u, c.outcome[RTS_RX_SHORT_CIRCUIT]);
    CHECK(c.outcome[RTS_RX_FLOW_LIMIT] > 0u, c.outcome[RTS_RX_FLOW_LIMIT]);
    CHECK(c.delivered[K_BULK] <= 10u * (400u / 10u + 2u), c.delivered[K_BULK]); /* its server */
    CHECK(c.delivered[K_SYN] > 0u, c.delivered[K_SYN]); /* but served in the gaps */
    CHECK(sh.drops[RTS_SHIELD_DROP_SHORT_CIRCUIT] == c.outcome[RTS_RX_SHORT_CIRCUIT],
          sh.drops[RTS_SHIELD_DROP_SHORT_CIRCUIT]);
    CHECK(sh.drops[RTS_SHIELD_DROP_FLOW_SERVER] == c.outcome[RTS_RX_FLOW_LIMIT],
          sh.drops[RTS_SHIELD_DROP_FLOW_SERVER]);
    check_conservation();
}

static void test_global_limit(void)
{
    say("global limit and polling", "", 0, false);
    CHECK(start_shield(8, 0) == RTS_OK, sh.bad_field); /* 8 frames per 10 ms */
    run_wire(50, 2, 0, 0);
    print_counts();
    report("poll wakes ", c.poll_wakes);
    report("polled frames ", c.poll_harvested);
    report("global limit stops ", c.stops);
    CHECK(c.stops > 0u, c.stops);
    CHECK(g.stats.polls > 0u && c.poll_wakes > 0u, c.poll_wakes);
    CHECK(c.poll_harvested > 0u, c.poll_harvested);
    CHECK(c.line_off > 0u, c.line_off);
    CHECK(rx_line_on, rx_line_on); /* back to interrupts once quiet */
    CHECK(g.stats.timer_calls > 0u, g.stats.timer_calls);
    check_conservation();
}

static volatile bool crit_on;
static volatile uint32_t crit_cycles, crit_misses;

static void crit_fn(void *arg)
{
    (void)arg;
    for (;;) {
        if (!crit_on) {
            vTaskDelay(1);
            continue;
        }
        TickType_t wake = xTaskGetTickCount();
        while (crit_on) {
            const rts_time_ns start = rts_freertos_now_ns(&fr);
            st_busy_wait_us(CRIT_WORK_US); /* its fixed work */
            const rts_detect_cycle_result r =
                rts_freertos_shield_cycle_end(&g, start, start + (rts_time_ns)CRIT_PERIOD_MS * 1000000u);
            crit_cycles++;
            if (r.miss) crit_misses++;
            vTaskDelayUntil(&wake, pdMS_TO_TICKS(CRIT_PERIOD_MS));
        }
    }
}

static void test_budget(void)
{
    say("budget mitigation: suspend and resume", "", 0, false);
    CHECK(start_shield(0, RTS_SHIELD_BUDGET) == RTS_OK, sh.bad_field);
    CHECK(!rx_line_on, rx_line_on); /* held until the first report */
    crit_cycles = crit_misses = 0;
    crit_on = true;
    run_wire(300, 6, 0, 0);
    crit_on = false;
    vTaskDelay(pdMS_TO_TICKS(2 * CRIT_PERIOD_MS));
    print_counts();
    report("critical cycles ", crit_cycles);
    report("critical misses ", crit_misses);
    report("suspends ", g.stats.suspends);
    report("resumes ", g.stats.resumes);
    CHECK(crit_cycles >= 20u, crit_cycles); /* about 32 in 320 ms */
    CHECK(g.stats.suspends > 0u, g.stats.suspends);
    CHECK(g.stats.resumes > 0u, g.stats.resumes);
    CHECK(c.line_off > 0u, c.line_off); /* held while suspended */
    /* each report grants at most the cycle's slack (7 ms): 28 frames of
     * 250 us, plus the one that overdraws it */
    const uint32_t per_cycle = (CRIT_PERIOD_MS * 1000u - CRIT_WORK_US) / WORK_US + 1u;
    CHECK(c.delivered[K_SYN] <= (crit_cycles + 1u) * per_cycle, c.delivered[K_SYN]);
    CHECK(c.delivered[K_SYN] > 0u, c.delivered[K_SYN]);
    check_conservation();
}

static void runner_fn(void *arg)
{
    (void)arg;
    rts_freertos_set_assert_hook(lib_assert);
    const rts_freertos_cfg cfg = {NULL, drv_rx_irq_set, NULL, NULL, NULL, record_timer, NULL};
    CHECK(rts_freertos_init(&fr, &cfg) == RTS_OK, 1);
    test_critical_sections();
    test_timers();
    test_priority();
    test_flood();
    test_global_limit();
    test_budget();
    say("failed checks: ", "", failures, true);
    st_exit(failures == 0u ? 0 : 1);
}

void st_create_tasks(void)
{
    frame_len[K_CTRL] = build_frame(frame_tmpl[K_CTRL], 17, 0x0A000002u, PORT_CTRL);
    frame_len[K_BULK] = build_frame(frame_tmpl[K_BULK], 17, 0x0A000003u, PORT_BULK);
    frame_len[K_SYN] = build_frame(frame_tmpl[K_SYN], 6, 0x0A000004u, PORT_SYN);
    net_task = xTaskCreateStatic(net_task_fn, "net", sizeof net_stack / sizeof net_stack[0], NULL, PRIO_NET,
                                 net_stack, &net_tcb);
    poll_task = xTaskCreateStatic(poll_task_fn, "poll", sizeof poll_stack / sizeof poll_stack[0], NULL,
                                  PRIO_POLL, poll_stack, &poll_tcb);
    crit_task = xTaskCreateStatic(crit_fn, "crit", sizeof crit_stack / sizeof crit_stack[0], NULL, PRIO_CRIT,
                                  crit_stack, &crit_tcb);
    runner_task = xTaskCreateStatic(runner_fn, "runner", sizeof runner_stack / sizeof runner_stack[0], NULL,
                                    PRIO_RUNNER, runner_stack, &runner_tcb);
}
