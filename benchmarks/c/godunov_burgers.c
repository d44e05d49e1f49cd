/* First-order Godunov for Burgers' equation, forward Euler, periodic: the C reference of the benchmarks.
 *
 *   q_t + (a q^2/2)_x [+ (a q^2/2)_y] = 0,
 *   F(l, r) = a max(max(l, 0)^2, min(r, 0)^2) / 2          (exact Godunov flux of a convex flux with f'(0) = 0),
 *   out_i = q_i - dt/dx (F_{i+1/2} - F_{i-1/2}),
 *
 * with the same step rule as shockflow's solve_conservation (dt = cfl / rate, the rate max|q| a/dx of the
 * newest state, the last step shortened to land on t_end; the arithmetic of the step size is copied so
 * that, for finite data, the two produce bitwise-identical results).
 *
 * Three variants of the step:
 *   plain   -- one fused pass: the lower face flux carried in a register, max|out| taken in the same loop
 *              (the loop-carried flux and the reduction keep the compiler from vectorising);
 *   fused   -- one pass in which each cell computes both of its faces (2-D: all four; a shared face is computed
 *              twice), its new value and the bit-pattern maximum of |out|: nothing is carried from one cell to
 *              the next, so the loop vectorises and no buffer is needed.  The scheme of shockflow's first-order
 *              fast path since issue 23;
 *   blocked -- per block of BLOCK cells (2-D: per row), the face fluxes into a small buffer that stays in
 *              L1, then the update, then max|out| in a separate pass: an integer maximum of the bit patterns
 *              of |out| (for non-negative doubles their order is the values' order; inf and NaN have the
 *              largest), which vectorises without -ffinite-math-only and is also the NaN test.  The scheme
 *              of solvers/conservation/burgers_fast_path.py before issue 23.
 * All three give bitwise-identical results (the same operations per cell; a maximum does not round).
 *
 * Fields are padded with g ghost cells per side and axis, C order, as in solvers.grid.Grid.
 * Compiled at benchmark time by benchmarks/c_reference.py (cc -O3 -march=native -shared -fPIC).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define BLOCK 1024

static inline double godunov2(double l, double r) {
    double lp = l > 0.0 ? l : 0.0;
    double rm = r < 0.0 ? r : 0.0;
    lp *= lp;
    rm *= rm;
    return lp > rm ? lp : rm;
}

#define ABS_BITS 0x7FFFFFFFFFFFFFFFull
#define INF_BITS 0x7FF0000000000000ull

static inline uint64_t abs_bits(double v) {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b & ABS_BITS;
}

/* max(m, the value of the bit pattern bm), or NaN when bm is inf or NaN. */
static inline double merge_peak(double m, uint64_t bm) {
    double v;
    if (bm >= INF_BITS) return NAN;
    memcpy(&v, &bm, sizeof v);
    return v > m ? v : m;
}

static void fill_periodic_1d(double *q, long n, long g) {
    for (long k = 0; k < g; ++k) {
        q[k] = q[n + k];
        q[g + n + k] = q[g + k];
    }
}

static void fill_periodic_2d(double *q, long nx, long ny, long g) {
    long sy = ny + 2 * g;
    for (long k = 0; k < g; ++k) { /* axis 0, whole rows (padded extent of axis 1) */
        memcpy(q + k * sy, q + (nx + k) * sy, sizeof(double) * sy);
        memcpy(q + (g + nx + k) * sy, q + (g + k) * sy, sizeof(double) * sy);
    }
    for (long i = 0; i < nx + 2 * g; ++i) {
        double *row = q + i * sy;
        for (long k = 0; k < g; ++k) {
            row[k] = row[ny + k];
            row[g + ny + k] = row[g + k];
        }
    }
}

/* One step; returns max|out| over the interior (NaN as soon as a value is not finite). */
double step_plain_1d(const double *q, double *out, long n, long g, double c) {
    const double *qb = q + g;
    double *ob = out + g;
    double f_lo = godunov2(q[g - 1], qb[0]);
    double m = 0.0, qi = qb[0];
    for (long i = 0; i < n; ++i) {
        double qn = qb[i + 1];
        double f = godunov2(qi, qn);
        double v = qi - c * (f - f_lo);
        ob[i] = v;
        double av = fabs(v);
        if (!(av <= m)) {
            m = av;
            if (av != av) return av;
        }
        f_lo = f;
        qi = qn;
    }
    return m;
}

