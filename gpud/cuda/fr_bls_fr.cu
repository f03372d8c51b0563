/* NTT, coset step and H of bls_fr (see fr.cuh, ntt.cuh). */
#include "gpud/cuda/fr.cuh"

ZC_FR_UNIT(bls_fr, zc_bls_fr)
