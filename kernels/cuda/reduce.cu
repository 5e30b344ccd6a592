// OxMPI device reduction kernels. Compiled at run time by NVRTC from the
// Rust side (kernels/src/gpu.rs lists the names); needs no headers.
//
// Semantics match the CPU kernels bit for bit, except NaN payloads
// (compile without -ftz and without fast math): integers wrap, float MIN/MAX
// propagate NaN and order -0 < +0, f16/bf16 widen to f32, compute, and round
// to nearest even once. kernels/tests/cuda_on_host.rs checks this by
// compiling this file as host C++ behind host_shim.h.

typedef unsigned short ox_u16;
typedef unsigned int ox_u32;
typedef unsigned long long ox_u64;
typedef long long ox_i64;

struct ox_f16 { ox_u16 bits; };
struct ox_bf16 { ox_u16 bits; };

// ---- f16 / bf16 <-> f32 (same algorithms as kernels/src/half.rs) ----------

__device__ __forceinline__ float ox_f16_to_f32(ox_u16 h) {
    ox_u32 x = h;
    ox_u32 sign = (x & 0x8000u) << 16;
    ox_u32 mag = x & 0x7fffu;
    ox_u32 exp = mag & 0x7c00u;
    ox_u32 normal = (mag << 13) + (112u << 23);
    ox_u32 inf_nan = (mag << 13) | 0x7f800000u;
    ox_u32 sub = __float_as_uint(__fmul_rn((float)mag, 1.0f / 16777216.0f));
    ox_u32 bits = exp == 0x7c00u ? inf_nan : (exp == 0 ? sub : normal);
    return __uint_as_float(bits | sign);
}

__device__ __forceinline__ ox_u16 ox_f32_to_f16(float f) {
    ox_u32 x = __float_as_uint(f);
    ox_u32 sign = (x >> 16) & 0x8000u;
    ox_u32 a = x & 0x7fffffffu;
    ox_u32 nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    ox_u32 odd = (a >> 13) & 1u;
    ox_u32 normal = (a - (112u << 23) + 0xfffu + odd) >> 13;
    ox_u32 sub = __float_as_uint(__fadd_rn(__uint_as_float(a), 0.5f)) - (126u << 23);
    ox_u32 r = a > 0x7f800000u ? nan
             : a >= (143u << 23) ? 0x7c00u
             : a < (113u << 23) ? sub
             : normal;
    return (ox_u16)(r | sign);
}

__device__ __forceinline__ float ox_bf16_to_f32(ox_u16 h) {
    return __uint_as_float((ox_u32)h << 16);
}