double step_blocked_1d(const double *q, double *out, long n, long g, double c) {
    double flux[BLOCK + 1];
    const double *qb = q + g;
    double *ob = out + g;
    double m = 0.0;
    for (long s = 0; s < n; s += BLOCK) {
        long len = n - s < BLOCK ? n - s : BLOCK;
        const double *qs = qb + s;
        for (long i = 0; i <= len; ++i) flux[i] = godunov2(qs[i - 1], qs[i]);
        double *os = ob + s;
        for (long i = 0; i < len; ++i) os[i] = qs[i] - c * (flux[i + 1] - flux[i]);
        uint64_t bm = 0;
        for (long i = 0; i < len; ++i) { /* one vectorisable pass: maximum and non-finite test (no early exit) */
            uint64_t b = abs_bits(os[i]);
            bm = b > bm ? b : bm;
        }
        m = merge_peak(m, bm);
        if (m != m) return m;
    }
    return m;
}

double step_plain_2d(const double *q, double *out, long nx, long ny, long g, double cx, double cy, double *row_flux) {
    long sy = ny + 2 * g;
    double m = 0.0;
    for (long j = 0; j < ny; ++j) row_flux[j] = godunov2(q[(g - 1) * sy + g + j], q[g * sy + g + j]);
    for (long i = 0; i < nx; ++i) {
        const double *qr = q + (g + i) * sy + g;
        const double *qn = qr + sy;
        double *orow = out + (g + i) * sy + g;
        double k_lo = godunov2(qr[-1], qr[0]);
        double qij = qr[0];
        for (long j = 0; j < ny; ++j) {
            double qe = qr[j + 1];
            double h = godunov2(qij, qn[j]);
            double k = godunov2(qij, qe);
            double v = qij - cx * (h - row_flux[j]) - cy * (k - k_lo);
            orow[j] = v;
            row_flux[j] = h;
            k_lo = k;
            qij = qe;
            double av = fabs(v);
            if (!(av <= m)) {
                m = av;
                if (av != av) return av;
            }
        }
    }
    return m;
}

/* Row by row: the y-face fluxes into a row buffer, then the update with the upper x-face fluxes computed in
 * the same loop and stored into row_flux (the next row's lower faces), then the maximum as a separate
 * vectorisable pass (the scheme of shockflow's fast path). */
double step_blocked_2d(const double *q, double *out, long nx, long ny, long g, double cx, double cy,
                       double *row_flux, double *yflux, double *xflux) {
    (void)xflux; /* unused since the x-faces are computed in the update loop */
    long sy = ny + 2 * g;
    double m = 0.0;
    for (long j = 0; j < ny; ++j) row_flux[j] = godunov2(q[(g - 1) * sy + g + j], q[g * sy + g + j]);
    for (long i = 0; i < nx; ++i) {
        const double *qr = q + (g + i) * sy + g;
        const double *qn = qr + sy;
        double *orow = out + (g + i) * sy + g;
        for (long j = 0; j <= ny; ++j) yflux[j] = godunov2(qr[j - 1], qr[j]);
        for (long j = 0; j < ny; ++j) { /* the upper x-face in the update loop; it is the next row's lower one */
            double up = godunov2(qr[j], qn[j]);
            orow[j] = qr[j] - cx * (up - row_flux[j]) - cy * (yflux[j + 1] - yflux[j]);
            row_flux[j] = up;
        }
        uint64_t bm = 0;
        for (long j = 0; j < ny; ++j) {
            uint64_t b = abs_bits(orow[j]);
            bm = b > bm ? b : bm;
        }
        m = merge_peak(m, bm);
        if (m != m) return m;
    }
    return m;
}

