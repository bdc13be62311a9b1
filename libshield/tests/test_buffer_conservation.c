/* Buffer conservation, model-based: random operation sequences drive the
 * flow queues (rts_flow_queue_*), the receive driver that owns them (rts_rx_*) and
 * the shield entry points that own the driver (rts_shield_*), with flow
 * priorities and queue limits changed at run time, against a small
 * reference model kept here:
 *
 *   - every buffer is where the model says (ring, ISR, queued in which
 *     flow's FIFO at which position, task, spare pool): none lost, none
 *     duplicated; per-state counts, per-flow counts and rts_flow_queue_check() agree;
 *   - every call returns what the model predicts (error codes, the buffer
 *     popped, refilled or recycled, the eager outcome);
 *   - every recycling (path (c) of Behnke et al. Figure 8) takes a buffer
 *     of strictly lower priority than the arrival (with the short circuit
 *     off, docs/decisions/behnke-software.md: of at most its priority and
 *     never the arrival itself), checked on its own, not only against the model;
 *   - the driver's and the shield's counters (outcomes, recycled, harvested,
 *     drops) equal the model's.
 *
 * RTS_CONSERVATION_SEQUENCES sequences (default 10^6, see docs/fuzzing.md)
 * of 1..RTS_CONSERVATION_MAX_OPS operations each, spread over the three
 * layers; sequence i uses seed RTS_CONSERVATION_SEED + i, so a run is
 * deterministic. On a failure the test prints the seed, re-runs shorter
 * prefixes of the sequence with every check after every operation, and
 * prints the shortest failing prefix, operation by operation. Environment
 * overrides: RTS_CONSERVATION_SEQUENCES=n, RTS_CONSERVATION_SEED=s (run
 * from seed s). */
#include <stdarg.h>
#include <string.h>

#include "rtshield/rts_rx_driver.h"
#include "rtshield/rts_shield.h"
#include "rts_frames.h"
#include "rts_test.h"

#ifndef RTS_CONSERVATION_SEQUENCES
#define RTS_CONSERVATION_SEQUENCES 1000000u
#endif
#ifndef RTS_CONSERVATION_SEED
#define RTS_CONSERVATION_SEED 0x5EED0000u
#endif
#define RTS_CONSERVATION_MAX_OPS 24u

enum { MAXB = 24, NFLOWS = 8, NUSER = NFLOWS - RTS_FLOW_FIRST_USER, LEVELS = RTS_FLOW_PRIO_LEVELS };
_Static_assert(MAXB <= RTS_POOL_MAX_BUFS, "pool of the test fits the build");
_Static_assert(NFLOWS <= RTS_FLOW_MAX, "flows of the test fit the build");

/* ------------------------------------------------------------------ rng */
static uint64_t rng_state;
static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}
static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }

/* ---------------------------------------------------------------- model */
typedef struct model {
    unsigned nbufs, ring_size, thr, sc;
    uint8_t st[MAXB];
    uint16_t fifo[RTS_FLOW_MAX][MAXB];
    unsigned count[RTS_FLOW_MAX];
    unsigned level[RTS_FLOW_MAX];
    unsigned rr_last[LEVELS];
    uint16_t pool[MAXB]; /* spare buffers, a stack: top at pool[npool - 1] */
    unsigned npool;
    unsigned n[5];
    /* driver layer */
    unsigned prio[RTS_FLOW_MAX];  /* flow table priority */
    unsigned limit[RTS_FLOW_MAX]; /* flow queue bound */
    uint32_t outcomes[RTS_RX_OUTCOMES];
    uint32_t recycled, harvested;
} model;

static void m_init(model *m, unsigned nbufs, unsigned ring, unsigned thr)
{
    memset(m, 0, sizeof *m);
    m->nbufs = nbufs;
    m->ring_size = ring;
    m->thr = thr;
    m->sc = 1u;
    for (unsigned b = 0; b < nbufs; b++) m->st[b] = b < ring ? RTS_BUF_RING : RTS_BUF_POOL;
    for (unsigned b = nbufs; b-- > ring;) m->pool[m->npool++] = (uint16_t)b;
    m->n[RTS_BUF_RING] = ring;
    m->n[RTS_BUF_POOL] = nbufs - ring;
}

static void m_move(model *m, unsigned b, unsigned to)
{
    m->n[m->st[b]]--;
    m->st[b] = (uint8_t)to;
    m->n[to]++;
}

static int m_lowest(const model *m)
{
    int lo = -1;
    for (unsigned f = 0; f < RTS_FLOW_MAX; f++) {
        if (m->count[f] && (lo < 0 || (int)m->level[f] < lo)) lo = (int)m->level[f];
    }
    return lo;
}

static int m_highest(const model *m)
{
    int hi = -1;
    for (unsigned f = 0; f < RTS_FLOW_MAX; f++) {
        if (m->count[f] && (int)m->level[f] > hi) hi = (int)m->level[f];
    }
    return hi;
}

