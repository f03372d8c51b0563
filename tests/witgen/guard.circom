pragma circom 2.0.0;
// Test circuit for zkpipe witness (tests/witgen): an assert with the circuit's own message, a
// two-dimensional input (row-major flattening), a log() line and a public input.
template Guard() {
    signal input x;
    signal input m[2][3];
    signal output y;
    assert(x < 1000);
    log("guard x =", x);
    var s = 0;
    for (var i = 0; i < 2; i++) {
        for (var j = 0; j < 3; j++) {
            s += m[i][j] * (i * 3 + j + 1);
        }
    }
    signal t <== x * x;
    y <== t * m[1][2] + s;
}
component main {public [x]} = Guard();
