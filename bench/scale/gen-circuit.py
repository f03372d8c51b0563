#!/usr/bin/env python3
"""Writes a large benchmark circuit: an .r1cs and a satisfying .wtns (bn128), of domain 2^LOG.

The circuit is a chain x_{i+1} = x_i * (x_i + 1) (one constraint per wire: A = x_i, B = x_i + 1,
C = x_{i+1}), x_0 public, so nVars = 2^LOG and the constraint count fills the domain that snarkjs's
setup picks (nConstraints + nPublic + 1 <= 2^LOG). The values are full-size field elements (none 0
or 1 past the start), the worst case for the MSMs. Nothing here is a hash: a timing circuit only.
The key comes from `zkpipe keygen --insecure-dev` (bench/scale/run.sh does both).

Usage: gen-circuit.py LOG OUT_STEM   (writes OUT_STEM.r1cs and OUT_STEM.wtns)
"""
import struct
import sys

R = 21888242871839275222246405745257275088548364400416034343698204186575808495617


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or not 10 <= int(sys.argv[1]) <= 26:
        sys.exit("usage: gen-circuit.py LOG(10..26) OUT_STEM")
    log, stem = int(sys.argv[1]), sys.argv[2]
    n_vars = 1 << log
    m = n_vars - 2  # constraints: wires 0 (one), 1 (x_0, public), 2..m+1 (x_1..x_m)
    n_pub = 1
    assert m + n_pub + 1 <= n_vars
    prime = R.to_bytes(32, "little")
    one = (1).to_bytes(32, "little")

    # witness: x_0 = 7, x_{i+1} = x_i * (x_i + 1)
    with open(stem + ".wtns", "wb") as f:
        f.write(b"wtns" + struct.pack("<II", 2, 2))
        f.write(struct.pack("<IQ", 1, 8 + 32) + struct.pack("<I", 32) + prime + struct.pack("<I", n_vars))
        f.write(struct.pack("<IQ", 2, 32 * n_vars))
        x, buf = 7, [one]
        buf.append(x.to_bytes(32, "little"))
        for _ in range(m):
            x = x * (x + 1) % R
            buf.append(x.to_bytes(32, "little"))
            if len(buf) >= 65536:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))

    # r1cs: header (1), constraints (2), wire-to-label map (3)
    hdr = struct.pack("<I", 32) + prime + struct.pack("<IIIIQI", n_vars, 0, n_pub, 0, n_vars, m)
    lc1 = struct.pack("<I", 1)
    lc2 = struct.pack("<I", 2)
    rec_size = 4 + 36 + 4 + 72 + 4 + 36
    with open(stem + ".r1cs", "wb") as f:
        f.write(b"r1cs" + struct.pack("<II", 1, 3))
        f.write(struct.pack("<IQ", 1, len(hdr)) + hdr)
        f.write(struct.pack("<IQ", 2, rec_size * m))
        buf = []
        for i in range(m):
            a = struct.pack("<I", i + 1) + one
            c = struct.pack("<I", i + 2) + one
            buf.append(lc1 + a + lc2 + a + struct.pack("<I", 0) + one + lc1 + c)
            if len(buf) >= 65536:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))
        f.write(struct.pack("<IQ", 3, 8 * n_vars))
        step = 1 << 16
        for s in range(0, n_vars, step):
            f.write(struct.pack("<%dQ" % min(step, n_vars - s), *range(s, min(s + step, n_vars))))


if __name__ == "__main__":
    main()