static uint16_t m_pop_head(model *m, unsigned f, unsigned to)
{
    const uint16_t b = m->fifo[f][0];
    memmove(&m->fifo[f][0], &m->fifo[f][1], (m->count[f] - 1u) * sizeof m->fifo[f][0]);
    m->count[f]--;
    m_move(m, b, to);
    return b;
}

static rts_err m_push(model *m, unsigned b, unsigned f, unsigned p, unsigned lim)
{
    if (m->count[f] >= lim) return RTS_EFULL;
    m->fifo[f][m->count[f]++] = (uint16_t)b;
    m->level[f] = p; /* a non-empty flow moves to its new level with its buffers */
    m_move(m, b, RTS_BUF_QUEUED);
    return RTS_OK;
}

/* Oldest buffer of the lowest-id flow of the lowest level back to the ring. */
static rts_err m_recycle(model *m, uint16_t *b, uint8_t *f)
{
    const int lo = m_lowest(m);
    if (lo < 0) return RTS_EEMPTY;
    if (m->n[RTS_BUF_RING] + m->n[RTS_BUF_ISR] >= m->ring_size) return RTS_EFULL;
    for (unsigned k = 0; k < RTS_FLOW_MAX; k++) {
        if (m->count[k] && (int)m->level[k] == lo) {
            *f = (uint8_t)k;
            *b = m_pop_head(m, k, RTS_BUF_RING);
            return RTS_OK;
        }
    }
    return RTS_EEMPTY; /* not reached */
}

/* Oldest buffer of the highest level, round robin over its flows. */
static rts_err m_pop(model *m, uint16_t *b, uint8_t *f, uint8_t *p)
{
    const int hi = m_highest(m);
    if (hi < 0) return RTS_EEMPTY;
    unsigned pick = RTS_FLOW_MAX;
    for (unsigned k = 0; k < RTS_FLOW_MAX && pick == RTS_FLOW_MAX; k++) {
        if (k > m->rr_last[hi] && m->count[k] && (int)m->level[k] == hi) pick = k;
    }
    for (unsigned k = 0; k < RTS_FLOW_MAX && pick == RTS_FLOW_MAX; k++) {
        if (m->count[k] && (int)m->level[k] == hi) pick = k;
    }
    m->rr_last[hi] = pick;
    *f = (uint8_t)pick;
    *p = (uint8_t)hi;
    *b = m_pop_head(m, pick, RTS_BUF_TASK);
    return RTS_OK;
}

static rts_err m_refill(model *m, uint16_t *b)
{
    if (m->n[RTS_BUF_RING] + m->n[RTS_BUF_ISR] >= m->ring_size) return RTS_EFULL;
    if (m->npool == 0u) return RTS_EEMPTY;
    *b = m->pool[--m->npool];
    m_move(m, *b, RTS_BUF_RING);
    return RTS_OK;
}

/* A buffer handed between the ring and the ISR (rx_take, repost): refused
 * unless `b` is in state `from`. */
static rts_err m_transfer(model *m, unsigned b, unsigned from, unsigned to)
{
    if (b >= m->nbufs || m->st[b] != from) return RTS_EINVAL;
    m_move(m, b, to);
    return RTS_OK;
}

static rts_err m_release(model *m, unsigned b)
{
    if (b >= m->nbufs || m->st[b] != RTS_BUF_TASK) return RTS_EINVAL;
    m->pool[m->npool++] = (uint16_t)b;
    m_move(m, b, RTS_BUF_POOL);
    return RTS_OK;
}

/* A random buffer in state s (or, one time in eight, any id up to
 * nbufs + 1: mostly a wrong one). */
static unsigned pick_buf(const model *m, unsigned s)
{
    if (below(8) == 0) return below(m->nbufs + 2u);
    unsigned ids[MAXB], k = 0;
    for (unsigned b = 0; b < m->nbufs; b++) {
        if (m->st[b] == s) ids[k++] = b;
    }
    return k ? ids[below(k)] : below(m->nbufs + 2u);
}

/* ------------------------------------------------------------- checking */
static char why[256];
static bool verbose;

static bool fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return false;
}

