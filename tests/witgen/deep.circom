pragma circom 2.0.0;
// Test circuit for zkpipe witness (tests/witgen): a recursion as deep as the input asks, so that a
// large n exhausts the call stack.
function rec(n) {
    if (n == 0) {
        return 0;
    }
    return rec(n - 1) + 1;
}
template Deep() {
    signal input n;
    signal output out;
    signal r;
    r <-- rec(n);
    out <== r * n;
}
component main = Deep();
