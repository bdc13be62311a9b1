/* What a board gives the device application (rts_device.c): its clock, its
 * unit of CPU work, and how the config comes in and the results go out.
 *
 * One implementation per board folder: rig/freertos/posix/board.c (the
 * FreeRTOS POSIX port on a host: files, stdout, host time) and
 * rig/freertos/mps2-an385/board.c (Cortex-M3 in QEMU: semihosting, guest
 * time from the board's timer). Each board folder also holds
 * rts_board_cfg.h with its record sizes:
 *
 *   RTS_BOARD_NAME        "posix" | "mps2-an385" (device.json "board")
 *   RTS_BOARD_CLOCK       "host" | "guest" (device.json "clock": what every
 *                         *_ns time in the results counts)
 *   RTS_BOARD_PROGRAM     the program's name in its error lines
 *   RTS_BOARD_MAX_CYCLES  critical-task cycles recorded (cycles.bin)
 *   RTS_BOARD_MAX_LAT     datagrams recorded per UDP flow (latency_<flow>.bin)
 *   RTS_BOARD_MAX_SNAP    100 ms snapshots recorded (device.json)
 *
 * Contexts: rts_board_now_ns() from any context (tasks, the tick hook, the
 * RX interrupt); the output functions from a task or from the application
 * before the scheduler starts; rts_board_write()/close() inside a critical
 * section too (the report is written with the scheduler held).
 */
#ifndef RTS_BOARD_H
#define RTS_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rts_board_cfg.h"

/** The board's clock in ns (host CLOCK_MONOTONIC, or guest time). */
uint64_t rts_board_now_ns(void);

/** `us` of the calling task's own CPU time (time taken by a preempting
 *  task or interrupt does not count). */
void rts_board_work(uint32_t us);

/** A line (or part of one) to whoever runs the device: "ready\n", "done\n". */
void rts_board_say(const char *s);

/** One error line to whoever runs the device (stderr, or the console). */
void rts_board_error(const char *line);

/** End the program with `status`. */
void rts_board_exit(int status) __attribute__((noreturn));

/** Create (truncate) `path` for writing; < 0 when it cannot be. */
int rts_board_open(const char *path);
void rts_board_write(int fd, const void *data, size_t len);
void rts_board_close(int fd);

/** Whether the file `path` exists (the runner's "stop" file: one check per
 *  snapshot, from a task). */
bool rts_board_exists(const char *path);

/** Write the board's per-task CPU times into the report being built
 *  (`"threads_cpu_ns": {...},` through rts_device_put()). */
void rts_board_put_threads(void);

/** Write when the frames reached the board's link into the report being
 *  built (`"link_frames": {...},` through rts_device_put()), if the board
 *  knows: the POSIX board by the host kernel's arrival times; the MPS2 board
 *  writes nothing. */
void rts_board_put_link(void);

/** The tick hook's board part (after the tick's time is recorded). */
void rts_board_tick_isr(void);

/** The idle hook's board part. */
void rts_board_idle(void);

/** The monitor took a snapshot at `t_ns` (the board may tell its runner). */
void rts_board_snapshot(uint64_t t_ns);

/* ------------------------------------------- the application provides these */

/** Parse the config `text` (NUL-terminated, modified in place), set up the
 *  network and the monitor task; the board then starts the scheduler. A
 *  bad config ends the program with status 2 and one error line. */
void rts_device_start(char *text);

/** Append to the report being written (a printf subset: %s %c %d %u %lu
 *  %llu and %%). */
void rts_device_put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Format into `buf` (the same subset); returns the length written. */
size_t rts_device_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
