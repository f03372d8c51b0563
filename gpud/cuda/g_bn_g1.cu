/* MSM of bn_g1 (see group.cuh). */
#include "gpud/cuda/group.cuh"

ZC_GROUP_UNIT(bn_g1, zc_bn_g1, bn_g1)
