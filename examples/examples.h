/* The examples' entry points, called by check_examples.c; and the host port. */
#ifndef RTSHIELD_EXAMPLES_H
#define RTSHIELD_EXAMPLES_H

#include "rtshield/rts_port.h"

void plat_advance_ns(rts_time_ns ns);      /* move the host clock */
void plat_feed_frames(unsigned n, uint16_t udp_port);   /* n UDP frames into the ring */

int example_strict_limiter(void);
int example_danicki_hooks(void);
int example_rx_path(void);
int example_shield_driver(void);

#endif /* RTSHIELD_EXAMPLES_H */
