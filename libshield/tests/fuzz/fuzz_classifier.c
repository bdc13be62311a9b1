/* libFuzzer target: the classifier on arbitrary bytes. The frame is copied
 * into a block of exactly `size` bytes so any over-read is an ASan report;
 * the result must always be a valid flow and the parsed facts consistent. */
#include <stdlib.h>
#include <string.h>

#include "rtshield/rts_classifier.h"

static rts_flow_table table;
static int ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        uint8_t id;
        rts_flow_table_init(&table, 0);
        (void)rts_flow_table_bind(&table, RTS_PROTO_UDP, 502, 0, &id);
        (void)rts_flow_table_bind(&table, RTS_PROTO_TCP, 502, 0, &id);
        (void)rts_flow_table_bind(&table, RTS_PROTO_UDP, 502, 0xC0A80001u, &id);
        (void)rts_flow_table_bind(&table, RTS_PROTO_TCP, 80, 0, &id);
        ready = 1;
    }
    uint8_t *frame = malloc(size ? size : 1);
    if (frame == NULL) return 0;
    if (size) memcpy(frame, data, size);
    rts_classifier_info info;
    const uint8_t flow = rts_classifier_classify_isr(&table, frame, size, &info);
    if (flow >= RTS_FLOW_MAX || info.kind > RTS_CLASSIFIER_MALFORMED) abort();
    if (info.kind == RTS_CLASSIFIER_MALFORMED && flow != RTS_FLOW_DEFAULT) abort();
    if ((info.kind == RTS_CLASSIFIER_TCP || info.kind == RTS_CLASSIFIER_UDP) && (size_t)info.l4_off + 4u > size) abort();
    if (info.kind == RTS_CLASSIFIER_FRAGMENT && flow != RTS_FLOW_BACKGROUND) abort();
    if (info.l3_off > size) abort();
    /* The receive path's lean parse (no header facts) on the same exact-size
     * block: the same flow, and no over-read of its own. */
    if (rts_classifier_classify_isr(&table, frame, size, NULL) != flow) abort();
    /* The parse must not depend on bytes past len: same answer from a
     * longer buffer holding extra junk. */
    uint8_t *longer = malloc(size + 64u);
    if (longer != NULL) {
        if (size) memcpy(longer, data, size);
        memset(longer + size, 0xA5, 64u);
        if (rts_classifier_classify_isr(&table, longer, size, NULL) != flow) abort();
        free(longer);
    }
    free(frame);
    return 0;
}
