pragma circom 2.0.0;
// Test circuit for witness_timeout (tests/witgen, issue 25 point 4): a legal circuit whose
// generator loops for ever on the input x = -1 (i counts up through the field and never equals
// p - 1 in time); any small x gives a valid witness.
function spin(x) {
    var i = 0;
    while (i != x) {
        i = i + 1;
    }
    return i;
}
template Spin() {
    signal input x;
    signal output y;
    signal t;
    t <-- spin(x);
    t === x;
    y <== t * x;
}
component main = Spin();
