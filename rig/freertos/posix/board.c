/* The POSIX board (app/rts_board.h): the device application on the FreeRTOS
 * POSIX port, on a host.
 *
 *   rts_freertos_device CONFIG
 *
 * The config is the file CONFIG; results are files in its `out` folder;
 * "ready"/"done" go to stdout and error lines to stderr. Time is the host's
 * CLOCK_MONOTONIC; a task's work is CPU time of its own thread (a preempted
 * task's pthread is stopped, so time taken by others does not count). The
 * NIC (rts_netif_posix.c) is an AF_PACKET socket on a veth end, its RX
 * interrupt the tick hook. Once the scheduler runs no task touches stdio
 * (the port's signals): output is write(2). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "FreeRTOS.h"
#include "rts_board.h"
#include "rts_nic.h"
#include "task.h"

uint64_t rts_board_now_ns(void)
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

void rts_board_work(uint32_t us)
{
    const uint64_t end = thread_cpu_ns() + (uint64_t)us * 1000u;
    while (thread_cpu_ns() < end) {
    }
}

static void write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        const ssize_t w = write(fd, p, len);
        if (w <= 0) break;
        p += w;
        len -= (size_t)w;
    }
}

void rts_board_say(const char *s)
{
    write_all(1, s, strlen(s));
}

void rts_board_error(const char *line)
{
    write_all(2, line, strlen(line));
}

void rts_board_exit(int status)
{
    _exit(status);
}

int rts_board_open(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

void rts_board_write(int fd, const void *data, size_t len)
{
    write_all(fd, data, len);
}

void rts_board_close(int fd)
{
    close(fd);
}

bool rts_board_exists(const char *path)
{
    return access(path, F_OK) == 0;
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
 * task's thread after the task): "name#tid": ns from /proc/self/task/<tid>/
 * schedstat. The directory is read with getdents64 into static storage
 * (opendir would allocate). */
void rts_board_put_threads(void)
{
    static char dents[16384];
    rts_device_put(" \"threads_cpu_ns\": {");
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
                (void)rts_device_fmt(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
                if (!read_small(path, comm, sizeof comm)) continue;
                comm[strcspn(comm, "\n\"\\")] = '\0';
                (void)rts_device_fmt(path, sizeof path, "/proc/self/task/%s/schedstat", d->d_name);
                if (!read_small(path, stat, sizeof stat)) continue;
                rts_device_put("%s\"%s#%s\": %llu", first ? "" : ", ", comm, d->d_name, strtoull(stat, NULL, 10));
                first = false;
            }
        }
        close(dfd);
    }
    rts_device_put("},\n");
}

void rts_board_put_link(void)
{
    uint64_t t0, bin;
    uint32_t n;
    const uint32_t *frames = rts_nic_posix_link(&t0, &bin, &n);
    rts_device_put(" \"link_frames\": {\"t0_ns\": %llu, \"bin_ns\": %llu, \"frames\": [", (unsigned long long)t0,
                   (unsigned long long)bin);
    for (uint32_t i = 0; i < n; i++) rts_device_put("%s%u", i ? ", " : "", __atomic_load_n(&frames[i], __ATOMIC_RELAXED));
    rts_device_put("]},\n");
}

void rts_board_tick_isr(void)
{
    rts_nic_tick_isr(); /* the port's one interrupt context is the NIC's RX interrupt */
}

void rts_board_idle(void)
{
    const struct timespec t = {0, 200000};
    nanosleep(&t, NULL);
}

void rts_board_snapshot(uint64_t t_ns)
{
    (void)t_ns; /* host time: the runner's own clock */
}

static void fail(const char *what, const char *arg)
{
    char msg[700];
    (void)rts_device_fmt(msg, sizeof msg, "%s: %s%s\n", RTS_BOARD_PROGRAM, what, arg);
    rts_board_error(msg);
    exit(2);
}

int main(int argc, char **argv)
{
    static char config[65536];
    if (argc != 2) fail("usage: rts_freertos_device CONFIG", "");
    const int fd = open(argv[1], O_RDONLY);
    if (fd < 0) fail("cannot open config ", argv[1]);
    size_t n = 0;
    for (;;) {
        const ssize_t r = read(fd, config + n, sizeof config - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n == sizeof config - 1) fail("config too long: ", argv[1]);
    config[n] = '\0';
    rts_device_start(config);
    vTaskStartScheduler();
    return 1;
}