static void say(const char *fmt, ...)
{
    if (!verbose) return;
    va_list ap;
    va_start(ap, fmt);
    printf("    ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* Cheap check after every operation: per-state counts. */
static bool agree_counts(const rts_flow_queue *fq, const model *m)
{
    for (unsigned s = 0; s < 5u; s++) {
        if (rts_flow_queue_count(fq, s) != m->n[s]) {
            return fail("buffers in state %u: libshield %u, model %u", s, rts_flow_queue_count(fq, s), m->n[s]);
        }
    }
    return true;
}

/* Full check (end of sequence, or after every operation while shrinking). */
static bool agree_full(const rts_flow_queue *fq, const model *m)
{
    if (rts_flow_queue_check(fq) != RTS_OK) return fail("rts_flow_queue_check() fails");
    if (!agree_counts(fq, m)) return false;
    unsigned total = 0;
    for (unsigned s = 0; s < 5u; s++) total += m->n[s];
    if (total != m->nbufs) return fail("model lost a buffer (%u of %u)", total, m->nbufs);
    for (unsigned b = 0; b < m->nbufs; b++) {
        if (fq->state[b] != m->st[b]) return fail("buffer %u: state %u, model %u", b, fq->state[b], m->st[b]);
    }
    for (unsigned f = 0; f < RTS_FLOW_MAX; f++) {
        if (rts_flow_queue_flow_count(fq, f) != m->count[f]) {
            return fail("flow %u holds %u, model %u", f, rts_flow_queue_flow_count(fq, f), m->count[f]);
        }
        uint16_t b = fq->q[f].head;
        for (unsigned i = 0; i < m->count[f]; i++) {
            if (b != m->fifo[f][i]) return fail("flow %u position %u: buffer %u, model %u", f, i, b, m->fifo[f][i]);
            if (fq->owner[b] != f) return fail("buffer %u owned by flow %u, queued in %u", b, fq->owner[b], f);
            b = fq->next[b];
        }
        if (m->count[f] && fq->q[f].level != m->level[f]) {
            return fail("flow %u filed at level %u, model %u", f, fq->q[f].level, m->level[f]);
        }
    }
    uint16_t b = fq->pool_head;
    for (unsigned i = m->npool; i-- > 0;) {
        if (b != m->pool[i]) return fail("spare pool position %u: buffer %u, model %u", m->npool - 1u - i, b, m->pool[i]);
        b = fq->next[b];
    }
    if (b != RTS_BUF_NONE) return fail("spare pool longer than the model's");
    if (rts_flow_queue_highest_prio(fq) != m_highest(m)) return fail("highest level %d, model %d", rts_flow_queue_highest_prio(fq), m_highest(m));
    if (rts_flow_queue_lowest_prio(fq) != m_lowest(m)) return fail("lowest level %d, model %d", rts_flow_queue_lowest_prio(fq), m_lowest(m));
    return true;
}

/* `got` (the call under test) and `want` (the model's answer, which may move
 * the model) are evaluated once each, in that order. */
#define EXPECT_ERR(got, want, what)                                                  \
    do {                                                                             \
        const int got_ = (int)(got), want_ = (int)(want);                            \
        if (got_ != want_) return fail("%s returned %d, model %d", (what), got_, want_); \
    } while (0)

/* What the run exercised (printed, and required to be non-zero). */
static unsigned long long seen_outcome[RTS_RX_OUTCOMES], seen_recycle_sc, seen_recycle_nosc, seen_prio_change,
    seen_fq_recycle;

/* --------------------------------------------------- layer 1: flow queues */
static rts_flow_queue fq;

/* The two calls that hand one buffer between the ring and the ISR (ops 0
 * and 3 of fq_step). */
typedef struct {
    const char *name;
    rts_err (*call)(rts_flow_queue *fq, unsigned buf);
    unsigned from, to;
} fq_transfer;

static const fq_transfer fq_transfers[] = {
    {"rts_flow_queue_rx_take_isr", rts_flow_queue_rx_take_isr, RTS_BUF_RING, RTS_BUF_ISR},
    {"rts_flow_queue_repost_isr", rts_flow_queue_repost_isr, RTS_BUF_ISR, RTS_BUF_RING},
};

static bool fq_step(model *m)
{
    const unsigned op = below(9);
    rts_err e, w;
    uint16_t b = 0, mb = 0;
    uint8_t f = 0, mf = 0, p = 0, mp = 0;
    switch (op) {
    case 0:
    case 3: {
        const fq_transfer *t = &fq_transfers[op == 3];
        const unsigned buf = pick_buf(m, t->from);
        say("%s(%u)", t->name, buf);
        EXPECT_ERR(t->call(&fq, buf), m_transfer(m, buf, t->from, t->to), t->name);
        break;
    }
    case 1:
    case 2: {
        const unsigned buf = pick_buf(m, RTS_BUF_ISR);
        const unsigned fl = below(10) == 0 ? RTS_FLOW_MAX : below(NFLOWS);
        /* Few levels, so equal priorities and run-time changes are common. */
        const unsigned pr = below(12) == 0 ? LEVELS : below(4) * 3u;
        const unsigned lim = 1u + below(m->nbufs);
        say("push(buf %u, flow %u, prio %u, limit %u)", buf, fl, pr, lim);
        e = rts_flow_queue_push_isr(&fq, buf, fl, pr, lim);
        if (buf >= m->nbufs || m->st[buf] != RTS_BUF_ISR || fl >= RTS_FLOW_MAX || pr >= LEVELS) w = RTS_EINVAL;
        else w = m_push(m, buf, fl, pr, lim);
        EXPECT_ERR(e, w, "rts_flow_queue_push_isr");
        break;
    }
    case 4: {
        say("recycle_lowest()");
        const int lowest = m_lowest(m);
        e = rts_flow_queue_recycle_lowest_isr(&fq, &b, &f);
        w = m_recycle(m, &mb, &mf);
        EXPECT_ERR(e, w, "rts_flow_queue_recycle_lowest_isr");
        if (e == RTS_OK) {
            if (b != mb || f != mf) return fail("recycled buffer %u of flow %u, model %u of %u", b, f, mb, mf);
            if ((int)fq.q[f].level != lowest) return fail("recycled from level %u, lowest was %d", fq.q[f].level, lowest);
            seen_fq_recycle++;
        }
        break;
    }
    case 5: {
        say("pop_highest()");
        e = rts_flow_queue_pop_highest(&fq, &b, &f, &p);
        w = m_pop(m, &mb, &mf, &mp);
        EXPECT_ERR(e, w, "rts_flow_queue_pop_highest");
        if (e == RTS_OK && (b != mb || f != mf || p != mp)) {
            return fail("popped buffer %u flow %u prio %u, model %u %u %u", b, f, p, mb, mf, mp);
        }
        break;
    }
    case 6: {
        say("refill()");
        e = rts_flow_queue_refill(&fq, &b);
        w = m_refill(m, &mb);
        EXPECT_ERR(e, w, "rts_flow_queue_refill");
        if (e == RTS_OK && b != mb) return fail("refilled buffer %u, model %u", b, mb);
        break;
    }
    case 7: {
        const unsigned buf = pick_buf(m, RTS_BUF_TASK);
        say("release(%u)", buf);
        e = rts_flow_queue_release(&fq, buf);
        EXPECT_ERR(e, m_release(m, buf), "rts_flow_queue_release");
        break;
    }
    default: {
        const unsigned t = below(m->ring_size + 2u);
        say("set_threshold(%u)", t);
        e = rts_flow_queue_set_threshold(&fq, t);
        EXPECT_ERR(e, t > m->ring_size ? RTS_EINVAL : RTS_OK, "rts_flow_queue_set_threshold");
        break;
    }
    }
    return agree_counts(&fq, m);
}

/* ------------------------------------- layers 2 and 3: driver and shield */
static rts_rx_driver rxd;
static rts_shield sh;
static uint8_t frames[NUSER][64];
static size_t frame_len[NUSER];
static uint8_t user_id[NUSER];
static rts_time_ns now;

static rts_rx_driver *drv(int shield) { return shield ? &sh.rx : &rxd; }

/* What the eager half must do with ring buffer b of flow fl at priority pr
 * (Behnke Figure 8 with this model), and the rule checks of path (c). */
static bool arrival(model *m, int shield, unsigned buf, int by_frame, unsigned fl, unsigned pr)
{
    rts_rx_driver *rx = drv(shield);
    rts_rx_result r;
    rts_shield_rx srx;
    rts_shield_dec dec;
    rts_err e;
    unsigned outcome = 0, repost = 0, rflow = 0;
    if (by_frame) {
        say("%s arrival on buf %u: frame of flow %u (prio %u)", shield ? "shield" : "driver", buf, fl, pr);
    } else {
        say("%s arrival on buf %u: descriptor flow %u prio %u", shield ? "shield" : "driver", buf, fl, pr);
    }
    const uint8_t *frame = by_frame ? frames[fl - RTS_FLOW_FIRST_USER] : NULL;
    const size_t len = by_frame ? frame_len[fl - RTS_FLOW_FIRST_USER] : 0u;
    if (!by_frame) {
        /* Descriptor path: out-of-range values are clamped (rts_rx_driver_eager_desc_isr). */
        const unsigned dfl = fl, dpr = pr;
        fl = fl >= RTS_FLOW_MAX ? RTS_FLOW_DEFAULT : fl;
        pr = pr >= LEVELS ? LEVELS - 1u : pr;
        e = shield ? rts_shield_rx_frame_isr(&sh, buf, NULL, 0u, dfl, dpr, now, now, &srx, &dec)
                   : rts_rx_driver_eager_desc_isr(rx, buf, dfl, dpr, now, &r);
    } else {
        e = shield ? rts_shield_rx_frame_isr(&sh, buf, frame, len, 0u, 0u, now, now, &srx, &dec)
                   : rts_rx_driver_eager_isr(rx, buf, frame, len, now, &r);
    }
    if (buf >= m->nbufs || m->st[buf] != RTS_BUF_RING) {
        EXPECT_ERR(e, RTS_EINVAL, "eager call on a buffer not in the ring");
        return true;
    }
    EXPECT_ERR(e, RTS_OK, "eager call");
    if (shield) {
        outcome = srx.outcome;
        repost = srx.repost;
        rflow = srx.recycled_flow;
        if (srx.flow != fl || srx.prio != pr) return fail("shield: flow %u prio %u, model %u %u", srx.flow, srx.prio, fl, pr);
        if ((rflow != RTS_FLOW_NONE) != ((dec.flags & RTS_SHIELD_F_RECYCLED) != 0u)) return fail("RECYCLED flag disagrees");
    } else {
        outcome = r.outcome;
        repost = r.repost;
        rflow = r.recycled_flow;
        if (r.flow != fl || r.prio != pr) return fail("driver: flow %u prio %u, model %u %u", r.flow, r.prio, fl, pr);
    }
    m->harvested++;
    /* rts_flow_queue_ring_low() once the arrival has left the ring: fewer than the
     * threshold posted without it. */
    const bool low = m->n[RTS_BUF_RING] - 1u < m->thr;
    unsigned want;
    if (low && m->sc && (int)pr <= m_lowest(m)) want = RTS_RX_SHORT_CIRCUIT;
    else if (m->count[fl] >= m->limit[fl]) want = RTS_RX_QUEUE_FULL;
    else want = RTS_RX_QUEUED;
    /* Path (b) depends on the flow's server, which the model does not run:
     * accepted only for a flow that has one, and only where (b) is tried. */
    if (outcome == RTS_RX_FLOW_LIMIT && want != RTS_RX_SHORT_CIRCUIT && rx->flows.flows[fl].limited) want = outcome;
    if (outcome != want) return fail("outcome %u, model %u", outcome, want);
    m->outcomes[want]++;
    seen_outcome[want]++;
    if (want != RTS_RX_QUEUED) {
        if (repost != buf) return fail("outcome %u re-posts %u, not the arrival %u", want, repost, buf);
        if (rflow != RTS_FLOW_NONE) return fail("outcome %u recycled flow %u", want, rflow);
        return true;
    }
    m_push(m, buf, fl, pr, m->limit[fl]);
    /* Path (c) after the push: rts_rx_driver.h and Behnke Figure 8. */
    const int lowest_now = m_lowest(m);
    unsigned head_lowest = RTS_BUF_NONE;
    for (unsigned k = 0; k < RTS_FLOW_MAX && head_lowest == RTS_BUF_NONE; k++) {
        if (m->count[k] && (int)m->level[k] == lowest_now) head_lowest = m->fifo[k][0];
    }
    uint16_t mv = RTS_BUF_NONE;
    uint8_t mvf = RTS_FLOW_NONE;
    if (low && (lowest_now < (int)pr || (!m->sc && head_lowest != buf))) {
        if (m_recycle(m, &mv, &mvf) == RTS_OK) m->recycled++;
    }
    if (rflow != RTS_FLOW_NONE) {
        /* The rule itself, independent of the model's prediction. */
        const unsigned vlevel = rx->fq.q[rflow].count ? rx->fq.q[rflow].level : m->level[rflow];
        if (repost == buf) return fail("path (c) recycled the arrival itself (buffer %u)", buf);
        if (m->sc && !(vlevel < pr)) return fail("path (c) recycled a level-%u buffer for a level-%u arrival", vlevel, pr);
        if (!m->sc && vlevel > pr) return fail("path (c) recycled a level-%u buffer for a level-%u arrival", vlevel, pr);
        if (rx->fq.state[repost] != RTS_BUF_RING) return fail("recycled buffer %u not back in the ring", repost);
        if (m->sc) seen_recycle_sc++;
        else seen_recycle_nosc++;
    }
    if (rflow != mvf || (mvf != RTS_FLOW_NONE && repost != mv) || (mvf == RTS_FLOW_NONE && repost != RTS_BUF_NONE)) {
        return fail("path (c): buffer %u of flow %u, model %u of %u", repost, rflow, mv, mvf);
    }
    /* Priority inheritance: the task runs at least at the highest queued level. */
    if ((int)rts_prio_inherit_current(&rx->pi) < m_highest(m)) return fail("task priority %u below queued level %d", rts_prio_inherit_current(&rx->pi), m_highest(m));
    return true;
}

static bool drv_step(model *m, int shield)
{
    rts_rx_driver *rx = drv(shield);
    const unsigned op = below(12);
    now += below(1000);
    rts_err e;
    switch (op) {
    case 0:
    case 1:
    case 2:
    case 3: {
        const unsigned buf = pick_buf(m, RTS_BUF_RING);
        if (op < 2) {
            const unsigned fl = RTS_FLOW_FIRST_USER + below(NUSER);
            if (!arrival(m, shield, buf, 1, fl, m->prio[fl])) return false;
        } else {
            const unsigned fl = below(6) == 0 ? RTS_FLOW_MAX + below(3) : below(NFLOWS);
            const unsigned pr = below(10) == 0 ? LEVELS + below(3) : below(4) * 3u;
            if (!arrival(m, shield, buf, 0, fl, pr)) return false;
        }
        break;
    }
    case 4:
    case 5: {
        /* Run-time priority change (setsockopt): raised or lowered. */
        const unsigned fl = below(NFLOWS), pr = below(4) * 3u;
        say("set flow %u priority %u", fl, pr);
        e = rts_flow_table_setopt(&rx->flows, fl, RTS_FLOWOPT_PRIORITY, pr, now);
        EXPECT_ERR(e, RTS_OK, "rts_flow_table_setopt(PRIORITY)");
        m->prio[fl] = pr;
        seen_prio_change++;
        break;
    }
    case 6: {
        const unsigned fl = below(NFLOWS), lim = 1u + below(m->nbufs);
        say("set flow %u queue limit %u", fl, lim);
        e = rts_flow_table_setopt(&rx->flows, fl, RTS_FLOWOPT_QUEUE_LIMIT, lim, now);
        EXPECT_ERR(e, RTS_OK, "rts_flow_table_setopt(QUEUE_LIMIT)");
        m->limit[fl] = lim;
        break;
    }
    case 7:
    case 8: {
        /* The network task takes a packet, completes it, frees its buffer and refills the ring. */
        rts_rx_job job;
        uint16_t mb = 0, refill = RTS_BUF_NONE, mrefill = RTS_BUF_NONE;
        uint8_t mf = 0, mp = 0;
        rts_shield_dec dec;
        say("%s task: next, done, free, refill", shield ? "shield" : "driver");
        e = shield ? rts_shield_task_next(&sh, &job, &dec) : rts_rx_driver_task_next(rx, &job, NULL);
        EXPECT_ERR(e, m_pop(m, &mb, &mf, &mp), "task next");
        if (e != RTS_OK) break;
        if (job.buf != mb || job.flow != mf || job.prio != mp) {
            return fail("task took buffer %u flow %u prio %u, model %u %u %u", job.buf, job.flow, job.prio, mb, mf, mp);
        }
        if (shield) {
            e = rts_shield_task_done(&sh, &job, now, 1000u, 0u, &refill, &dec);
            EXPECT_ERR(e, RTS_OK, "rts_shield_task_done");
            (void)m_release(m, job.buf);
            if (m_refill(m, &mrefill) != RTS_OK) mrefill = RTS_BUF_NONE;
            if (refill != mrefill) return fail("task_done refilled %u, model %u", refill, mrefill);
        } else if (below(2)) { /* the driver's halves one by one; sometimes the buffer stays with the stack */
            (void)rts_rx_driver_task_complete(rx, job.prio);
            EXPECT_ERR(rts_rx_driver_buf_free(rx, job.buf), m_release(m, job.buf), "rts_rx_driver_buf_free");
        }
        break;
    }
    case 9: {
        const unsigned buf = pick_buf(m, RTS_BUF_TASK);
        say("free(%u)", buf);
        EXPECT_ERR(rts_rx_driver_buf_free(rx, buf), m_release(m, buf), "rts_rx_driver_buf_free");
        break;
    }
    case 10: {
        uint16_t b = 0, mb = 0;
        say("refill()");
        e = rts_rx_driver_task_refill(rx, &b);
        EXPECT_ERR(e, m_refill(m, &mb), "rts_rx_driver_task_refill");
        if (e == RTS_OK && b != mb) return fail("refilled %u, model %u", b, mb);
        break;
    }
    default:
        if (!shield && below(2)) {
            m->sc ^= 1u;
            rx->short_circuit = (uint8_t)m->sc;
            say("short circuit %s", m->sc ? "on" : "off");
        } else {
            const unsigned t = below(m->ring_size + 1u);
            say("recycle threshold %u", t);
            EXPECT_ERR(rts_flow_queue_set_threshold(&rx->fq, t), RTS_OK, "rts_flow_queue_set_threshold");
            m->thr = t;
        }
        break;
    }
    if (!agree_counts(&rx->fq, m)) return false;
    for (unsigned o = 0; o < RTS_RX_OUTCOMES; o++) {
        if (rx->outcomes[o] != m->outcomes[o]) return fail("outcome %u counted %u, model %u", o, rx->outcomes[o], m->outcomes[o]);
    }
    if (rx->recycled != m->recycled) return fail("recycled counted %u, model %u", rx->recycled, m->recycled);
    if (rx->harvested != m->harvested) return fail("harvested counted %u, model %u", rx->harvested, m->harvested);
    if (shield) {
        uint64_t drops = 0;
        for (unsigned d = 0; d < RTS_SHIELD_DROP_REASONS; d++) drops += sh.drops[d];
        const uint64_t want = m->outcomes[RTS_RX_SHORT_CIRCUIT] + m->outcomes[RTS_RX_FLOW_LIMIT] + m->outcomes[RTS_RX_QUEUE_FULL];
        if (drops != want) return fail("shield counted %llu drops, model %llu", (unsigned long long)drops, (unsigned long long)want);
    }
    return true;
}

static bool setup_driver(model *m, int shield)
{
    const unsigned nbufs = 2u + below(MAXB - 1u);
    const unsigned ring = 1u + below(nbufs);
    const unsigned base = below(4);
    now = below(1000000);
    rts_rx_driver *rx = drv(shield);
    if (shield) {
        rts_shield_cfg cfg;
        rts_shield_dec dec;
        rts_shield_cfg_default(&cfg);
        cfg.protections = RTS_SHIELD_RX_PATH;
        cfg.nbufs = nbufs;
        cfg.ring_size = ring;
        cfg.task_base_prio = base;
        if (rts_shield_init(&sh, &cfg, now, &dec) != RTS_OK) return fail("rts_shield_init refused %u/%u", nbufs, ring);
        for (unsigned u = 0; u < NUSER; u++) {
            rts_shield_flow fl = {RTS_PROTO_UDP, 1000u + u, 0u, 0u, 0u, 0u, 0u};
            if (rts_shield_bind(&sh, &fl, now, &user_id[u]) != RTS_OK) return fail("rts_shield_bind refused");
        }
    } else {
        if (rts_rx_driver_init(rx, NULL, nbufs, ring, base, 0u, 0u, now) != RTS_OK) return fail("rts_rx_driver_init refused");
        for (unsigned u = 0; u < NUSER; u++) {
            if (rts_flow_table_bind(&rx->flows, RTS_PROTO_UDP, 1000u + u, 0u, &user_id[u]) != RTS_OK) return fail("bind refused");
        }
    }
    for (unsigned u = 0; u < NUSER; u++) {
        if (user_id[u] != RTS_FLOW_FIRST_USER + u) return fail("flow ids not in bind order");
    }
    m_init(m, nbufs, ring, rx->fq.ring_threshold);
    m->sc = rx->short_circuit;
    if (!shield && below(2)) {
        m->sc = 0u;
        rx->short_circuit = 0u;
    }
    for (unsigned f = 0; f < RTS_FLOW_MAX; f++) {
        m->prio[f] = rx->flows.flows[f].prio;
        m->limit[f] = rx->flows.flows[f].queue_limit;
    }
    /* A server on one user flow sometimes, so that path (b) happens too. */
    if (below(4) == 0) {
        const unsigned fl = RTS_FLOW_FIRST_USER + below(NUSER);
        if (rts_flow_table_setopt(&rx->flows, fl, RTS_FLOWOPT_CAPACITY, 1u + below(3), now) != RTS_OK ||
            rts_flow_table_setopt(&rx->flows, fl, RTS_FLOWOPT_PERIOD_NS, 5000u, now) != RTS_OK) {
            return fail("server setopt refused");
        }
    }
    say("%s: %u buffers, ring %u, threshold %u, short circuit %s", shield ? "shield" : "driver", nbufs, ring,
        m->thr, m->sc ? "on" : "off");
    return true;
}

/* ------------------------------------------------------------ sequences */
/* Run sequence `seed` for at most max_ops operations; full checks after
 * every operation when `full`. Returns the 1-based index of the failing
 * operation, 0 when it passes (-1 when set-up fails). */
static int run_sequence(uint64_t seed, unsigned max_ops, bool full)
{
    static model m;
    rng_state = seed;
    const unsigned layer = below(3);
    const unsigned n_ops = 1u + below(RTS_CONSERVATION_MAX_OPS);
    const rts_flow_queue *q;
    if (layer == 0) {
        const unsigned nbufs = 1u + below(MAXB);
        const unsigned ring = 1u + below(nbufs);
        const unsigned thr = below(ring + 1u);
        if (rts_flow_queue_init(&fq, nbufs, ring, thr) != RTS_OK) return fail("rts_flow_queue_init refused"), -1;
        m_init(&m, nbufs, ring, thr);
        say("flow queues: %u buffers, ring %u, threshold %u", nbufs, ring, thr);
        q = &fq;
    } else {
        if (!setup_driver(&m, layer == 2)) return -1;
        q = &drv(layer == 2)->fq;
    }
    for (unsigned i = 0; i < n_ops && i < max_ops; i++) {
        const bool ok = layer == 0 ? fq_step(&m) : drv_step(&m, layer == 2);
        if (!ok || ((full || i + 1u == n_ops || i + 1u == max_ops) && !agree_full(q, &m))) return (int)i + 1;
    }
    return 0;
}

static void report_failure(uint64_t seed, int at)
{
    fprintf(stderr, "buffer conservation FAILED: seed 0x%llx, operation %d: %s\n", (unsigned long long)seed, at, why);
    /* Shortest failing prefix, with every check after every operation. */
    unsigned shortest = (unsigned)at;
    for (unsigned k = 1; k <= (unsigned)at; k++) {
        if (run_sequence(seed, k, true) != 0) {
            shortest = k;
            break;
        }
    }
    fprintf(stderr, "shortest failing prefix: %u operation(s); rerun: RTS_CONSERVATION_SEED=0x%llx "
            "RTS_CONSERVATION_SEQUENCES=1\n", shortest, (unsigned long long)seed);
    fflush(stderr);
    verbose = true;
    const int again = run_sequence(seed, shortest, true);
    verbose = false;
    fprintf(stderr, "  -> fails at operation %d: %s\n", again, why);
}

static void test_conservation(void)
{
    unsigned long long n = RTS_CONSERVATION_SEQUENCES, seed0 = RTS_CONSERVATION_SEED;
    const char *s = getenv("RTS_CONSERVATION_SEQUENCES");
    if (s != NULL) n = strtoull(s, NULL, 0);
    s = getenv("RTS_CONSERVATION_SEED");
    if (s != NULL) seed0 = strtoull(s, NULL, 0);
    for (unsigned u = 0; u < NUSER; u++) frame_len[u] = rts_fr_udp(frames[u], 0x0A000002u, (uint16_t)(1000u + u), 8u);
    unsigned long long failures = 0;
    for (unsigned long long i = 0; i < n; i++) {
        const uint64_t seed = seed0 + i;
        const int at = run_sequence(seed, RTS_CONSERVATION_MAX_OPS, false);
        if (at != 0) {
            if (failures++ == 0) report_failure(seed, at);
        }
    }
    printf("    %llu sequences from seed 0x%llx, %llu failing\n", n, seed0, failures);
    printf("    arrivals queued %llu, short-circuited %llu, server-limited %llu, queue full %llu; path (c) "
           "recycled %llu (short circuit on) + %llu (off); rts_flow_queue_recycle_lowest_isr %llu; priority changes %llu\n",
           seen_outcome[RTS_RX_QUEUED], seen_outcome[RTS_RX_SHORT_CIRCUIT], seen_outcome[RTS_RX_FLOW_LIMIT],
           seen_outcome[RTS_RX_QUEUE_FULL], seen_recycle_sc, seen_recycle_nosc, seen_fq_recycle, seen_prio_change);
    CHECK_EQ(failures, 0);
    if (n >= 10000u) { /* a run long enough must have exercised every path */
        for (unsigned o = 0; o < RTS_RX_OUTCOMES; o++) {
            if (o != RTS_RX_GLOBAL_LIMIT) CHECK(seen_outcome[o] > 0u);
        }
        CHECK(seen_recycle_sc > 0u && seen_recycle_nosc > 0u && seen_fq_recycle > 0u && seen_prio_change > 0u);
    }
}

/* The path (c) rule in the case of issue 12 (defect 3), by hand: a flow
 * raised to the arrival's level after queueing at a lower one is not a
 * strictly lower-priority victim. */
static void test_raised_flow_not_recycled(void)
{
    CHECK_EQ(rts_rx_driver_init(&rxd, NULL, 8u, 4u, 0u, 0u, 0u, 0u), RTS_OK);
    CHECK_EQ(rts_flow_queue_set_threshold(&rxd.fq, 4u), RTS_OK);
    rts_rx_result r;
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rxd, 0u, 4u, 1u, 0u, &r), RTS_OK); /* flow 4 at level 1 */
    CHECK_EQ(r.outcome, RTS_RX_QUEUED);
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rxd, 1u, 4u, 5u, 0u, &r), RTS_OK); /* raised to 5: moves up */
    CHECK_EQ(r.outcome, RTS_RX_QUEUED);
    CHECK_EQ(r.recycled_flow, RTS_FLOW_NONE);
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rxd, 2u, 5u, 5u, 0u, &r), RTS_OK); /* same level: nothing lower */
    CHECK_EQ(r.outcome, RTS_RX_SHORT_CIRCUIT);
    CHECK_EQ(rts_rx_driver_eager_desc_isr(&rxd, 2u, 5u, 6u, 0u, &r), RTS_OK); /* higher: flow 4 goes */
    CHECK_EQ(r.outcome, RTS_RX_QUEUED);
    CHECK_EQ(r.recycled_flow, 4u);
    CHECK_EQ(r.repost, 0u);
    CHECK_EQ(rts_flow_queue_check(&rxd.fq), RTS_OK);
}

int main(void)
{
    RTS_RUN(test_raised_flow_not_recycled);
    RTS_RUN(test_conservation);
    return rts_test_end();
}
