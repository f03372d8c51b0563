/* MSM of bn_g2 (see group.cuh). */
#include "gpud/cuda/group.cuh"

ZC_GROUP_UNIT(bn_g2, zc_bn_g2, bn_g2)
