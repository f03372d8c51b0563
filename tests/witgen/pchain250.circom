pragma circom 2.0.0;
include "circomlib/poseidon.circom";
// A chain of 250 circomlib Poseidon(2) hashes (~2^17 constraints, a 2.3 MB wasm): the largest
// circuit the suite compiles (tests/witgen/cold_large.sh, tests/pipeline/large_inputs.sh).
// h_0 = P(in0, in1), h_i = P(h_{i-1}, in1); the chain of bench/make-circuits.sh's pchain circuits.
template PoseidonChain(n) {
    signal input in[2];
    signal output out;
    component h[n];
    for (var i = 0; i < n; i++) {
        h[i] = Poseidon(2);
        h[i].inputs[0] <== (i == 0) ? in[0] : h[i-1].out;
        h[i].inputs[1] <== in[1];
    }
    out <== h[n-1].out;
}
component main {public [in]} = PoseidonChain(250);
