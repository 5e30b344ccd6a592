/*
 * Built-in reductions on C's long double types, which Rust cannot compute
 * (x86-64: the 80-bit extended format in 16 bytes): MPI_LONG_DOUBLE
 * (MAX, MIN, SUM, PROD), MPI_C_LONG_DOUBLE_COMPLEX (SUM, PROD) and
 * MPI_LONG_DOUBLE_INT (MINLOC, MAXLOC), computed with C's own operators so
 * the bits are those a C program gets. Elements are loaded and stored with
 * memcpy: packed buffers need not be aligned.
 *
 * inout[i] = in[i] op inout[i] for n elements `stride` bytes apart.
 * Returns 0, or -1 for a combination that is not defined (the caller
 * checks first).
 */
#include <complex.h>
#include <stddef.h>
#include <string.h>

/* Operations, in the order of MPICH's MPI_MAX .. MPI_MAXLOC handles. */
enum { OP_MAX = 0, OP_MIN = 1, OP_SUM = 2, OP_PROD = 3, OP_MINLOC = 10, OP_MAXLOC = 11 };
/* Element kinds. */
enum { KIND_REAL = 0, KIND_COMPLEX = 1, KIND_PAIR = 2 };

static int real(int op, size_t stride, const unsigned char *in, unsigned char *inout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        long double a, b;
        memcpy(&a, in + i * stride, sizeof a);
        memcpy(&b, inout + i * stride, sizeof b);
        switch (op) {
        case OP_MAX: b = a > b ? a : b; break;
        case OP_MIN: b = a < b ? a : b; break;
        case OP_SUM: b = a + b; break;
        case OP_PROD: b = a * b; break;
        default: return -1;
        }
        memcpy(inout + i * stride, &b, sizeof b);
    }
    return 0;
}

static int cplx(int op, size_t stride, const unsigned char *in, unsigned char *inout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        long double _Complex a, b;
        memcpy(&a, in + i * stride, sizeof a);
        memcpy(&b, inout + i * stride, sizeof b);
        switch (op) {
        case OP_SUM: b = a + b; break;
        case OP_PROD: b = a * b; break;
        default: return -1;
        }
        memcpy(inout + i * stride, &b, sizeof b);
    }
    return 0;
}

/* {long double value; int index} with the index `sizeof(long double)`
   bytes in; ties take the lower index. */
static int pair(int op, size_t stride, const unsigned char *in, unsigned char *inout, size_t n)
{
    if (op != OP_MINLOC && op != OP_MAXLOC)
        return -1;
    for (size_t i = 0; i < n; i++) {
        long double a, b;
        int ia, ib;
        memcpy(&a, in + i * stride, sizeof a);
        memcpy(&ia, in + i * stride + sizeof a, sizeof ia);
        memcpy(&b, inout + i * stride, sizeof b);
        memcpy(&ib, inout + i * stride + sizeof b, sizeof ib);
        int take = op == OP_MINLOC ? a < b : a > b;
        if (take || (a == b && ia < ib)) {
            memcpy(inout + i * stride, &a, sizeof a);
            memcpy(inout + i * stride + sizeof a, &ia, sizeof ia);
        }
    }
    return 0;
}

int oxabi_long_double_reduce(int op, int kind, size_t stride, const void *in, void *inout,
                             size_t n)
{
    switch (kind) {
    case KIND_REAL: return real(op, stride, in, inout, n);
    case KIND_COMPLEX: return cplx(op, stride, in, inout, n);
    case KIND_PAIR: return pair(op, stride, in, inout, n);
    default: return -1;
    }
}

/* sizeof(long double), for the Rust side to check its layout assumption. */
size_t oxabi_long_double_size(void)
{
    return sizeof(long double);
}
