/*
 * rts_cyclic: the device under test of `rtshield rig linux` -- the minimal
 * control program of the arXiv 2007.08885 study (Section 5): a cyclic task that inverts an
 * output every cycle.
 *
 *   - period from --cycle-us (default 1000 us), driven by
 *     clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) on an absolute schedule
 *     (a late cycle is followed by short ones, as on the paper's logic
 *     analyser trace);
 *   - mlockall(MCL_CURRENT | MCL_FUTURE) and one buffer allocated and touched
 *     before the first cycle, so no page fault happens while cycling;
 *   - SCHED_FIFO / SCHED_RR at --prio (default 99), SCHED_DEADLINE with
 *     --dl-runtime-ns / --dl-deadline-ns / --dl-period-ns (default 100 us /
 *     1 ms / 1 ms, the paper's values), or SCHED_OTHER ("other", for tests
 *     without privileges), pinned to --cpu;
 *   - every cycle records its start (the toggle) and end timestamps
 *     (CLOCK_MONOTONIC, ns); the file is written once, when the program
 *     stops (SIGTERM / SIGINT, or --max-cycles reached; with --keep-cycling 1
 *     it cycles on unrecorded after --max-cycles until it is stopped);
 *   - --heartbeat A.B.C.D:PORT makes the output visible on the network: every
 *     --heartbeat-every cycles (default 10), right after the toggle, the task
 *     sends one UDP datagram there (16 bytes, little endian: uint64 sequence
 *     number from 0, int64 the toggle's CLOCK_MONOTONIC ns), without waiting
 *     (a full socket buffer drops it) -- `rtshield rig serve linux`'s
 *     heartbeat, whose arrival jitter `rtshield rig device` watches.
 *
 * Protocol with the caller (python/rtshield/rig/linux.py), on stdout:
 *   "ready policy=fifo prio=99 cpu=1 t0=<ns>"   scheduling applied, cycling
 *   "refused policy=deadline errno=1 <reason>"  the kernel refused; exit 3
 *   "done cycles=<n> overruns=<n> file=<path>"  file written; exit 0
 * Usage errors: one line on stderr, exit 2.
 *
 * File format (little endian, native on every Linux target we run on):
 *   header, 64 bytes:  char magic[8] = "RTSCYC1\0"; uint32 version = 1;
 *                      uint32 policy (0 other, 1 fifo, 2 rr, 6 deadline);
 *                      int32 cpu; int32 prio; int64 period_ns; int64 t0_ns;
 *                      uint64 count; uint64 overruns; uint64 reserved (0)
 *   then count records: int64 start_ns; int64 end_ns
 * Cycle i was planned to start at t0 + (i + 1) * period.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

struct rts_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

struct rts_cyc_header {
    char magic[8];
    uint32_t version;
    uint32_t policy;
    int32_t cpu;
    int32_t prio;
    int64_t period_ns;
    int64_t t0_ns;
    uint64_t count;
    uint64_t overruns;
    uint64_t reserved;
};
_Static_assert(sizeof(struct rts_cyc_header) == 64, "cycle file header is 64 bytes");

struct rts_cyc_record {
    int64_t start_ns;
    int64_t end_ns;
};

static volatile sig_atomic_t stop_requested;
/* The "physical output" of the paper's program; volatile so the toggle stays. */
static volatile int output_level;

static void on_stop(int sig) {
    (void)sig;
    stop_requested = 1;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "rts_cyclic: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static long long parse_ll(const char *opt, const char *s, long long lo, long long hi) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "rts_cyclic: %s must be an integer in [%lld, %lld], not '%s'\n", opt, lo,
                hi, s);
        exit(2);
    }
    return v;
}

