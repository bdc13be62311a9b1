/**
 * @file rts_classifier.h
 * @brief Early demultiplexing: from a raw Ethernet frame to a flow id
 *        (Behnke et al. §5.3.1).
 *
 * Reads only header bytes, checks every read against `len` and never reads
 * past it; never writes the frame. Accepted: Ethernet II with at most one
 * 802.1Q tag; ARP; IPv4 with header-length and total-length checks; IPv4
 * fragments (MF set or offset != 0) to the background flow (Behnke §5.7);
 * ICMP; TCP and UDP by destination (local) port. Everything else, including
 * IPv6 and malformed frames, goes to the default flow.
 *
 * Multi-byte fields are assembled byte by byte in network order: no
 * unaligned loads, no libc, so the classifier runs on any core.
 */
#ifndef RTSHIELD_RTS_CLASSIFIER_H
#define RTSHIELD_RTS_CLASSIFIER_H

#include "rtshield/rts_flow_table.h"
#include "rtshield/rts_types.h"

/** What the classifier recognised. */
typedef enum rts_classifier_kind {
    RTS_CLASSIFIER_OTHER = 0,     /**< another EtherType (or an 802.3 length field) */
    RTS_CLASSIFIER_ARP = 1,
    RTS_CLASSIFIER_ICMP = 2,
    RTS_CLASSIFIER_TCP = 3,
    RTS_CLASSIFIER_UDP = 4,
    RTS_CLASSIFIER_IPV4_OTHER = 5, /**< IPv4 with another transport protocol */
    RTS_CLASSIFIER_FRAGMENT = 6,   /**< IPv4 fragment (MF set or offset != 0) */
    RTS_CLASSIFIER_IPV6 = 7,       /**< IPv6: default flow for now */
    RTS_CLASSIFIER_MALFORMED = 8   /**< truncated or inconsistent headers */
} rts_classifier_kind;

/** Header facts the classifier extracted (host byte order). */
typedef struct rts_classifier_info {
    uint8_t kind;         /**< rts_classifier_kind */
    uint8_t vlan;         /**< 1 when an 802.1Q tag was present */
    uint16_t vlan_tci;    /**< the tag's TCI when vlan == 1 */
    uint16_t local_port;  /**< TCP/UDP destination port, else 0 */
    uint16_t remote_port; /**< TCP/UDP source port, else 0 */
    uint32_t src_addr;    /**< IPv4 source address, else 0 */
    uint16_t l3_off;      /**< offset of the network header */
    uint16_t l4_off;      /**< offset of the transport header (IPv4), else 0 */
} rts_classifier_info;

/**
 * Parse the headers of `frame[0..len)`.
 * Context: ISR or task. Cost: bounded, no loop: at most 18 + 20 + 4 byte
 * reads after one header-length computation.
 * @param[out] info filled on every return (kind RTS_CLASSIFIER_MALFORMED on error)
 * @retval RTS_OK headers parsed (kind says what they are)
 * @retval RTS_EMALFORMED truncated or inconsistent (also for frame == NULL)
 */
rts_err rts_classifier_parse_isr(const uint8_t *frame, size_t len, rts_classifier_info *info);

/**
 * Classify a frame into a flow of `t`: ARP → RTS_FLOW_ARP, unfragmented
 * ICMP → RTS_FLOW_ICMP, fragments → RTS_FLOW_BACKGROUND, TCP/UDP → the
 * bound flow of (protocol, destination port, source), anything else and
 * malformed frames → RTS_FLOW_DEFAULT.
 * Context: ISR or task. Cost: bounded, no loop over the flows: the header
 * checks of rts_classifier_parse_isr() plus one O(1) flow lookup (one hash,
 * a slot or two: rts_flow_table_lookup_isr()). With `info` NULL (the receive
 * path's ISR) a leaner parse that fills no struct and checks the same bytes
 * gives the same flow.
 * @param info may be NULL; else receives the parsed header facts
 * @return the flow id (always valid)
 */
uint8_t rts_classifier_classify_isr(const rts_flow_table *t, const uint8_t *frame, size_t len, rts_classifier_info *info);

#endif /* RTSHIELD_RTS_CLASSIFIER_H */
