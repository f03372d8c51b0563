/* Instantiates the template ZK_GROUP_TMPL (a quoted file name) once for each of the four groups,
 * with G = the group prefix and F = its coordinate field:
 *     #define ZK_GROUP_TMPL "msm_tmpl.h"
 *     #include "each_group.h"
 * No include guard: it is meant to be included once per template. */
#define G bn_g1
#define F bn_fq
#include ZK_GROUP_TMPL
#undef G
#undef F
#define G bn_g2
#define F bn_fq2
#include ZK_GROUP_TMPL
#undef G
#undef F
#define G bls_g1
#define F bls_fq
#include ZK_GROUP_TMPL
#undef G
#undef F
#define G bls_g2
#define F bls_fq2
#include ZK_GROUP_TMPL
#undef G
#undef F
#undef ZK_GROUP_TMPL