static int apply_sched(uint32_t policy, int prio, uint64_t rt, uint64_t dl, uint64_t per,
                       const char **why) {
    if (policy == SCHED_DEADLINE) {
        struct rts_sched_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.sched_policy = SCHED_DEADLINE;
        a.sched_runtime = rt;
        a.sched_deadline = dl;
        a.sched_period = per;
        if (syscall(SYS_sched_setattr, 0, &a, 0) != 0) {
            int e = errno;
            if (e == EPERM)
                *why = "sched_setattr(SCHED_DEADLINE) refused (EPERM): no privilege, or the "
                       "task is pinned to fewer CPUs than its root domain while deadline "
                       "admission control is on";
            else if (e == EBUSY)
                *why = "sched_setattr(SCHED_DEADLINE) refused (EBUSY): not enough deadline "
                       "bandwidth left on this root domain";
            else if (e == EINVAL)
                *why = "sched_setattr(SCHED_DEADLINE) refused (EINVAL): runtime <= deadline "
                       "<= period violated or policy unknown to this kernel";
            else
                *why = "sched_setattr(SCHED_DEADLINE) failed";
            errno = e;
            return -1;
        }
        return 0;
    }
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = (policy == SCHED_OTHER) ? 0 : prio;
    if (sched_setscheduler(0, (int)policy, &sp) != 0) {
        *why = (errno == EPERM) ? "sched_setscheduler refused (EPERM): no privilege "
                                  "(CAP_SYS_NICE or RLIMIT_RTPRIO)"
                                : "sched_setscheduler failed";
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    long long cycle_us = 1000, max_cycles = 0, cpu = -1, prio = 99;
    long long dl_rt = 100000, dl_dl = 1000000, dl_per = 1000000;
    long long keep_cycling = 0, hb_every = 10;
    const char *out = NULL, *pol = "fifo", *hb = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (i + 1 >= argc) usage_error("option needs a value", o);
        const char *v = argv[++i];
        if (!strcmp(o, "--cycle-us")) cycle_us = parse_ll(o, v, 50, 1000000);
        else if (!strcmp(o, "--max-cycles")) max_cycles = parse_ll(o, v, 1, 100000000);
        else if (!strcmp(o, "--cpu")) cpu = parse_ll(o, v, -1, CPU_SETSIZE - 1);
        else if (!strcmp(o, "--prio")) prio = parse_ll(o, v, 1, 99);
        else if (!strcmp(o, "--dl-runtime-ns")) dl_rt = parse_ll(o, v, 1024, 1000000000);
        else if (!strcmp(o, "--dl-deadline-ns")) dl_dl = parse_ll(o, v, 1024, 1000000000);
        else if (!strcmp(o, "--dl-period-ns")) dl_per = parse_ll(o, v, 1024, 1000000000);
        else if (!strcmp(o, "--policy")) pol = v;
        else if (!strcmp(o, "--out")) out = v;
        else if (!strcmp(o, "--keep-cycling")) keep_cycling = parse_ll(o, v, 0, 1);
        else if (!strcmp(o, "--heartbeat")) hb = v;
        else if (!strcmp(o, "--heartbeat-every")) hb_every = parse_ll(o, v, 1, 1000000);
        else usage_error("unknown option", o);
    }
    if (!out) usage_error("--out FILE is required", NULL);
    if (!max_cycles) usage_error("--max-cycles N is required (the buffer is preallocated)", NULL);
    uint32_t policy;
    if (!strcmp(pol, "fifo")) policy = SCHED_FIFO;
    else if (!strcmp(pol, "rr")) policy = SCHED_RR;
    else if (!strcmp(pol, "deadline")) policy = SCHED_DEADLINE;
    else if (!strcmp(pol, "other")) policy = SCHED_OTHER;
    else usage_error("--policy must be fifo, rr, deadline or other", pol);

    /* The heartbeat's socket, opened before real-time scheduling starts. */
    int hb_fd = -1;
    struct sockaddr_in hb_to;
    memset(&hb_to, 0, sizeof hb_to);
    if (hb) {
        char host[64];
        const char *colon = strrchr(hb, ':');
        if (!colon || colon == hb || (size_t)(colon - hb) >= sizeof host)
            usage_error("--heartbeat must be A.B.C.D:PORT", hb);
        memcpy(host, hb, (size_t)(colon - hb));
        host[colon - hb] = '\0';
        hb_to.sin_family = AF_INET;
        hb_to.sin_port = htons((uint16_t)parse_ll("--heartbeat port", colon + 1, 1, 65535));
        if (inet_pton(AF_INET, host, &hb_to.sin_addr) != 1)
            usage_error("--heartbeat must be A.B.C.D:PORT", hb);
        hb_fd = socket(AF_INET, SOCK_DGRAM, 0);
        if (hb_fd < 0) usage_error("cannot open the heartbeat socket", NULL);
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    /* Preallocate and touch every page before locking and cycling. */
    size_t n = (size_t)max_cycles;
    struct rts_cyc_record *rec = calloc(n, sizeof *rec);
    if (!rec) usage_error("cannot allocate the cycle buffer; lower --max-cycles", NULL);
    memset(rec, 0xff, n * sizeof *rec);
    FILE *f = fopen(out, "wb");
    if (!f) usage_error("cannot open the output file", out);

    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
        printf("refused policy=%s errno=%d mlockall failed (no CAP_IPC_LOCK or RLIMIT_MEMLOCK)\n",
               pol, errno);
        return 3;
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            printf("refused policy=%s errno=%d sched_setaffinity to CPU %lld failed\n", pol, errno,
                   cpu);
            return 3;
        }
    }
    const char *why = "";
    if (apply_sched(policy, (int)prio, (uint64_t)dl_rt, (uint64_t)dl_dl, (uint64_t)dl_per, &why)) {
        printf("refused policy=%s errno=%d %s\n", pol, errno, why);
        return 3;
    }

    const int64_t period = cycle_us * 1000;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    const int64_t t0 = (int64_t)next.tv_sec * 1000000000LL + next.tv_nsec;
    printf("ready policy=%s prio=%lld cpu=%lld t0=%" PRId64 "\n", pol,
           policy == SCHED_FIFO || policy == SCHED_RR ? prio : 0, cpu, t0);
    fflush(stdout);

    size_t count = 0;
    uint64_t overruns = 0, cycle = 0, hb_seq = 0;
    int64_t planned = t0;
    while (!stop_requested && (count < n || keep_cycling)) {
        planned += period;
        next.tv_sec = (time_t)(planned / 1000000000LL);
        next.tv_nsec = (long)(planned % 1000000000LL);
        int rc;
        do {
            rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        } while (rc == EINTR && !stop_requested);
        if (stop_requested) break;
        int64_t start = now_ns();
        output_level = !output_level; /* the paper's "write outputs" stage */
        int64_t end = now_ns();
        if (start > planned + period) overruns++; /* later than the next planned toggle */
        if (hb_fd >= 0 && cycle++ % (uint64_t)hb_every == 0) {
            int64_t msg[2] = {(int64_t)hb_seq++, start};
            (void)sendto(hb_fd, msg, sizeof msg, MSG_DONTWAIT, (const struct sockaddr *)&hb_to,
                         sizeof hb_to);
        }
        if (count < n) {
            rec[count].start_ns = start;
            rec[count].end_ns = end;
            count++;
        }
    }

    /* Leave real-time scheduling before writing the file. */
    struct sched_param sp0;
    memset(&sp0, 0, sizeof sp0);
    sched_setscheduler(0, SCHED_OTHER, &sp0);

    struct rts_cyc_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, "RTSCYC1", 8);
    h.version = 1;
    h.policy = policy;
    h.cpu = (int32_t)cpu;
    h.prio = (policy == SCHED_FIFO || policy == SCHED_RR) ? (int32_t)prio : 0;
    h.period_ns = period;
    h.t0_ns = t0;
    h.count = count;
    h.overruns = overruns;
    if (fwrite(&h, sizeof h, 1, f) != 1 || (count && fwrite(rec, sizeof *rec, count, f) != count) ||
        fclose(f) != 0) {
        fprintf(stderr, "rts_cyclic: writing %s failed: %s\n", out, strerror(errno));
        return 1;
    }
    printf("done cycles=%zu overruns=%" PRIu64 " file=%s\n", count, overruns, out);
    return 0;
}
