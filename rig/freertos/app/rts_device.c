/* The rig's device application (issue 17 item 3; issue 29: one application,
 * two boards). The same source runs on the FreeRTOS POSIX port
 * (rig/freertos/posix/) and on Cortex-M3 in QEMU (rig/freertos/mps2-an385/);
 * what differs per board — its clock, its unit of CPU work, how the config
 * comes in and the results go out — is behind app/rts_board.h, and the IP
 * stack behind app/rts_net.h (FreeRTOS-Plus-TCP with the rts_netif interface,
 * or lwIP: libshield in its receive path, or the stack's usual path).
 *
 * The config is text of "key value..." lines that `rtshield rig
 * freertos-tcp` and `rtshield rig lwip` write from a scenario
 * (python/rtshield/rig/freertos/device.py, target_config(): the one mapping
 * from the scenario vocabulary):
 *
 *   ifname NAME | mac AA:BB:CC:DD:EE:FF | ip A.B.C.D | netmask A.B.C.D
 *   protect 0|1 | seconds S | out DIR | rx_cpu N
 *   crit_period_us U | crit_work_us U | crit_prio P
 *   net_prio P | poll_prio P | short_circuit 0|1 | recycle_below N
 *   global_capacity N | global_period_us U
 *   flow NAME udp|echo|tcp|modbus PORT PRIO CAPACITY SERVER_PERIOD_US QUEUE WORKER_PRIO WORK_US
 *
 * Tasks: the critical periodic task (fixed CPU work per cycle; records each
 * cycle's release, start and end, and its deadline when it was missed, on
 * the board's clock); one worker per UDP flow (bound socket; counts
 * datagrams and records the sender's timestamp and the arrival time; an
 * echo flow's worker also sends each datagram back to its sender); one
 * TCP listener per TCP flow (accepts and closes: what SYN floods and scans
 * hit); one MODBUS/TCP server per modbus flow (accepts the controller's
 * connection and answers its requests, rts_modbus.c: read holding
 * registers, write single register; a request that is not MODBUS/TCP
 * closes the connection); a monitor taking a snapshot of the counters every
 * 100 ms; at the end a reporter writes DIR/device.json, DIR/cycles.bin and
 * DIR/latency_<flow>.bin and ends the program. Until then no task writes a
 * file; they are written inside a critical section.
 *
 * It says "ready" once the stack is up and the sockets are bound, and ends
 * with status 0 (having said "done") once the file DIR/stop exists (the
 * runner's phases are over; checked at each snapshot; the frames still on
 * their way are delivered first: drain()) or after `seconds`,
 * whichever comes first; a bad config ends it
 * with status 2 and one error line; a socket that cannot be opened, 3; a
 * kernel assertion, 4.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "FreeRTOS.h"
#include "rts_board.h"
#include "rts_modbus.h"
#include "rts_net.h"
#include "task.h"

/* Records kept for the report (static: no heap); their sizes are the
 * board's (rts_board_cfg.h). Beyond them counting goes on and device.json
 * says how many were recorded. */
#define MAX_FLOWS 8
#define MAX_CYCLES RTS_BOARD_MAX_CYCLES
#define MAX_LAT RTS_BOARD_MAX_LAT
#define MAX_SNAP RTS_BOARD_MAX_SNAP
#define SNAP_MS 100
#define TICK_RING 8192

/* ------------------------------------------------------------ formatting */

/* A printf subset without the C library's (a microcontroller's nano C
 * library prints no 64-bit numbers): %s %c %d %u %lu %llu %%. */
static size_t vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
    size_t n = 0;
