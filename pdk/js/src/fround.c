/*
 * Directed rounding for printf on WebAssembly.
 *
 * QuickJS formats numbers (toFixed, toPrecision, toExponential, and the
 * shortest round-trip form of every non-integer number) with printf and
 * decides the ties that JavaScript rounds away from zero by printing again
 * with fesetround(FE_DOWNWARD) and fesetround(FE_UPWARD). WebAssembly only
 * rounds to nearest, so fesetround cannot work there. The patched QuickJS
 * (quickjs-wasi.patch) calls js_wasi_print_rounded instead, which prints the
 * exact decimal expansion of d (musl's printf is exact at any precision)
 * and rounds it in the requested direction itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mirrors the values the patch gives FE_DOWNWARD and FE_UPWARD. */
#define JS_WASI_FE_DOWNWARD 0x400
#define JS_WASI_FE_UPWARD 0x800

/* Enough for any double: 309 integer digits, 1100 fractional digits (an
   exact expansion has at most 1074), or 800 significant digits in the
   exponential form (at most 767 are needed). */
static char exact[1536];
static char digits[1536];

/* js_wasi_print_rounded writes to buf what
   snprintf(buf, size, fixed ? "%.*f" : "%+.*e", prec, d) writes when the
   floating-point rounding mode is mode (JS_WASI_FE_DOWNWARD or
   JS_WASI_FE_UPWARD), and returns its length. */
int js_wasi_print_rounded(char *buf, int size, int fixed, int prec, double d, int mode)
{
    const char *p;
    char sign = 0;
    int n = 0, int_len = 0, exp10 = 0, keep, i, inexact = 0, away, len;

    if (!isfinite(d) || prec < 0 || prec > 200)
        return snprintf(buf, size, fixed ? "%.*f" : "%+.*e", prec, d);
    snprintf(exact, sizeof(exact), fixed ? "%.*f" : "%+.*e", fixed ? 1100 : 800, d);
    p = exact;
    if (*p == '+' || *p == '-')
        sign = *p++;
    for (; *p && *p != 'e'; p++) {
        if (*p == '.')
            int_len = n;
        else
            digits[n++] = *p;
    }
    if (*p == 'e')
        exp10 = atoi(p + 1);
    if (!fixed)
        int_len = 1;
    keep = int_len + prec;
    for (i = keep; i < n; i++)
        inexact |= digits[i] != '0';
    away = inexact && ((mode == JS_WASI_FE_UPWARD && sign != '-') ||
                       (mode == JS_WASI_FE_DOWNWARD && sign == '-'));
    if (away) {
        for (i = keep - 1; i >= 0 && digits[i] == '9'; i--)
            digits[i] = '0';
        if (i >= 0) {
            digits[i]++;
        } else {
            /* 99.9 -> 100.0: one more digit in front */
            memmove(digits + 1, digits, keep);
            digits[0] = '1';
            if (fixed) {
                int_len++;
                keep++;
            } else {
                exp10++; /* 9.99e+05 -> 1.00e+06: keep as many digits */
            }
        }
    }
    len = 0;
#define PUT(c) do { if (len + 1 < size) buf[len] = (c); len++; } while (0)
    if (sign)
        PUT(sign);
    for (i = 0; i < int_len; i++)
        PUT(digits[i]);
    if (prec > 0) {
        PUT('.');
        for (; i < keep; i++)
            PUT(digits[i]);
    }
    if (!fixed) {
        char e[16];
        int k;
        snprintf(e, sizeof(e), "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
        for (k = 0; e[k]; k++)
            PUT(e[k]);
    }
#undef PUT
    if (size > 0)
        buf[len < size ? len : size - 1] = '\0';
    return len;
}
