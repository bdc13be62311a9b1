/* The rig's FreeRTOS-Plus-TCP device application (issue 17 item 3), on the
 * FreeRTOS POSIX port with the rts_netif interface (libshield in its
 * receive path, or the stock path).
 *
 *   rts_freertos_device CONFIG
 *
 * CONFIG is a text file of "key value..." lines that `rtshield rig
 * freertos-tcp` writes from a scenario (python/rtshield/rig/freertos.py,
 * target_config(): the one mapping from the scenario vocabulary):
 *
 *   ifname NAME | mac AA:BB:CC:DD:EE:FF | ip A.B.C.D | netmask A.B.C.D
 *   protect 0|1 | seconds S | out DIR | rx_cpu N
 *   crit_period_us U | crit_work_us U | crit_prio P
 *   net_prio P | poll_prio P | short_circuit 0|1 | recycle_below N
 *   global_capacity N | global_period_us U
 *   flow NAME udp|tcp|modbus PORT PRIO CAPACITY SERVER_PERIOD_US QUEUE WORKER_PRIO WORK_US
 *
 * Tasks: the critical periodic task (fixed CPU work per cycle; records each
 * cycle's release, start and end, and its deadline when it was missed, in
 * host time); one worker per UDP flow (bound socket; counts datagrams and
 * records the latency from the sender's timestamp); one TCP listener per
 * TCP flow (accepts and closes: what SYN floods and scans hit); one MODBUS/TCP
 * server per modbus flow (accepts the controller's connection and answers
 * its requests, rts_modbus.c: read holding registers, write single
 * register; a request that is not MODBUS/TCP closes the connection); a monitor
 * taking a snapshot of the counters every 100 ms; at the end a reporter
 * writes DIR/device.json, DIR/cycles.bin and DIR/latency_<flow>.bin and
 * ends the process. Until then no task touches stdio (the POSIX port's
 * signals); files are written with write(2) inside a critical section.
 *
 * It prints "ready" on stdout once the stack is up and the sockets are
 * bound, and exits 0 after `seconds`; a bad config ends it with status 2
 * and one line on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "FreeRTOS.h"
#include "FreeRTOS_IP.h"
#include "FreeRTOS_Sockets.h"
#include "rts_modbus.h"
#include "rts_netif.h"
#include "task.h"

/* Records kept for the report (static: no heap). The rig's longest run
 * (3 x 120 s phases + 2 x 60 s breaks = 480 s) fits: 480 000 cycles of the
 * shortest period (one tick), 4 800 snapshots; beyond, counting goes on
 * and device.json says how many were recorded. */
#define MAX_FLOWS 8
#define MAX_CYCLES (1u << 19)
#define MAX_LAT (1u << 18)
#define MAX_SNAP 8192u
#define SNAP_MS 100
#define TICK_RING 8192

/* ------------------------------------------------------------ config */