#define PUTC(ch)                          \
    do {                                  \
        if (n + 1 < cap) buf[n] = (ch);   \
        n++;                              \
    } while (0)
    for (const char *f = fmt; *f != '\0'; f++) {
        if (*f != '%') {
            PUTC(*f);
            continue;
        }
        f++;
        int longs = 0;
        while (*f == 'l') {
            longs++;
            f++;
        }
        if (*f == 's') {
            for (const char *s = va_arg(ap, const char *); *s != '\0'; s++) PUTC(*s);
        } else if (*f == 'c') {
            PUTC((char)va_arg(ap, int));
        } else if (*f == 'd' || *f == 'u') {
            unsigned long long v;
            bool neg = false;
            if (*f == 'd') {
                const long long x = longs == 2 ? va_arg(ap, long long) : longs ? va_arg(ap, long) : va_arg(ap, int);
                neg = x < 0;
                v = neg ? 0ull - (unsigned long long)x : (unsigned long long)x;
            } else {
                v = longs == 2 ? va_arg(ap, unsigned long long)
                    : longs    ? va_arg(ap, unsigned long)
                               : va_arg(ap, unsigned);
            }
            char d[24];
            int k = 0;
            do {
                d[k++] = (char)('0' + v % 10u);
                v /= 10u;
            } while (v != 0u);
            if (neg) PUTC('-');
            while (k > 0) PUTC(d[--k]);
        } else if (*f == '%') {
            PUTC('%');
        } else {
            break; /* not in the subset: stop rather than misread the arguments */
        }
    }
#undef PUTC
    if (cap > 0) buf[n < cap ? n : cap - 1] = '\0';
    return n < cap ? n : (cap > 0 ? cap - 1 : 0);
}

