/* Parameter rules for the multiqueue NIC (Behnke et al. §7.3.2). */
#include "rtshield/rts_nic_params.h"
#include "rtshield/rts_opts.h"
#include "rts_time.h"

#if RTS_CONFIG_NIC

rts_time_ns rts_nic_params_wcpd(rts_time_ns t_netstack, uint64_t sum_nq)
{
    return rts_time_mul(t_netstack, sum_nq);
}

rts_time_ns rts_nic_params_t_qf(uint32_t n_q, rts_time_ns t_p)
{
    return rts_time_mul(t_p, n_q);
}

rts_time_ns rts_nic_params_t_abs_max(rts_time_ns t_d, rts_time_ns t_qf, rts_time_ns wcpd)
{
    const rts_time_ns window = t_d > t_qf ? t_d : t_qf;
    return window > wcpd ? window - wcpd : 0u;
}

uint32_t rts_nic_params_check(rts_time_ns t_netstack, uint64_t sum_nq, uint32_t n_q, rts_time_ns t_p,
                              rts_time_ns t_d, rts_time_ns t_abs, rts_time_ns t_pack)
{
    uint32_t v = RTS_NIC_PARAMS_OK;
    if (n_q == 0u) v |= RTS_NIC_V_SIZE;
    const rts_time_ns wcpd = rts_nic_params_wcpd(t_netstack, sum_nq);
    const rts_time_ns tqf = rts_nic_params_t_qf(n_q, t_p);
    const rts_time_ns window = t_d > tqf ? t_d : tqf;
    if (window <= wcpd) {
        v |= RTS_NIC_V_NO_WINDOW;
    } else if (t_abs > window - wcpd) {
        v |= RTS_NIC_V_TABS;
    }
    if (t_pack < t_p) v |= RTS_NIC_V_TPACK_LOW;
    if (t_pack > t_abs) v |= RTS_NIC_V_TPACK_HIGH;
    return v;
}

uint32_t rts_nic_params_validate(const rts_nic_params_queue *q, unsigned m, rts_time_ns t_netstack,
                                 unsigned *first_bad)
{
    if (first_bad != NULL) *first_bad = m;
    if (q == NULL || m == 0u) {
        if (first_bad != NULL) *first_bad = 0u;
        return RTS_NIC_V_SIZE;
    }
    uint64_t sum = 0u;
    for (unsigned i = 0; i < m; i++) sum += q[i].n_q;
    uint32_t all = RTS_NIC_PARAMS_OK;
    for (unsigned i = 0; i < m; i++) {
        const uint32_t v = rts_nic_params_check(t_netstack, sum, q[i].n_q, q[i].t_p, q[i].t_d, q[i].t_abs,
                                                q[i].t_pack);
        if (v != 0u && all == 0u && first_bad != NULL) *first_bad = i;
        all |= v;
    }
    return all;
}

#else /* RTS_CONFIG_NIC == 0: compiled out (rts_opts.h) */
typedef int rts_nic_params_compiled_out; /* ISO C: a translation unit declares something */
#endif