typedef struct {
    char name[32];
    int tcp, modbus; /* modbus: a TCP flow served as MODBUS/TCP */
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

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("rts_freertos_device: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

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

static void read_config(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) die("cannot open config %s", path);
    char line[512];
    unsigned lineno = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        char *tok[12];
        int n = 0;
        for (char *s = strtok(line, " \t\r\n"); s != NULL && n < 12; s = strtok(NULL, " \t\r\n")) tok[n++] = s;
        if (n == 0 || tok[0][0] == '#') continue;
        const char *k = tok[0];
        if (strcmp(k, "flow") == 0) {
            if (n != 10) die("line %u: flow needs 9 values", lineno);
            if (C.nflows == MAX_FLOWS) die("line %u: more than %d flows", lineno, MAX_FLOWS);
            flow_cfg *fl = &C.flow[C.nflows++];
            if (strlen(tok[1]) >= sizeof fl->name) die("line %u: flow name too long", lineno);
            strcpy(fl->name, tok[1]);
            fl->modbus = strcmp(tok[2], "modbus") == 0;
            fl->tcp = strcmp(tok[2], "tcp") == 0 || fl->modbus;
            if (!fl->tcp && strcmp(tok[2], "udp") != 0) die("line %u: protocol %s", lineno, tok[2]);
            fl->port = (uint16_t)num(tok[3], "port", 1, 65535);
            fl->prio = num(tok[4], "prio", 0, configMAX_PRIORITIES - 2);
            fl->capacity = num(tok[5], "capacity", 0, 1000000);
            fl->server_period_us = num(tok[6], "server_period_us", 0, 10000000);
            fl->queue = num(tok[7], "queue", 0, RTS_NETIF_SLOTS);
            fl->worker_prio = num(tok[8], "worker_prio", 1, configMAX_PRIORITIES - 2);
            fl->work_us = num(tok[9], "work_us", 0, 1000000);
            continue;
        }
        if (n != 2) die("line %u: %s needs one value", lineno, k);
        const char *v = tok[1];
        if (strcmp(k, "ifname") == 0) {
            if (strlen(v) >= sizeof C.ifname) die("ifname too long");
            strcpy(C.ifname, v);
        } else if (strcmp(k, "out") == 0) {
            if (strlen(v) >= sizeof C.out) die("out too long");
            strcpy(C.out, v);
        } else if (strcmp(k, "mac") == 0) octets(v, k, C.mac, 6, 16, ':');
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
        else if (strcmp(k, "recycle_below") == 0) C.recycle_below = num(v, k, 0, RTS_NETIF_RING);
        else if (strcmp(k, "global_capacity") == 0) C.global_capacity = num(v, k, 0, 10000000);
        else if (strcmp(k, "global_period_us") == 0) C.global_period_us = num(v, k, 0, 10000000);
        else die("line %u: unknown key %s", lineno, k);
    }
    fclose(f);
    if (C.ifname[0] == '\0' || C.out[0] == '\0' || C.seconds == 0 || C.crit_period_us == 0)
        die("config needs ifname, out, seconds and crit_period_us");
    if (C.crit_work_us >= C.crit_period_us) die("crit_work_us must be below crit_period_us");
}

/* ---------------------------------------------------------- host time */

static uint64_t host_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Fixed work: `us` of this task's own CPU time (a preempted task's pthread
 * is stopped, so time taken by others does not count). */
static void work(uint32_t us)
{
    const uint64_t end = thread_cpu_ns() + (uint64_t)us * 1000u;
    while (thread_cpu_ns() < end) {
    }
}

/* Host time of each tick, so a release or deadline tick has a host time. */
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

