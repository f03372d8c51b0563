/* NTT, coset step and H of bn_fr (see fr.cuh, ntt.cuh). */
#include "gpud/cuda/fr.cuh"

ZC_FR_UNIT(bn_fr, zc_bn_fr)
