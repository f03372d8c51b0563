/* MSM of bls_g2 (see group.cuh). */
#include "gpud/cuda/group.cuh"

ZC_GROUP_UNIT(bls_g2, zc_bls_g2, bls_g2)