static void critical_main(void *arg)
{
    (void)arg;
    const TickType_t period = pdMS_TO_TICKS(C.crit_period_us / 1000u);
    TickType_t release = xTaskGetTickCount();
    for (;;) {
        const uint64_t start = host_ns();
        work(C.crit_work_us);
        const uint64_t end = host_ns();
        const TickType_t now = xTaskGetTickCount();
        const TickType_t deadline = release + period;
        const bool miss = now > deadline;
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
static Socket_t sock[MAX_FLOWS];

static void udp_worker(void *arg)
{
    const unsigned i = (unsigned)(uintptr_t)arg;
    uint8_t buf[1500];
    for (;;) {
        struct freertos_sockaddr from;
        socklen_t fl = sizeof from;
        const int32_t n = FreeRTOS_recvfrom(sock[i], buf, sizeof buf, 0, &from, &fl);
        if (n <= 0) continue;
        const uint64_t now = host_ns();
        uint64_t sent = 0;
        if (n >= 16) memcpy(&sent, buf + 8, sizeof sent); /* seq (8), send time (8), little endian */
        if (delivered[i] < MAX_LAT) lat[i][delivered[i]] = (lat_rec){sent, now};
        delivered[i]++;
        work(C.flow[i].work_us);
    }
}

/* The next connection on flow i's listening socket (counted). */
static Socket_t accept_next(unsigned i)
{
    for (;;) {
        struct freertos_sockaddr from;
        socklen_t fl = sizeof from;
        Socket_t c = FreeRTOS_accept(sock[i], &from, &fl);
        if (c != NULL && c != FREERTOS_INVALID_SOCKET) {
            accepted[i]++;
            return c;
        }
    }
}

static void tcp_listener(void *arg)
{
    const unsigned i = (unsigned)(uintptr_t)arg;
    for (;;) {
        Socket_t c = accept_next(i);
        work(C.flow[i].work_us);
        FreeRTOS_shutdown(c, FREERTOS_SHUT_RDWR);
        FreeRTOS_closesocket(c);
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
        Socket_t c = accept_next(i);
        const TickType_t forever = portMAX_DELAY;
        FreeRTOS_setsockopt(c, 0, FREERTOS_SO_RCVTIMEO, &forever, sizeof forever);
        size_t have = 0;
        bool open = true;
        while (open) {
            const int32_t n = FreeRTOS_recv(c, mb_in[i] + have, sizeof mb_in[i] - have, 0);
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
                work(C.flow[i].work_us);
                if (FreeRTOS_send(c, mb_out[i], len, 0) != (BaseType_t)len) {
                    open = false;
                    break;
                }
                delivered[i]++;
                off += used;
            }
            memmove(mb_in[i], mb_in[i] + off, have - off);
            have -= off;
        }
        FreeRTOS_shutdown(c, FREERTOS_SHUT_RDWR);
        FreeRTOS_closesocket(c);
    }
}

static bool open_flow(unsigned i)
{
    const flow_cfg *f = &C.flow[i];
    struct freertos_sockaddr a;
    memset(&a, 0, sizeof a);
    a.sin_family = FREERTOS_AF_INET;
    a.sin_port = FreeRTOS_htons(f->port);
    sock[i] = FreeRTOS_socket(FREERTOS_AF_INET, f->tcp ? FREERTOS_SOCK_STREAM : FREERTOS_SOCK_DGRAM,
                              f->tcp ? FREERTOS_IPPROTO_TCP : FREERTOS_IPPROTO_UDP);
    if (sock[i] == FREERTOS_INVALID_SOCKET) return false;
    const TickType_t forever = portMAX_DELAY;
    FreeRTOS_setsockopt(sock[i], 0, FREERTOS_SO_RCVTIMEO, &forever, sizeof forever);
    if (FreeRTOS_bind(sock[i], &a, sizeof a) != 0) return false;
    if (f->tcp && FreeRTOS_listen(sock[i], 16) != 0) return false;
    if (C.protect) { /* bind()/setsockopt() of the socket layer tell libshield the flow */
        const rts_shield_flow sf = {f->tcp ? RTS_PROTO_TCP : RTS_PROTO_UDP,
                                    f->port,
                                    0,
                                    f->prio,
                                    f->capacity,
                                    (rts_time_ns)f->server_period_us * 1000u,
                                    f->queue};
        uint8_t id;
        if (rts_netif_bind(&sf, &id) != RTS_OK) return false;
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
} snap_rec;

static snap_rec snaps[MAX_SNAP];
static uint32_t n_snaps;

static void snapshot(void)
{
    if (n_snaps >= MAX_SNAP) return;
    const rts_netif_stats *st = rts_netif_stats_get();
    const rts_shield *sh = rts_netif_shield();
    snap_rec *s = &snaps[n_snaps++];
    s->t_ns = host_ns();
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
}

static char text[8u << 20]; /* device.json: about 300 bytes per snapshot */
static size_t text_n;

static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(text + text_n, sizeof text - text_n, fmt, ap);
    va_end(ap);
    if (n > 0) text_n += (size_t)n < sizeof text - text_n ? (size_t)n : sizeof text - text_n - 1;
}

static void write_file(const char *name, const void *data, size_t len)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", C.out, name);
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    const uint8_t *p = data;
    while (len > 0) {
        const ssize_t w = write(fd, p, len);
        if (w <= 0) break;
        p += w;
        len -= (size_t)w;
    }
    close(fd);
}

/* Read a small /proc file into `buf` (NUL-terminated); no stdio, no heap. */
static bool read_small(const char *path, char *buf, size_t cap)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    const ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    return true;
}

/* CPU time of each thread of this process (the POSIX port names each
 * task's thread after the task): "name": ns from /proc/self/task/<tid>/
 * schedstat. The directory is read with getdents64 into static storage
 * (opendir would allocate). */
static void put_threads(void)
{
    static char dents[16384];
    put(" \"threads_cpu_ns\": {");
    const int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY);
    bool first = true;
    if (dfd >= 0) {
        for (;;) {
            const long n = syscall(SYS_getdents64, dfd, dents, sizeof dents);
            if (n <= 0) break;
            for (long off = 0; off < n;) {
                const struct dirent64 *d = (const struct dirent64 *)(dents + off);
                off += d->d_reclen;
                if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
                char path[320], comm[64], stat[128];
                snprintf(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
                if (!read_small(path, comm, sizeof comm)) continue;
                comm[strcspn(comm, "\n\"\\")] = '\0';
                snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", d->d_name);
                if (!read_small(path, stat, sizeof stat)) continue;
                put("%s\"%s#%s\": %llu", first ? "" : ", ", comm, d->d_name, strtoull(stat, NULL, 10));
                first = false;
            }
        }
        close(dfd);
    }
    put("},\n");
}

