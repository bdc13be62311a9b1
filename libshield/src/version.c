#include "rtshield/rts_version.h"

const char *rts_version(void)
{
    return "0.1.0";
}
