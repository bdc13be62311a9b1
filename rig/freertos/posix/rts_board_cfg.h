/* The POSIX board's records (app/rts_board.h): the rig's longest run (3 x
 * 120 s phases + 2 x 60 s breaks = 480 s) fits: 480 000 cycles of the
 * shortest period (one tick), 4 800 snapshots. */
#ifndef RTS_BOARD_CFG_H
#define RTS_BOARD_CFG_H

#define RTS_BOARD_NAME "posix"
#define RTS_BOARD_CLOCK "host"
#define RTS_BOARD_PROGRAM "rts_freertos_device"
#define RTS_BOARD_MAX_CYCLES (1u << 19)
#define RTS_BOARD_MAX_LAT (1u << 18)
#define RTS_BOARD_MAX_SNAP 8192u

#endif
