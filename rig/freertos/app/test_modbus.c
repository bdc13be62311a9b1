/* Tests of the rig device's MODBUS/TCP request parser (rts_modbus.c): the
 * two served functions, exception answers, and every malformed, short or
 * oversized request refused or held back; a byte-at-a-time feed and random
 * input read only the bytes given (run under ASan by ctest). */
#include <stdlib.h>
#include <string.h>

#include "rts_modbus.h"
#include "rts_test.h"

static uint16_t regs[16];
static uint8_t out[RTS_MODBUS_MAX_ADU];

/* A request: transaction 0x1234, protocol 0, unit 1, then the PDU. */
static size_t req(uint8_t *b, const uint8_t *pdu, size_t pdu_len)
{
    const uint8_t h[7] = {0x12, 0x34, 0, 0, (uint8_t)((pdu_len + 1) >> 8), (uint8_t)(pdu_len + 1), 1};
    memcpy(b, h, 7);
    memcpy(b + 7, pdu, pdu_len);
    return 7 + pdu_len;
}

static rts_modbus_result serve(const uint8_t *in, size_t n, size_t *used, size_t *len)
{
    *used = *len = 0;
    return rts_modbus_serve(in, n, regs, 16, out, sizeof out, used, len);
}

static void test_read_holding(void)
{
    for (unsigned i = 0; i < 16; i++) regs[i] = (uint16_t)(0x100 + i);
    uint8_t b[32];
    const size_t n = req(b, (const uint8_t[]){0x03, 0, 2, 0, 3}, 5);
    size_t used, len;
    CHECK_EQ(serve(b, n, &used, &len), RTS_MODBUS_REPLY);
    CHECK_EQ(used, 12);
    CHECK_EQ(len, 7 + 2 + 6);
    const uint8_t want[] = {0x12, 0x34, 0, 0, 0, 9, 1, 0x03, 6, 0x01, 0x02, 0x01, 0x03, 0x01, 0x04};
    CHECK(memcmp(out, want, sizeof want) == 0);
}

static void test_write_single(void)
{
    uint8_t b[32];
    const size_t n = req(b, (const uint8_t[]){0x06, 0, 5, 0xBE, 0xEF}, 5);
    size_t used, len;
    CHECK_EQ(serve(b, n, &used, &len), RTS_MODBUS_REPLY);
    CHECK_EQ(regs[5], 0xBEEF);
    CHECK_EQ(len, n);
    CHECK(memcmp(out, b, n) == 0); /* the answer echoes the request */
}

static void check_exception(const char *name, const uint8_t *pdu, size_t pdu_len, uint8_t fc, uint8_t code)
{
    ROW(name);
    uint8_t b[300];
    const size_t n = req(b, pdu, pdu_len);
    size_t used, len;
    CHECK_EQ(serve(b, n, &used, &len), RTS_MODBUS_REPLY);
    CHECK_EQ(used, n);
    CHECK_EQ(len, 9);
    CHECK_EQ(out[5], 3);
    CHECK_EQ(out[7], fc | 0x80);
    CHECK_EQ(out[8], code);
}

static void test_exceptions(void)
{
    check_exception("unknown function", (const uint8_t[]){0x10, 0, 0, 0, 1}, 5, 0x10, RTS_MODBUS_EX_FUNCTION);
    check_exception("read zero registers", (const uint8_t[]){0x03, 0, 0, 0, 0}, 5, 0x03, RTS_MODBUS_EX_VALUE);
    check_exception("read 126 registers", (const uint8_t[]){0x03, 0, 0, 0, 126}, 5, 0x03, RTS_MODBUS_EX_VALUE);
    check_exception("read past the table", (const uint8_t[]){0x03, 0, 15, 0, 2}, 5, 0x03, RTS_MODBUS_EX_ADDRESS);
    check_exception("read at 0xffff", (const uint8_t[]){0x03, 0xFF, 0xFF, 0, 1}, 5, 0x03, RTS_MODBUS_EX_ADDRESS);
    check_exception("write past the table", (const uint8_t[]){0x06, 0, 16, 0, 1}, 5, 0x06, RTS_MODBUS_EX_ADDRESS);
    check_exception("read PDU too short", (const uint8_t[]){0x03, 0, 0, 0}, 4, 0x03, RTS_MODBUS_EX_VALUE);
    check_exception("write PDU too long", (const uint8_t[]){0x06, 0, 0, 0, 1, 9}, 6, 0x06, RTS_MODBUS_EX_VALUE);
    check_exception("function code only", (const uint8_t[]){0x03}, 1, 0x03, RTS_MODBUS_EX_VALUE);
    uint8_t big[253] = {0x03, 0, 0, 0, 1};
    check_exception("largest PDU", big, sizeof big, 0x03, RTS_MODBUS_EX_VALUE);
}

