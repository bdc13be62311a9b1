/* Minimal MODBUS/TCP server: see rts_modbus.h. */
#include "rts_modbus.h"

#include <string.h>

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* The answer's MBAP header (transaction and unit echoed) for a PDU of pdu_len bytes. */
static size_t header(const uint8_t *req, uint8_t *out, size_t pdu_len)
{
    memcpy(out, req, 4); /* transaction id, protocol id 0 */
    put16(out + 4, (uint16_t)(pdu_len + 1u));
    out[6] = req[6];
    return RTS_MODBUS_MBAP + pdu_len;
}

static size_t exception(const uint8_t *req, uint8_t *out, uint8_t fc, uint8_t code)
{
    out[7] = (uint8_t)(fc | 0x80u);
    out[8] = code;
    return header(req, out, 2);
}

rts_modbus_result rts_modbus_serve(const uint8_t *in, size_t in_len, uint16_t *regs, size_t nregs, uint8_t *out,
                                   size_t out_cap, size_t *consumed, size_t *out_len)
{
    if (out_cap < RTS_MODBUS_MAX_ADU) return RTS_MODBUS_REFUSED;
    if (in_len < 4) return RTS_MODBUS_NEED_MORE;
    if (be16(in + 2) != 0) return RTS_MODBUS_REFUSED; /* protocol id: 0 is MODBUS */
    if (in_len < 6) return RTS_MODBUS_NEED_MORE;
    const size_t length = be16(in + 4); /* unit id + PDU */
    if (length < 2 || length > RTS_MODBUS_MAX_LENGTH) return RTS_MODBUS_REFUSED;
    const size_t size = RTS_MODBUS_MBAP - 1u + length;
    if (in_len < size) return RTS_MODBUS_NEED_MORE;
    *consumed = size;
    const uint8_t *pdu = in + RTS_MODBUS_MBAP; /* pdu[0 .. length-2]: the function code and its data */
    const size_t pdu_len = length - 1u;
    const uint8_t fc = pdu[0];
    if (fc != RTS_MODBUS_READ_HOLDING && fc != RTS_MODBUS_WRITE_SINGLE) {
        *out_len = exception(in, out, fc, RTS_MODBUS_EX_FUNCTION);
        return RTS_MODBUS_REPLY;
    }
    if (pdu_len != 5) { /* both functions: code, address (2), quantity or value (2) */
        *out_len = exception(in, out, fc, RTS_MODBUS_EX_VALUE);
        return RTS_MODBUS_REPLY;
    }
    const size_t addr = be16(pdu + 1);
    const uint16_t arg = be16(pdu + 3);
    if (fc == RTS_MODBUS_READ_HOLDING) {
        if (arg < 1 || arg > RTS_MODBUS_MAX_READ) {
            *out_len = exception(in, out, fc, RTS_MODBUS_EX_VALUE);
        } else if (addr + arg > nregs) {
            *out_len = exception(in, out, fc, RTS_MODBUS_EX_ADDRESS);
        } else {
            out[7] = fc;
            out[8] = (uint8_t)(2u * arg);
            for (size_t i = 0; i < arg; i++) put16(out + 9 + 2 * i, regs[addr + i]);
            *out_len = header(in, out, 2u + 2u * arg);
        }
        return RTS_MODBUS_REPLY;
    }
    if (addr >= nregs) {
        *out_len = exception(in, out, fc, RTS_MODBUS_EX_ADDRESS);
        return RTS_MODBUS_REPLY;
    }
    regs[addr] = arg;
    memcpy(out + 7, pdu, 5); /* the answer echoes the request */
    *out_len = header(in, out, 5);
    return RTS_MODBUS_REPLY;
}