static void report(void)
{
    const rts_netif_stats *st = rts_netif_stats_get();
    const rts_shield *sh = rts_netif_shield();
    put("{\"protect\": %d, \"tick_hz\": %u, \"crit_period_us\": %u, \"crit_work_us\": %u,\n", C.protect,
        (unsigned)configTICK_RATE_HZ, C.crit_period_us, C.crit_work_us);
    put(" \"cycles\": %u, \"misses\": %u, \"cycles_recorded\": %u,\n", n_cycles, n_misses,
        n_cycles < MAX_CYCLES ? n_cycles : MAX_CYCLES);
    put(" \"netif\": {\"nic_frames\": %u, \"ring_full\": %u, \"shield_dropped\": %u, \"stack_exhausted\": %u, "
        "\"ip_queue_full\": %u, \"no_endpoint\": %u, \"to_ip_task\": %u, \"tx_frames\": %u, \"tx_errors\": %u, "
        "\"rx_irqs\": %u, \"ip_prio_sets\": %u, \"shield_ns\": %llu, \"shield_frames\": %u, \"to_stack_ns\": %llu, "
        "\"to_stack_frames\": %u},\n",
        st->nic_frames, st->nic_ring_full, st->shield_dropped, st->stack_exhausted, st->ip_queue_full,
        st->no_endpoint, st->to_ip_task, st->tx_frames, st->tx_errors, st->rx_irqs, st->ip_prio_sets,
        (unsigned long long)st->shield_ns, st->shield_frames, (unsigned long long)st->to_stack_ns,
        st->to_stack_frames);
    put_threads();
    put(" \"shield_drops\": [");
    for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++)
        put("%s%llu", r ? ", " : "", sh ? (unsigned long long)sh->drops[r] : 0ull);
    put("],\n \"flows\": {");
    for (unsigned i = 0; i < C.nflows; i++) {
        const flow_cfg *f = &C.flow[i];
        const uint32_t d = f->tcp && !f->modbus ? accepted[i] : delivered[i];
        put("%s\"%s\": {\"proto\": \"%s\", \"port\": %u, \"delivered\": %u, \"latency_recorded\": %u",
            i ? ", " : "", f->name, f->modbus ? "modbus" : f->tcp ? "tcp" : "udp", f->port, d,
            f->tcp ? 0u : (d < MAX_LAT ? d : MAX_LAT));
        if (f->modbus) put(", \"connections\": %u, \"refused\": %u", accepted[i], mb_refused[i]);
        put("}");
    }
    put("},\n \"snapshots\": [");
    for (uint32_t k = 0; k < n_snaps; k++) {
        const snap_rec *s = &snaps[k];
        put("%s\n  {\"t_ns\": %llu, \"nic_frames\": %u, \"ring_full\": %u, \"shield_dropped\": %u, "
            "\"stack_exhausted\": %u, \"ip_queue_full\": %u, \"no_endpoint\": %u, \"to_ip_task\": %u, "
            "\"tx_frames\": %u, \"cycles\": %u, \"misses\": %u, \"shield_drops\": [",
            k ? "," : "", (unsigned long long)s->t_ns, s->nic_frames, s->ring_full, s->shield_dropped,
            s->stack_exhausted, s->ip_queue_full, s->no_endpoint, s->to_ip, s->tx, s->cycles, s->misses);
        for (unsigned r = 0; r < RTS_SHIELD_DROP_REASONS; r++) put("%s%u", r ? ", " : "", s->drops[r]);
        put("], \"delivered\": [");
        for (unsigned i = 0; i < C.nflows; i++) put("%s%u", i ? ", " : "", s->delivered[i]);
        put("]}");
    }
    put("\n ]}\n");
    write_file("device.json", text, text_n);
    write_file("cycles.bin", cycles, sizeof(cycle_rec) * (n_cycles < MAX_CYCLES ? n_cycles : MAX_CYCLES));
    for (unsigned i = 0; i < C.nflows; i++) {
        if (C.flow[i].tcp) continue;
        char name[64];
        snprintf(name, sizeof name, "latency_%s.bin", C.flow[i].name);
        write_file(name, lat[i], sizeof(lat_rec) * (delivered[i] < MAX_LAT ? delivered[i] : MAX_LAT));
    }
}

