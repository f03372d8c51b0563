/* MSM of bls_g1 (see group.cuh). */
#include "gpud/cuda/group.cuh"

ZC_GROUP_UNIT(bls_g1, zc_bls_g1, bls_g1)