static void test_refused(void)
{
    size_t used, len;
    uint8_t b[300] = {0x12, 0x34, 0, 1, 0, 6, 1, 0x03, 0, 0, 0, 1};
    ROW("protocol id 1");
    CHECK_EQ(serve(b, 12, &used, &len), RTS_MODBUS_REFUSED);
    ROW("length 0");
    const uint8_t l0[] = {0x12, 0x34, 0, 0, 0, 0, 1};
    CHECK_EQ(serve(l0, sizeof l0, &used, &len), RTS_MODBUS_REFUSED);
    ROW("length 1 (no function code)");
    const uint8_t l1[] = {0x12, 0x34, 0, 0, 0, 1, 1};
    CHECK_EQ(serve(l1, sizeof l1, &used, &len), RTS_MODBUS_REFUSED);
    ROW("oversized: length 255");
    memset(b, 0, sizeof b);
    b[5] = 255;
    CHECK_EQ(serve(b, sizeof b, &used, &len), RTS_MODBUS_REFUSED);
    ROW("oversized: length 0xffff");
    b[4] = 0xFF;
    b[5] = 0xFF;
    CHECK_EQ(serve(b, sizeof b, &used, &len), RTS_MODBUS_REFUSED);
    CHECK_EQ(used, 0);
    CHECK_EQ(len, 0);
    ROW("answer buffer too small");
    const size_t n = req(b, (const uint8_t[]){0x03, 0, 0, 0, 1}, 5);
    CHECK_EQ(rts_modbus_serve(b, n, regs, 16, out, RTS_MODBUS_MAX_ADU - 1, &used, &len), RTS_MODBUS_REFUSED);
}

/* Short requests: every prefix of a valid request asks for more and consumes nothing. */
static void test_short(void)
{
    uint8_t b[32];
    const size_t n = req(b, (const uint8_t[]){0x03, 0, 0, 0, 2}, 5);
    for (size_t k = 0; k < n; k++) {
        uint8_t *copy = malloc(k ? k : 1); /* exactly k bytes: ASan catches any read past them */
        memcpy(copy, b, k);
        size_t used, len;
        ROW("prefix");
        CHECK_EQ(serve(copy, k, &used, &len), RTS_MODBUS_NEED_MORE);
        CHECK_EQ(used, 0);
        free(copy);
    }
}

/* Two pipelined requests in one buffer: served one at a time. */
static void test_pipelined(void)
{
    uint8_t b[64];
    size_t n = req(b, (const uint8_t[]){0x06, 0, 1, 0, 7}, 5);
    n += req(b + n, (const uint8_t[]){0x03, 0, 1, 0, 1}, 5);
    size_t used, len;
    CHECK_EQ(serve(b, n, &used, &len), RTS_MODBUS_REPLY);
    CHECK_EQ(used, 12);
    CHECK_EQ(serve(b + used, n - used, &used, &len), RTS_MODBUS_REPLY);
    CHECK_EQ(out[9], 0);
    CHECK_EQ(out[10], 7);
}

/* Random input, in exactly-sized heap copies: any result, but no read past the
 * input, a consumed size within it and an answer within the buffer. */
static void test_random(void)
{
    srand(17);
    for (int t = 0; t < 20000; t++) {
        const size_t n = (size_t)(rand() % 300);
        uint8_t *b = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) b[i] = (uint8_t)rand();
        if (n >= 4 && rand() % 2) b[2] = b[3] = 0; /* often a MODBUS protocol id */
        if (n >= 6 && rand() % 2) b[4] = 0;        /* often a plausible length */
        size_t used, len;
        const rts_modbus_result r = serve(b, n, &used, &len);
        ROW("random");
        if (r == RTS_MODBUS_REPLY) {
            CHECK(used >= 8 && used <= n);
            CHECK(len >= 9 && len <= sizeof out);
        }
        free(b);
    }
}

int main(void)
{
    RTS_RUN(test_read_holding);
    RTS_RUN(test_write_single);
    RTS_RUN(test_exceptions);
    RTS_RUN(test_refused);
    RTS_RUN(test_short);
    RTS_RUN(test_pipelined);
    RTS_RUN(test_random);
    return rts_test_end();
}