size_t rts_device_fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const size_t n = vfmt(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

static void die(const char *fmt, ...)
{
    char msg[400];
    size_t n = rts_device_fmt(msg, sizeof msg, "%s: ", RTS_BOARD_PROGRAM);
    va_list ap;
    va_start(ap, fmt);
    n += vfmt(msg + n, sizeof msg - n, fmt, ap);
    va_end(ap);
    (void)rts_device_fmt(msg + n, sizeof msg - n, "\n");
    rts_board_error(msg);
    rts_board_exit(2);
}

/* ------------------------------------------------------------ config */

typedef struct {
    char name[32];
    int tcp, modbus; /* modbus: a TCP flow served as MODBUS/TCP */
    int echo;        /* a UDP flow whose datagrams go back to their sender */
    uint16_t port;
    uint32_t prio, capacity, server_period_us, queue, worker_prio, work_us;
} flow_cfg;

static struct {
    char ifname[32], out[512];
    uint8_t mac[6], ip[4], mask[4];
    int protect, rx_cpu, short_circuit;
    uint32_t seconds, crit_period_us, crit_work_us, crit_prio, net_prio, poll_prio;
    uint32_t recycle_below, global_capacity, global_period_us;
    flow_cfg flow[MAX_FLOWS];
    unsigned nflows;
} C = {.rx_cpu = -1, .short_circuit = 1, .recycle_below = RTS_SHIELD_THRESHOLD_DEFAULT};

static uint32_t num(const char *v, const char *key, uint32_t lo, uint32_t hi)
{
    char *end;
    const unsigned long x = strtoul(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi) die("%s: %s is not a number in %u..%u", key, v, lo, hi);
    return (uint32_t)x;
}

static void octets(const char *v, const char *key, uint8_t *o, int n, int base, char sep)
{
    const char *p = v;
    for (int i = 0; i < n; i++) {
        char *end;
        const unsigned long x = strtoul(p, &end, base);
        if (end == p || x > 255 || (i < n - 1 ? *end != sep : *end != '\0')) die("%s: bad value %s", key, v);
        o[i] = (uint8_t)x;
        p = end + 1;
    }
}

static void copy_str(char *dst, size_t cap, const char *v, const char *what)
{
    if (strlen(v) >= cap) die("%s too long", what);
    memcpy(dst, v, strlen(v) + 1);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static void read_config(char *text)
{
    unsigned lineno = 0;
    char *line = text;
    while (line != NULL && *line != '\0') {
        char *next = strchr(line, '\n');
        if (next != NULL) *next++ = '\0';
        lineno++;
        char *tok[12];
        int n = 0;
        for (char *s = line; *s != '\0' && n < 12;) { /* split on blanks, in place */
            while (is_space(*s)) *s++ = '\0';
            if (*s == '\0') break;
            tok[n++] = s;
            while (*s != '\0' && !is_space(*s)) s++;
        }
        line = next;
        if (n == 0 || tok[0][0] == '#') continue;
        const char *k = tok[0];
        if (strcmp(k, "flow") == 0) {
            if (n != 10) die("line %u: flow needs 9 values", lineno);
            if (C.nflows == MAX_FLOWS) die("line %u: more than %d flows", lineno, MAX_FLOWS);
            flow_cfg *fl = &C.flow[C.nflows++];
            if (strlen(tok[1]) >= sizeof fl->name) die("line %u: flow name too long", lineno);
            copy_str(fl->name, sizeof fl->name, tok[1], "flow name");
            fl->modbus = strcmp(tok[2], "modbus") == 0;
            fl->tcp = strcmp(tok[2], "tcp") == 0 || fl->modbus;
            fl->echo = strcmp(tok[2], "echo") == 0;
            if (!fl->tcp && !fl->echo && strcmp(tok[2], "udp") != 0) die("line %u: protocol %s", lineno, tok[2]);
            fl->port = (uint16_t)num(tok[3], "port", 1, 65535);
            fl->prio = num(tok[4], "prio", 0, configMAX_PRIORITIES - 2);
            fl->capacity = num(tok[5], "capacity", 0, 1000000);
            fl->server_period_us = num(tok[6], "server_period_us", 0, 10000000);
            fl->queue = num(tok[7], "queue", 0, rts_net_rx_slots());
            fl->worker_prio = num(tok[8], "worker_prio", 1, configMAX_PRIORITIES - 2);
            fl->work_us = num(tok[9], "work_us", 0, 1000000);
            continue;
        }
        if (n != 2) die("line %u: %s needs one value", lineno, k);
        const char *v = tok[1];
        if (strcmp(k, "ifname") == 0) copy_str(C.ifname, sizeof C.ifname, v, "ifname");
        else if (strcmp(k, "out") == 0) copy_str(C.out, sizeof C.out, v, "out");
        else if (strcmp(k, "mac") == 0) octets(v, k, C.mac, 6, 16, ':');
        else if (strcmp(k, "ip") == 0) octets(v, k, C.ip, 4, 10, '.');
        else if (strcmp(k, "netmask") == 0) octets(v, k, C.mask, 4, 10, '.');
        else if (strcmp(k, "protect") == 0) C.protect = (int)num(v, k, 0, 1);
        else if (strcmp(k, "seconds") == 0) C.seconds = num(v, k, 1, 3600);
        else if (strcmp(k, "rx_cpu") == 0) C.rx_cpu = (int)num(v, k, 0, 1023);
        else if (strcmp(k, "crit_period_us") == 0) C.crit_period_us = num(v, k, 1000, 10000000);
        else if (strcmp(k, "crit_work_us") == 0) C.crit_work_us = num(v, k, 0, 10000000);
        else if (strcmp(k, "crit_prio") == 0) C.crit_prio = num(v, k, 1, configMAX_PRIORITIES - 2);
        else if (strcmp(k, "net_prio") == 0) C.net_prio = num(v, k, 0, configMAX_PRIORITIES - 1);
        else if (strcmp(k, "poll_prio") == 0) C.poll_prio = num(v, k, 1, configMAX_PRIORITIES - 1);
        else if (strcmp(k, "short_circuit") == 0) C.short_circuit = (int)num(v, k, 0, 1);
        else if (strcmp(k, "recycle_below") == 0) C.recycle_below = num(v, k, 0, rts_net_rx_ring());
        else if (strcmp(k, "global_capacity") == 0) C.global_capacity = num(v, k, 0, 10000000);
        else if (strcmp(k, "global_period_us") == 0) C.global_period_us = num(v, k, 0, 10000000);
        else die("line %u: unknown key %s", lineno, k);
    }
    if (C.ifname[0] == '\0' || C.out[0] == '\0' || C.seconds == 0 || C.crit_period_us == 0)
        die("config needs ifname, out, seconds and crit_period_us");
    if (C.crit_work_us >= C.crit_period_us) die("crit_work_us must be below crit_period_us");
}

/* Board time of each tick, so a release or deadline tick has a time. */
static volatile uint64_t tick_ns[TICK_RING];

static uint64_t tick_time(TickType_t t)
{
    return tick_ns[t % TICK_RING];
}

/* ------------------------------------------------------- critical task */

typedef struct {
    uint64_t release_ns, start_ns, end_ns, deadline_ns; /* deadline_ns 0: met */
} cycle_rec;

static cycle_rec cycles[MAX_CYCLES];
static volatile uint32_t n_cycles, n_misses;
/* Cycles that ended more than a period after their release tick's time on
 * the board's clock: a miss the tick count cannot see when ticks were lost
 * (counted apart; n_misses is the tick count's verdict). */
static volatile uint32_t n_late_clock;

static void critical_main(void *arg)
{
    (void)arg;
    const TickType_t period = pdMS_TO_TICKS(C.crit_period_us / 1000u);
    TickType_t release = xTaskGetTickCount();
    for (;;) {
        const uint64_t start = rts_board_now_ns();
        rts_board_work(C.crit_work_us);
        const uint64_t end = rts_board_now_ns();
        const TickType_t now = xTaskGetTickCount();
        const TickType_t deadline = release + period;
        const bool miss = now > deadline;
        const uint64_t released = tick_time(release);
        if (released != 0u && end > released + (uint64_t)C.crit_period_us * 1000u) n_late_clock++;
        if (n_cycles < MAX_CYCLES) {
            cycle_rec *r = &cycles[n_cycles];
            r->release_ns = tick_time(release);
            r->start_ns = start;
            r->end_ns = end;
            r->deadline_ns = miss ? tick_time(deadline) : 0u;
        }
        n_cycles++;
        if (miss) {
            n_misses++;
            release = now; /* late: the next cycle starts at once (Danicki) */
            continue;
        }
        TickType_t last = release; /* sleep until this cycle's deadline: the next release */
        release = deadline;
        vTaskDelayUntil(&last, period);
    }
}

/* ------------------------------------------------------------- workers */

typedef struct {
    uint64_t sent_ns, recv_ns;
} lat_rec;

static lat_rec lat[MAX_FLOWS][MAX_LAT];
static volatile uint32_t delivered[MAX_FLOWS], accepted[MAX_FLOWS];
static rts_sock sock[MAX_FLOWS];
static uint8_t shield_id[MAX_FLOWS]; /* protected: each flow's libshield id */

static void udp_worker(void *arg)
{
    const unsigned i = (unsigned)(uintptr_t)arg;
    static uint8_t bufs[MAX_FLOWS][1500];
    uint8_t *buf = bufs[i];
    for (;;) {
        const int32_t n = C.flow[i].echo ? rts_net_echo(sock[i], buf, sizeof bufs[i])
                                         : rts_net_recvfrom(sock[i], buf, sizeof bufs[i]);
        if (n <= 0) continue;
        const uint64_t now = rts_board_now_ns();
        uint64_t sent = 0;
        if (n >= 16) memcpy(&sent, buf + 8, sizeof sent); /* seq (8), send time (8), little endian */
        if (delivered[i] < MAX_LAT) lat[i][delivered[i]] = (lat_rec){sent, now};
        delivered[i]++;
        rts_board_work(C.flow[i].work_us);
    }
}

/* The next connection on flow i's listening socket (counted). */
static rts_sock accept_next(unsigned i)
{
    for (;;) {
        rts_sock c = rts_net_accept(sock[i]);
        if (c != NULL) {
            accepted[i]++;
            return c;
        }
    }
}

static void tcp_listener(void *arg)
{
    const unsigned i = (unsigned)(uintptr_t)arg;
    for (;;) {
        rts_sock c = accept_next(i);
        rts_board_work(C.flow[i].work_us);
        rts_net_close(c);
    }
}

/* MODBUS/TCP: the holding-register table and, per flow, a receive buffer of
 * two whole requests (after a request is served what is left is shorter
 * than one, so there is always room to read on) and an answer buffer. */
#define MODBUS_REGS 64u
static uint16_t mb_regs[MAX_FLOWS][MODBUS_REGS];
static uint8_t mb_in[MAX_FLOWS][2u * RTS_MODBUS_MAX_ADU], mb_out[MAX_FLOWS][RTS_MODBUS_MAX_ADU];
static volatile uint32_t mb_refused[MAX_FLOWS];

static void modbus_server(void *arg)
{
    const unsigned i = (unsigned)(uintptr_t)arg;
    for (unsigned r = 0; r < MODBUS_REGS; r++) mb_regs[i][r] = (uint16_t)r;
    for (;;) {
        rts_sock c = accept_next(i);
        size_t have = 0;
        bool open = true;
        while (open) {
            const int32_t n = rts_net_recv(c, mb_in[i] + have, sizeof mb_in[i] - have);
            if (n < 0) break; /* closed or reset */
            have += (size_t)n;
            size_t off = 0;
            for (;;) {
                size_t used = 0, len = 0;
                const rts_modbus_result r = rts_modbus_serve(mb_in[i] + off, have - off, mb_regs[i], MODBUS_REGS,
                                                             mb_out[i], sizeof mb_out[i], &used, &len);
                if (r == RTS_MODBUS_NEED_MORE) break;
                if (r == RTS_MODBUS_REFUSED) {
                    mb_refused[i]++;
                    open = false;
                    break;
                }
                rts_board_work(C.flow[i].work_us);
                if (rts_net_send(c, mb_out[i], len) != (int32_t)len) {
                    open = false;
                    break;
                }
                delivered[i]++;
                off += used;
            }
            memmove(mb_in[i], mb_in[i] + off, have - off);
            have -= off;
        }
        rts_net_close(c);
    }
}

static bool open_flow(unsigned i)
{
    const flow_cfg *f = &C.flow[i];
    shield_id[i] = RTS_FLOW_NONE;
    sock[i] = rts_net_socket(f->tcp, f->port, 16);
    if (sock[i] == NULL) return false;
    if (C.protect) { /* bind()/setsockopt() of the socket layer tell libshield the flow */
        const rts_shield_flow sf = {f->tcp ? RTS_PROTO_TCP : RTS_PROTO_UDP,
                                    f->port,
                                    0,
                                    f->prio,
                                    f->capacity,
                                    (rts_time_ns)f->server_period_us * 1000u,
                                    f->queue};
        if (rts_net_shield_bind(&sf, &shield_id[i]) != RTS_OK) return false;
    }
    return xTaskCreate(f->modbus ? modbus_server : f->tcp ? tcp_listener : udp_worker, f->name, configMINIMAL_STACK_SIZE * 2,
                       (void *)(uintptr_t)i, f->worker_prio, NULL) == pdPASS;
}

/* ------------------------------------------------- monitor and report */

typedef struct {
    uint64_t t_ns;
    uint32_t nic_frames, ring_full, shield_dropped, stack_exhausted, ip_queue_full, no_endpoint, to_ip, tx,
        cycles, misses;
    uint32_t drops[RTS_SHIELD_DROP_REASONS];
    uint32_t delivered[MAX_FLOWS];
    uint32_t stack[RTS_NET_STACK_COUNTERS]; /* the stack's own counters (rts_net_stack_counters()) */
} snap_rec;

static snap_rec snaps[MAX_SNAP];
static uint32_t n_snaps;
static const char *stack_names[RTS_NET_STACK_COUNTERS];
static unsigned n_stack;
/* The tick count and the board's clock at "ready" and at the end: ticks the
 * kernel lost (its tick interrupt held off longer than a tick) show as
 * fewer ticks than the clock's time. */
static TickType_t ticks_ready, ticks_end;
static uint64_t ns_ready, ns_end;

static void snapshot(void)
{
    if (n_snaps >= MAX_SNAP) return;
    const rts_net_stats *st = rts_net_stats_get();
    const rts_shield *sh = rts_net_shield();
    snap_rec *s = &snaps[n_snaps++];
    s->t_ns = rts_board_now_ns();
    s->nic_frames = st->nic_frames;
    s->ring_full = st->nic_ring_full;
    s->shield_dropped = st->shield_dropped;
    s->stack_exhausted = st->stack_exhausted;
    s->ip_queue_full = st->ip_queue_full;
    s->no_endpoint = st->no_endpoint;
    s->to_ip = st->to_ip_task;
    s->tx = st->tx_frames;
    s->cycles = n_cycles;
    s->misses = n_misses;
    for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++) s->drops[r] = sh ? (uint32_t)sh->drops[r] : 0u;
    for (unsigned i = 0; i < C.nflows; i++)
        s->delivered[i] = C.flow[i].tcp && !C.flow[i].modbus ? accepted[i] : delivered[i];
    n_stack = rts_net_stack_counters(stack_names, s->stack);
    rts_board_snapshot(s->t_ns);
}

/* The report is streamed into the open file through a small buffer. */
static char text[4096];
static size_t text_n;
static int text_fd = -1;

static void flush_text(void)
{
    if (text_fd >= 0 && text_n > 0) rts_board_write(text_fd, text, text_n);
    text_n = 0;
}

void rts_device_put(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    const size_t n = vfmt(line, sizeof line, fmt, ap);
    va_end(ap);
    if (text_n + n > sizeof text) flush_text();
    memcpy(text + text_n, line, n);
    text_n += n;
}

static void write_file(const char *name, const void *data, size_t len)
{
    char path[600];
    (void)rts_device_fmt(path, sizeof path, "%s/%s", C.out, name);
    const int fd = rts_board_open(path);
    if (fd < 0) return;
    rts_board_write(fd, data, len);
    rts_board_close(fd);
}

static const char *const path_name[RTS_NET_PATHS] = {"enqueue",    "raise",      "recycle",      "short_circuit",
                                                     "flow_limit", "queue_full", "global_limit", "irq_drop"};

static void report(void)
{
    const rts_net_stats *st = rts_net_stats_get();
    const rts_shield *sh = rts_net_shield();
    char path[600];
    (void)rts_device_fmt(path, sizeof path, "%s/device.json", C.out);
    text_fd = rts_board_open(path);
    text_n = 0;
    rts_device_put("{\"protect\": %d, \"tick_hz\": %u, \"crit_period_us\": %u, \"crit_work_us\": %u,\n", C.protect,
                   (unsigned)configTICK_RATE_HZ, C.crit_period_us, C.crit_work_us);
    rts_device_put(" \"board\": \"%s\", \"clock\": \"%s\",\n", RTS_BOARD_NAME, RTS_BOARD_CLOCK);
    rts_device_put(" \"cycles\": %u, \"misses\": %u, \"cycles_recorded\": %u, \"late_on_clock\": %u,\n", n_cycles,
                   n_misses, n_cycles < MAX_CYCLES ? n_cycles : MAX_CYCLES, n_late_clock);
    rts_device_put(" \"ticks_ready\": %llu, \"ns_ready\": %llu, \"ticks_end\": %llu, \"ns_end\": %llu,\n",
                   (unsigned long long)ticks_ready, (unsigned long long)ns_ready, (unsigned long long)ticks_end,
                   (unsigned long long)ns_end);
    rts_device_put(" \"netif\": {\"nic_frames\": %u, \"ring_full\": %u, \"shield_dropped\": %u, \"stack_exhausted\": %u, "
                   "\"ip_queue_full\": %u, \"no_endpoint\": %u, \"to_ip_task\": %u, \"tx_frames\": %u, \"tx_errors\": %u, "
                   "\"rx_irqs\": %u, \"ip_prio_sets\": %u, \"shield_ns\": %llu, \"shield_frames\": %u, ",
                   st->nic_frames, st->nic_ring_full, st->shield_dropped, st->stack_exhausted, st->ip_queue_full,
                   st->no_endpoint, st->to_ip_task, st->tx_frames, st->tx_errors, st->rx_irqs, st->ip_prio_sets,
                   (unsigned long long)st->shield_ns, st->shield_frames);
    rts_device_put("\"to_stack_ns\": %llu, \"to_stack_frames\": %u, \"nic_copy_ns\": %llu, \"nic_copy_frames\": %u, "
                   "\"nic_copy_words\": %u, \"nic_isr_ns\": %llu, \"nic_isr_runs\": %u},\n",
                   (unsigned long long)st->to_stack_ns, st->to_stack_frames, (unsigned long long)st->nic_copy_ns,
                   st->nic_copy_frames, st->nic_copy_words, (unsigned long long)st->nic_isr_ns, st->nic_isr_runs);
    rts_device_put(" \"shield_paths\": {");
    for (unsigned p = 0; p < RTS_NET_PATHS; p++)
        rts_device_put("%s\"%s\": {\"frames\": %u, \"ns\": %llu}", p ? ", " : "", path_name[p], st->path_frames[p],
                       (unsigned long long)st->path_ns[p]);
    rts_device_put("},\n");
    rts_board_put_threads();
    rts_board_put_link();
    rts_device_put(" \"shield_drops\": [");
    for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++)
        rts_device_put("%s%llu", r ? ", " : "", sh ? (unsigned long long)sh->drops[r] : 0ull);
    rts_device_put("],\n \"stack\": {\"names\": [");
    const char *names[RTS_NET_STACK_COUNTERS];
    uint32_t values[RTS_NET_STACK_COUNTERS];
    const unsigned n_now = rts_net_stack_counters(names, values);
    for (unsigned k = 0; k < n_now; k++) rts_device_put("%s\"%s\"", k ? ", " : "", names[k]);
    rts_device_put("], \"values\": [");
    for (unsigned k = 0; k < n_now; k++) rts_device_put("%s%u", k ? ", " : "", (unsigned)values[k]);
    rts_device_put("]},\n \"flows\": {");
    for (unsigned i = 0; i < C.nflows; i++) {
        const flow_cfg *f = &C.flow[i];
        const uint32_t d = f->tcp && !f->modbus ? accepted[i] : delivered[i];
        rts_device_put("%s\"%s\": {\"proto\": \"%s\", \"port\": %u, \"delivered\": %u, \"latency_recorded\": %u",
                       i ? ", " : "", f->name, f->modbus ? "modbus" : f->tcp ? "tcp" : f->echo ? "echo" : "udp", f->port, d,
                       f->tcp ? 0u : (d < MAX_LAT ? d : MAX_LAT));
        if (f->modbus) rts_device_put(", \"connections\": %u, \"refused\": %u", accepted[i], mb_refused[i]);
        if (sh != NULL && shield_id[i] < RTS_FLOW_MAX) /* what the receive path did with its frames */
            rts_device_put(", \"shield\": {\"frames\": %u, \"queued\": %u, \"recycled\": %u, \"server_admitted\": %u, "
                           "\"server_drops\": %u}",
                           st->flow_frames[shield_id[i]], st->flow_queued[shield_id[i]], st->flow_recycled[shield_id[i]],
                           sh->rx.flows.flows[shield_id[i]].admitted, sh->rx.flows.flows[shield_id[i]].limited_drops);
        rts_device_put("}");
    }
    rts_device_put("},\n \"snapshots\": [");
    for (uint32_t k = 0; k < n_snaps; k++) {
        const snap_rec *s = &snaps[k];
        rts_device_put("%s\n  {\"t_ns\": %llu, \"nic_frames\": %u, \"ring_full\": %u, \"shield_dropped\": %u, ",
                       k ? "," : "", (unsigned long long)s->t_ns, s->nic_frames, s->ring_full, s->shield_dropped);
        rts_device_put("\"stack_exhausted\": %u, \"ip_queue_full\": %u, \"no_endpoint\": %u, \"to_ip_task\": %u, "
                       "\"tx_frames\": %u, \"cycles\": %u, \"misses\": %u, \"shield_drops\": [",
                       s->stack_exhausted, s->ip_queue_full, s->no_endpoint, s->to_ip, s->tx, s->cycles, s->misses);
        for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++) rts_device_put("%s%u", r ? ", " : "", s->drops[r]);
        rts_device_put("], \"delivered\": [");
        for (unsigned i = 0; i < C.nflows; i++) rts_device_put("%s%u", i ? ", " : "", s->delivered[i]);
        rts_device_put("], \"stack\": [");
        for (unsigned j = 0; j < n_stack; j++) rts_device_put("%s%u", j ? ", " : "", (unsigned)s->stack[j]);
        rts_device_put("]}");
    }
    rts_device_put("\n ]}\n");
    flush_text();
    if (text_fd >= 0) rts_board_close(text_fd);
    text_fd = -1;
    write_file("cycles.bin", cycles, sizeof(cycle_rec) * (n_cycles < MAX_CYCLES ? n_cycles : MAX_CYCLES));
    for (unsigned i = 0; i < C.nflows; i++) {
        if (C.flow[i].tcp) continue;
        char name[64];
        (void)rts_device_fmt(name, sizeof name, "latency_%s.bin", C.flow[i].name);
        write_file(name, lat[i], sizeof(lat_rec) * (delivered[i] < MAX_LAT ? delivered[i] : MAX_LAT));
    }
}