double step_fused_1d(const double *restrict q, double *restrict out, long n, long g, double c) {
    const double *qb = q + g;
    double *ob = out + g;
    uint64_t bm = 0;
    for (long i = 0; i < n; ++i) {
        double v = qb[i] - c * (godunov2(qb[i], qb[i + 1]) - godunov2(qb[i - 1], qb[i]));
        ob[i] = v;
        uint64_t b = abs_bits(v);
        bm = b > bm ? b : bm;
    }
    return merge_peak(0.0, bm);
}

double step_fused_2d(const double *restrict q, double *restrict out, long nx, long ny, long g, double cx, double cy) {
    long sy = ny + 2 * g;
    uint64_t bm = 0;
    for (long i = 0; i < nx; ++i) {
        const double *qr = q + (g + i) * sy + g;
        const double *qp = qr - sy;
        const double *qn = qr + sy;
        double *orow = out + (g + i) * sy + g;
        for (long j = 0; j < ny; ++j) {
            double h = qr[j];
            double v = h - cx * (godunov2(h, qn[j]) - godunov2(qp[j], h))
                         - cy * (godunov2(h, qr[j + 1]) - godunov2(qr[j - 1], h));
            orow[j] = v;
            uint64_t b = abs_bits(v);
            bm = b > bm ? b : bm;
        }
    }
    return merge_peak(0.0, bm);
}

/* shockflow's step size: dt = cfl * combine_bounds(1/rate) with combine_bounds the harmonic sum. */
static double next_dt(double rate, double cfl) {
    double bound = 1.0 / rate;
    double r = 1.0 / bound;
    return cfl * (1.0 / r);
}

/* Solve from t0 to t_end in place (q padded, work the same size); returns the number of steps, or -step at
 * the first non-finite value.  rate0 is the initial rate (computed by the caller as shockflow does). */
long solve_1d(double *q, double *work, long n, long g, double dx, double a, double cfl, double t0, double t_end,
              double rate0, int variant) {
    double *cur = q, *nxt = work;
    double t = t0, rate = rate0;
    long steps = 0;
    for (;;) {
        double dt = next_dt(rate, cfl);
        double remaining = t_end - t;
        int lands = dt >= remaining - 1e-12 * fmax(1.0, fabs(t_end));
        if (lands) dt = remaining;
        fill_periodic_1d(cur, n, g);
        double c = 0.5 * a * dt / dx;
        double m = variant == 2 ? step_fused_1d(cur, nxt, n, g, c)
                 : variant == 1 ? step_blocked_1d(cur, nxt, n, g, c) : step_plain_1d(cur, nxt, n, g, c);
        ++steps;
        if (m != m) return -steps;
        rate = a * m / dx;
        double *tmp = cur; cur = nxt; nxt = tmp;
        if (lands) break;
        t += dt;
    }
    if (cur != q) memcpy(q, cur, sizeof(double) * (n + 2 * g));
    return steps;
}

long solve_2d(double *q, double *work, long nx, long ny, long g, double dx, double dy, double a0, double a1,
              double cfl, double t0, double t_end, double rate0, int variant, double *rows) {
    /* rows: 3 * (ny + 1) doubles of scratch */
    double *cur = q, *nxt = work;
    double t = t0, rate = rate0;
    long steps = 0;
    for (;;) {
        double dt = next_dt(rate, cfl);
        double remaining = t_end - t;
        int lands = dt >= remaining - 1e-12 * fmax(1.0, fabs(t_end));
        if (lands) dt = remaining;
        fill_periodic_2d(cur, nx, ny, g);
        double cx = 0.5 * a0 * dt / dx, cy = 0.5 * a1 * dt / dy;
        double m = variant == 2 ? step_fused_2d(cur, nxt, nx, ny, g, cx, cy)
                 : variant == 1 ? step_blocked_2d(cur, nxt, nx, ny, g, cx, cy, rows, rows + (ny + 1), rows + 2 * (ny + 1))
                                : step_plain_2d(cur, nxt, nx, ny, g, cx, cy, rows);
        ++steps;
        if (m != m) return -steps;
        rate = m * (a0 / dx + a1 / dy);
        double *tmp = cur; cur = nxt; nxt = tmp;
        if (lands) break;
        t += dt;
    }
    if (cur != q) memcpy(q, cur, sizeof(double) * (nx + 2 * g) * (ny + 2 * g));
    return steps;
}
