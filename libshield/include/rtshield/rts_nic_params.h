/**
 * @file rts_nic_params.h
 * @brief Parameter rules for the multiqueue NIC (Behnke et al. §7.3.2).
 *
 *   WCPD        = t_netstack · Σ_q n_q          worst-case packet processing delay
 *   t_qf(q)     = n_q / R_max(q) = n_q · t_P(q) time to fill queue q at the maximum rate
 *   t_abs(q)   <= max(t_d(q), t_qf(q)) − WCPD   t_d: the process's maximum allowed delay
 *   t_P(q)     <= t_pack(q) <= t_abs(q)
 *
 * All times in ns; products saturate at UINT64_MAX instead of wrapping.
 * Pure functions with scalar arguments so that the analysis front end calls
 * them through the binding. Context: any. Cost: O(1) (O(m) for the arrays).
 */
#ifndef RTSHIELD_RTS_NIC_PARAMS_H
#define RTSHIELD_RTS_NIC_PARAMS_H

#include "rtshield/rts_types.h"

/** Bits of the result of the checks: which bound a queue violates. */
typedef enum rts_nic_params_violation {
    RTS_NIC_PARAMS_OK = 0,
    RTS_NIC_V_SIZE = 1 << 0,       /**< n_q is 0 */
    RTS_NIC_V_NO_WINDOW = 1 << 1,  /**< max(t_d, t_qf) <= WCPD: no absolute timer can satisfy the bound */
    RTS_NIC_V_TABS = 1 << 2,       /**< t_abs > max(t_d, t_qf) − WCPD */
    RTS_NIC_V_TPACK_LOW = 1 << 3,  /**< t_pack < t_P */
    RTS_NIC_V_TPACK_HIGH = 1 << 4  /**< t_pack > t_abs */
} rts_nic_params_violation;

/** Parameters of one queue for rts_nic_params_validate(). */
typedef struct rts_nic_params_queue {
    uint32_t n_q;       /**< queue size (descriptors) */
    uint32_t pad;
    rts_time_ns t_p;    /**< minimum period of the flow, 1/R_max */
    rts_time_ns t_d;    /**< maximum delay the receiving process tolerates */
    rts_time_ns t_abs;  /**< absolute timer */
    rts_time_ns t_pack; /**< packet timer */
} rts_nic_params_queue;

/** WCPD = t_netstack · sum_nq (sum of all queue sizes), saturating.
 *  Context: any. Cost: O(1). @return the WCPD in ns */
rts_time_ns rts_nic_params_wcpd(rts_time_ns t_netstack, uint64_t sum_nq);

/** t_qf = n_q · t_P (n_q / R_max with R_max = 1/t_P), saturating.
 *  Context: any. Cost: O(1). @return t_qf in ns */
rts_time_ns rts_nic_params_t_qf(uint32_t n_q, rts_time_ns t_p);

/** Largest admissible absolute timer: max(t_d, t_qf) − wcpd, or 0 when that
 *  is not positive (then no t_abs satisfies the bound).
 *  Context: any. Cost: O(1). @return the bound in ns */
rts_time_ns rts_nic_params_t_abs_max(rts_time_ns t_d, rts_time_ns t_qf, rts_time_ns wcpd);

/**
 * Check one queue's configuration against the §7.3.2 bounds.
 * Context: any. Cost: O(1).
 * @param t_netstack per-packet stack processing time
 * @param sum_nq Σ n_q over all queues (this one included), for the WCPD
 * @return OR of rts_nic_params_violation bits, 0 when all bounds hold
 */
uint32_t rts_nic_params_check(rts_time_ns t_netstack, uint64_t sum_nq, uint32_t n_q, rts_time_ns t_p,
                              rts_time_ns t_d, rts_time_ns t_abs, rts_time_ns t_pack);

/**
 * Check m queues together (the WCPD is over all of them).
 * Context: any. Cost: O(m).
 * @param[out] first_bad index of the first violating queue, m when none (may be NULL)
 * @return OR of the violation bits of all queues; RTS_NIC_V_SIZE when q is NULL or m is 0
 */
uint32_t rts_nic_params_validate(const rts_nic_params_queue *q, unsigned m, rts_time_ns t_netstack,
                                 unsigned *first_bad);

#endif /* RTSHIELD_RTS_NIC_PARAMS_H */
