/* Instantiates the template ZK_CURVE_TMPL (a quoted file name) once per curve, with PFX = bn or
 * bls and TWO_ADICITY = the 2-adicity of its scalar field r − 1:
 *     #define ZK_CURVE_TMPL "groth16_tmpl.h"
 *     #include "each_curve.h"
 * No include guard: it is meant to be included once per template. */
#define PFX bn
#define TWO_ADICITY 28
#include ZK_CURVE_TMPL
#undef PFX
#undef TWO_ADICITY
#define PFX bls
#define TWO_ADICITY 32
#include ZK_CURVE_TMPL
#undef PFX
#undef TWO_ADICITY
#undef ZK_CURVE_TMPL