/* The counters a frame moves while the device still works on it: from the
 * NIC to the driver, to the stack's task, to a flow's worker. */
static uint32_t in_motion(void)
{
    const rts_net_stats *st = rts_net_stats_get();
    uint32_t sum = st->nic_frames + st->to_ip_task + st->tx_frames;
    for (unsigned i = 0; i < C.nflows; i++) sum += delivered[i] + accepted[i];
    return sum;
}

/* Every sender has ended when the runner creates DIR/stop, but a frame the
 * driver took just before may still be on its way to its worker: the
 * recording ends once nothing moved for DRAIN_QUIET_MS, at the latest after
 * DRAIN_MAX_MS (a bounded wait: a device that never settles still reports). */
#define DRAIN_QUIET_MS 40
#define DRAIN_MAX_MS 1000
static void drain(void)
{
    uint32_t seen = in_motion();
    for (unsigned waited = 0; waited < DRAIN_MAX_MS; waited += DRAIN_QUIET_MS) {
        vTaskDelay(pdMS_TO_TICKS(DRAIN_QUIET_MS));
        const uint32_t now = in_motion();
        if (now == seen) return;
        seen = now;
    }
}

static void monitor_main(void *arg)
{
    (void)arg;
    while (!rts_net_is_up()) vTaskDelay(pdMS_TO_TICKS(10));
    for (unsigned i = 0; i < C.nflows; i++) {
        if (!open_flow(i)) {
            taskENTER_CRITICAL();
            char msg[80];
            (void)rts_device_fmt(msg, sizeof msg, "error: cannot open the socket of flow %s\n", C.flow[i].name);
            rts_board_say(msg);
            rts_board_exit(3);
        }
    }
    xTaskCreate(critical_main, "critical", configMINIMAL_STACK_SIZE * 2, NULL, C.crit_prio, NULL);
    taskENTER_CRITICAL();
    ticks_ready = xTaskGetTickCount();
    ns_ready = rts_board_now_ns();
    rts_board_say("ready\n");
    taskEXIT_CRITICAL();
    /* The run ends when the runner creates DIR/stop (its phases are over),
     * seen at the next snapshot, or at the latest after `seconds`. */
    static char stop[sizeof C.out + 8];
    (void)rts_device_fmt(stop, sizeof stop, "%s/stop", C.out);
    const TickType_t end = xTaskGetTickCount() + pdMS_TO_TICKS(1000u * C.seconds);
    TickType_t next = xTaskGetTickCount();
    while (xTaskGetTickCount() < end) {
        snapshot();
        if (rts_board_exists(stop)) {
            drain();
            break;
        }
        vTaskDelayUntil(&next, pdMS_TO_TICKS(SNAP_MS));
    }
    snapshot();
    taskENTER_CRITICAL(); /* nothing else runs while the files are written */
    ticks_end = xTaskGetTickCount();
    ns_end = rts_board_now_ns();
    report();
    rts_board_say("done\n");
    rts_board_exit(0);
}