__device__ __forceinline__ ox_u16 ox_f32_to_bf16(float f) {
    ox_u32 x = __float_as_uint(f);
    if (f != f) return (ox_u16)((x >> 16) | 0x40u);
    return (ox_u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// ---- scalar operations: (input, inout) -> result --------------------------

#define OX_INT_OPS(T, U)                                                         \
    __device__ __forceinline__ T ox_sum(T a, T b) { return (T)((U)a + (U)b); }  \
    __device__ __forceinline__ T ox_prod(T a, T b) { return (T)((U)a * (U)b); } \
    __device__ __forceinline__ T ox_min(T a, T b) { return b < a ? b : a; }     \
    __device__ __forceinline__ T ox_max(T a, T b) { return b > a ? b : a; }

OX_INT_OPS(int, ox_u32)
OX_INT_OPS(ox_i64, ox_u64)

// MIN: (a < b ? a : b) | (b < a ? b : a) bitwise: the minimum when ordered;
// -0 on a -0/+0 tie; a NaN when either is NaN (all-ones exponent, nonzero
// mantissa survive the OR). MAX is -min(-a, -b) on the MAX selects.
// Same formulas as kernels/src/ops/minmax.rs.
#define OX_FLOAT_OPS(T, BITS, TO_BITS, FROM_BITS, ADD, MUL)                       \
    __device__ __forceinline__ T ox_sum(T a, T b) { return ADD(a, b); }           \
    __device__ __forceinline__ T ox_prod(T a, T b) { return MUL(a, b); }          \
    __device__ __forceinline__ T ox_min(T a, T b) {                               \
        T r = a < b ? a : b;                                                      \
        T s = b < a ? b : a;                                                      \
        return FROM_BITS((BITS)(TO_BITS(r) | TO_BITS(s)));                        \
    }                                                                             \
    __device__ __forceinline__ T ox_max(T a, T b) {                               \
        T r = a > b ? a : b;                                                      \
        T s = b > a ? b : a;                                                      \
        BITS sign = (BITS)TO_BITS((T)-0.0);                                       \
        return FROM_BITS((BITS)((((BITS)TO_BITS(r) ^ sign) | ((BITS)TO_BITS(s) ^ sign)) ^ sign)); \
    }

OX_FLOAT_OPS(float, ox_u32, __float_as_uint, __uint_as_float, __fadd_rn, __fmul_rn)
OX_FLOAT_OPS(double, ox_i64, __double_as_longlong, __longlong_as_double, __dadd_rn, __dmul_rn)

#define OX_HALF_OPS(T, WIDEN, NARROW)                                                              \
    __device__ __forceinline__ T ox_sum(T a, T b) { T r; r.bits = NARROW(ox_sum(WIDEN(a.bits), WIDEN(b.bits))); return r; }   \
    __device__ __forceinline__ T ox_prod(T a, T b) { T r; r.bits = NARROW(ox_prod(WIDEN(a.bits), WIDEN(b.bits))); return r; } \
    __device__ __forceinline__ T ox_min(T a, T b) { T r; r.bits = NARROW(ox_min(WIDEN(a.bits), WIDEN(b.bits))); return r; }   \
    __device__ __forceinline__ T ox_max(T a, T b) { T r; r.bits = NARROW(ox_max(WIDEN(a.bits), WIDEN(b.bits))); return r; }

OX_HALF_OPS(ox_f16, ox_f16_to_f32, ox_f32_to_f16)
OX_HALF_OPS(ox_bf16, ox_bf16_to_f32, ox_f32_to_bf16)

// ---- kernels: grid-stride loops, n in elements ----------------------------

#define OX_KERNELS(IN_PLACE, OUT, T, FN)                                                   \
    extern "C" __global__ void IN_PLACE(T* inout, const T* in, ox_u64 n) {                 \
        ox_u64 stride = (ox_u64)blockDim.x * gridDim.x;                                   \
        for (ox_u64 i = (ox_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) \
            inout[i] = FN(in[i], inout[i]);                                                \
    }                                                                                      \
    extern "C" __global__ void OUT(T* out, const T* a, const T* b, ox_u64 n) {             \
        ox_u64 stride = (ox_u64)blockDim.x * gridDim.x;                                   \
        for (ox_u64 i = (ox_u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) \
            out[i] = FN(a[i], b[i]);                                                       \
    }

OX_KERNELS(oxmpi_sum_f32, oxmpi_sum3_f32, float, ox_sum)
OX_KERNELS(oxmpi_sum_f64, oxmpi_sum3_f64, double, ox_sum)
OX_KERNELS(oxmpi_sum_i32, oxmpi_sum3_i32, int, ox_sum)
OX_KERNELS(oxmpi_sum_i64, oxmpi_sum3_i64, ox_i64, ox_sum)
OX_KERNELS(oxmpi_sum_f16, oxmpi_sum3_f16, ox_f16, ox_sum)
OX_KERNELS(oxmpi_sum_bf16, oxmpi_sum3_bf16, ox_bf16, ox_sum)
OX_KERNELS(oxmpi_prod_f32, oxmpi_prod3_f32, float, ox_prod)
OX_KERNELS(oxmpi_prod_f64, oxmpi_prod3_f64, double, ox_prod)
OX_KERNELS(oxmpi_prod_i32, oxmpi_prod3_i32, int, ox_prod)
OX_KERNELS(oxmpi_prod_i64, oxmpi_prod3_i64, ox_i64, ox_prod)
OX_KERNELS(oxmpi_prod_f16, oxmpi_prod3_f16, ox_f16, ox_prod)
OX_KERNELS(oxmpi_prod_bf16, oxmpi_prod3_bf16, ox_bf16, ox_prod)
OX_KERNELS(oxmpi_min_f32, oxmpi_min3_f32, float, ox_min)
OX_KERNELS(oxmpi_min_f64, oxmpi_min3_f64, double, ox_min)
OX_KERNELS(oxmpi_min_i32, oxmpi_min3_i32, int, ox_min)
OX_KERNELS(oxmpi_min_i64, oxmpi_min3_i64, ox_i64, ox_min)
OX_KERNELS(oxmpi_min_f16, oxmpi_min3_f16, ox_f16, ox_min)
OX_KERNELS(oxmpi_min_bf16, oxmpi_min3_bf16, ox_bf16, ox_min)
OX_KERNELS(oxmpi_max_f32, oxmpi_max3_f32, float, ox_max)
OX_KERNELS(oxmpi_max_f64, oxmpi_max3_f64, double, ox_max)
OX_KERNELS(oxmpi_max_i32, oxmpi_max3_i32, int, ox_max)
OX_KERNELS(oxmpi_max_i64, oxmpi_max3_i64, ox_i64, ox_max)
OX_KERNELS(oxmpi_max_f16, oxmpi_max3_f16, ox_f16, ox_max)
OX_KERNELS(oxmpi_max_bf16, oxmpi_max3_bf16, ox_bf16, ox_max)