static void say(const char *s)
{
    const ssize_t w = write(1, s, strlen(s));
    (void)w;
}

static void monitor_main(void *arg)
{
    (void)arg;
    while (!FreeRTOS_IsNetworkUp()) vTaskDelay(pdMS_TO_TICKS(10));
    for (unsigned i = 0; i < C.nflows; i++) {
        if (!open_flow(i)) {
            taskENTER_CRITICAL();
            say("error: cannot open the socket of flow ");
            say(C.flow[i].name);
            say("\n");
            _exit(3);
        }
    }
    xTaskCreate(critical_main, "critical", configMINIMAL_STACK_SIZE * 2, NULL, C.crit_prio, NULL);
    taskENTER_CRITICAL();
    say("ready\n");
    taskEXIT_CRITICAL();
    const TickType_t end = xTaskGetTickCount() + pdMS_TO_TICKS(1000u * C.seconds);
    TickType_t next = xTaskGetTickCount();
    while (xTaskGetTickCount() < end) {
        snapshot();
        vTaskDelayUntil(&next, pdMS_TO_TICKS(SNAP_MS));
    }
    snapshot();
    taskENTER_CRITICAL(); /* signals held: nothing else runs while the files are written */
    report();
    say("done\n");
    _exit(0);
}

/* ------------------------------------------------ application hooks */

static NetworkInterface_t itf;
static NetworkEndPoint_t ep;
static rts_netif_cfg netif_cfg;

/* xApplicationGetRandomNumber, ulApplicationGetNextSequenceNumber: rts_app_random.c */

void rts_selftest_assert(const char *file, int line)
{
    char msg[300];
    const int n = snprintf(msg, sizeof msg, "rts_freertos_device: kernel assertion failed: %s:%d\n", file, line);
    if (n > 0) {
        const ssize_t w = write(2, msg, (size_t)n);
        (void)w;
    }
    _exit(4);
}

void vApplicationTickHook(void)
{
    /* Ticks the kernel counted while the scheduler was suspended reach the
     * hook late or not at all: give each tick up to now this hook's time. */
    static TickType_t last;
    const TickType_t t = xTaskGetTickCountFromISR();
    const uint64_t now = host_ns();
    if (t - last > TICK_RING) last = t - TICK_RING;
    while (last != t) tick_ns[++last % TICK_RING] = now;
    rts_netif_tick_isr();
}

void vApplicationIdleHook(void)
{
    const struct timespec t = {0, 200000};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2) die("usage: rts_freertos_device CONFIG");
    read_config(argv[1]);
    srand((unsigned)host_ns());
    static const uint8_t gw[4] = {0, 0, 0, 0}, dns[4] = {0, 0, 0, 0};
    netif_cfg.ifname = C.ifname;
    netif_cfg.protect = C.protect != 0;
    rts_shield_cfg_default(&netif_cfg.shield);
    netif_cfg.shield.short_circuit = (uint32_t)C.short_circuit;
    netif_cfg.shield.recycle_threshold = C.recycle_below;
    netif_cfg.shield.global_capacity = C.global_capacity;
    netif_cfg.shield.global_period = (rts_time_ns)C.global_period_us * 1000u;
    netif_cfg.net_task_prio = C.net_prio;
    netif_cfg.poll_task_prio = C.poll_prio ? C.poll_prio : configMAX_PRIORITIES - 2;
    netif_cfg.rx_cpu = C.rx_cpu;
    netif_cfg.ip_task_inherits = C.protect != 0;
    rts_netif_fill(&itf, &netif_cfg);
    FreeRTOS_FillEndPoint(&itf, &ep, C.ip, C.mask, gw, dns, C.mac);
    if (FreeRTOS_IPInit_Multi() != pdPASS) die("FreeRTOS_IPInit_Multi failed");
    xTaskCreate(monitor_main, "monitor", configMINIMAL_STACK_SIZE * 2, NULL, configMAX_PRIORITIES - 1, NULL);
    fflush(stdout);
    vTaskStartScheduler();
    return 1;
}
