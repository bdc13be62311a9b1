/* The MPS2 board's records (app/rts_board.h), sized for its 4 MB of data
 * RAM beside the heap: 32 768 critical cycles (327 s of a 10 ms period),
 * 4 096 datagrams per UDP flow, 4 096 snapshots (409 s). */
#ifndef RTS_BOARD_CFG_H
#define RTS_BOARD_CFG_H

#define RTS_BOARD_NAME "mps2-an385"
#define RTS_BOARD_CLOCK "guest"
#define RTS_BOARD_PROGRAM "rts_mps2_device"
#define RTS_BOARD_MAX_CYCLES 32768u
#define RTS_BOARD_MAX_LAT 4096u
#define RTS_BOARD_MAX_SNAP 4096u

#endif
