pragma circom 2.0.0;
include "circomlib/sha256/sha256.circom";
// SHA-256 of a private 256-bit message (one 512-bit block after padding); the digest bits are the
// public outputs. Default circom O1 simplification.
component main = Sha256(256);
