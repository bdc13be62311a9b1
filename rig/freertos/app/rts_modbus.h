/* A minimal MODBUS/TCP server for the rig's device (issue 17): enough for a
 * PLC poll cycle — Read Holding Registers (0x03) and Write Single Register
 * (0x06) — over the MBAP framing of "MODBUS Messaging on TCP/IP".
 *
 * Pure: bytes in, bytes out, no heap, no OS; every byte of the request is
 * checked against the length the caller holds before it is read. The
 * device's MODBUS worker (rts_device.c) feeds it what FreeRTOS_recv()
 * returned and sends what it answers; rig/freertos/app/test_modbus.c tests it.
 */
#ifndef RTS_MODBUS_H
#define RTS_MODBUS_H

#include <stddef.h>
#include <stdint.h>

/** MBAP header: transaction (2), protocol (2, 0 = MODBUS), length (2), unit (1). */
#define RTS_MODBUS_MBAP 7u
/** Largest MBAP length field: the unit identifier plus a 253-byte PDU. */
#define RTS_MODBUS_MAX_LENGTH 254u
/** Largest ADU (MBAP header without the unit byte + the length field's bytes). */
#define RTS_MODBUS_MAX_ADU (RTS_MODBUS_MBAP - 1u + RTS_MODBUS_MAX_LENGTH)
/** Read Holding Registers: at most 125 registers per request (the spec's limit). */
#define RTS_MODBUS_MAX_READ 125u

enum {
    RTS_MODBUS_READ_HOLDING = 0x03,
    RTS_MODBUS_WRITE_SINGLE = 0x06,
};

/** Exception codes the server answers with. */
enum {
    RTS_MODBUS_EX_FUNCTION = 0x01, /* function code not served */
    RTS_MODBUS_EX_ADDRESS = 0x02,  /* register range outside the table */
    RTS_MODBUS_EX_VALUE = 0x03,    /* quantity out of range or PDU of the wrong size */
};

typedef enum {
    RTS_MODBUS_NEED_MORE = 0, /* fewer bytes than one whole request: read more */
    RTS_MODBUS_REPLY = 1,     /* one request consumed; *out_len bytes of answer in out */
    RTS_MODBUS_REFUSED = -1,  /* not MODBUS/TCP (protocol id, length field): close the connection */
} rts_modbus_result;

/**
 * Serve the first request in in[0..in_len).
 *
 * @param regs,nregs   the holding-register table (read and written in place)
 * @param out,out_cap  the answer buffer (RTS_MODBUS_MAX_ADU bytes always suffice)
 * @param consumed     set to the request's size on RTS_MODBUS_REPLY
 * @param out_len      set to the answer's size on RTS_MODBUS_REPLY
 * @retval RTS_MODBUS_NEED_MORE  the request is not complete yet (nothing consumed)
 * @retval RTS_MODBUS_REPLY      a normal or an exception response was written
 * @retval RTS_MODBUS_REFUSED    framing broken, or out_cap too small
 */
rts_modbus_result rts_modbus_serve(const uint8_t *in, size_t in_len, uint16_t *regs, size_t nregs, uint8_t *out,
                                   size_t out_cap, size_t *consumed, size_t *out_len);

#endif
