// Host stand-ins for the CUDA qualifiers, launch geometry and intrinsics that
// reduce.cu uses, so it compiles as plain C++ for a one-thread grid (the
// grid-stride loops then cover all n elements in one call). Compile with
// -ffp-contract=off so a * b + c is not fused where the GPU does not fuse.
// Users: kernels/tests/cuda_on_host.rs and the CUDA test double
// (tests/cuda-double/build.rs).
#ifndef OXMPI_HOST_SHIM_H
#define OXMPI_HOST_SHIM_H

#include <cstring>

#define __global__
#define __device__
#define __forceinline__ inline

struct ox_dim3 { unsigned x; };
static const ox_dim3 blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};

static inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline long long __double_as_longlong(double d) { long long u; std::memcpy(&u, &d, 8); return u; }
static inline double __longlong_as_double(long long u) { double d; std::memcpy(&d, &u, 8); return d; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }

#endif
