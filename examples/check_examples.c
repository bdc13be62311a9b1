/* Build and run every example of the docs once on the host (ctest: examples.check). */
#include <stdio.h>

#include "examples.h"

int main(void)
{
    static const struct { const char *name; int (*run)(void); } examples[] = {
        {"strict_limiter", example_strict_limiter},
        {"danicki_hooks", example_danicki_hooks},
        {"rx_path", example_rx_path},
        {"shield_driver", example_shield_driver},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
        const int rc = examples[i].run();
        printf("%-16s %s\n", examples[i].name, rc == 0 ? "ok" : "FAILED");
        failed += rc != 0;
    }
    return failed != 0;
}
