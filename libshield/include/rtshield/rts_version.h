/** @file rts_version.h @brief libshield's version. */
#ifndef RTSHIELD_RTS_VERSION_H
#define RTSHIELD_RTS_VERSION_H

/** The library version as "MAJOR.MINOR.PATCH". Context: any. Cost: O(1). */
const char *rts_version(void);

#endif