/* ------------------------------------------------ application hooks */

void rts_selftest_assert(const char *file, int line)
{
    char msg[300];
    (void)rts_device_fmt(msg, sizeof msg, "%s: kernel assertion failed: %s:%d\n", RTS_BOARD_PROGRAM, file, line);
    rts_board_error(msg);
    rts_board_exit(4);
}

void vApplicationTickHook(void)
{
    /* Ticks the kernel counted while the scheduler was suspended reach the
     * hook late or not at all: give each tick up to now this hook's time. */
    static TickType_t last;
    const TickType_t t = xTaskGetTickCountFromISR();
    const uint64_t now = rts_board_now_ns();
    if (t - last > TICK_RING) last = t - TICK_RING;
    while (last != t) tick_ns[++last % TICK_RING] = now;
    rts_board_tick_isr();
}

void vApplicationIdleHook(void)
{
    rts_board_idle();
}

void rts_device_start(char *config)
{
    read_config(config);
    rts_net_cfg nc = {
        .ifname = C.ifname,
        .protect = C.protect != 0,
        .short_circuit = C.short_circuit != 0,
        .recycle_below = C.recycle_below,
        .global_capacity = C.global_capacity,
        .global_period_ns = (uint64_t)C.global_period_us * 1000u,
        .net_prio = C.net_prio,
        .poll_prio = C.poll_prio ? C.poll_prio : configMAX_PRIORITIES - 2,
        .rx_cpu = C.rx_cpu,
        .seed = (uint32_t)rts_board_now_ns(),
    };
    memcpy(nc.mac, C.mac, 6);
    memcpy(nc.ip, C.ip, 4);
    memcpy(nc.mask, C.mask, 4);
    if (!rts_net_init(&nc)) die("the network interface could not be set up");
    xTaskCreate(monitor_main, "monitor", configMINIMAL_STACK_SIZE * 2, NULL, configMAX_PRIORITIES - 1, NULL);
}
