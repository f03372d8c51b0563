#!/usr/bin/env python3
"""Large zkeys for the bad-input-at-scale tests, made in a moment as sparse files (nothing large is
written to disk or kept in git), from the bn128 mulchain fixture's header.

  large_zkey.py domain LOG SRC.zkey OUT.zkey OUT.wtns
      a valid key of 2 wires (nPublic 1) and domain 2^LOG, every point at infinity, no coefs: its
      PointsH section (2^LOG x 64 bytes) is a hole; OUT.wtns its witness [1, 5]
  large_zkey.py pad SIZE SRC.zkey OUT.zkey
      SRC with one more section (id 11, which readers skip) of SIZE bytes, a hole: a key that proves
      like SRC but is SIZE bytes larger on disk
"""
import struct
import sys


def sections(data):
    n = struct.unpack_from("<I", data, 8)[0]
    off, out = 12, {}
    for _ in range(n):
        sid, size = struct.unpack_from("<IQ", data, off)
        out[sid] = data[off + 12:off + 12 + size]
        off += 12 + size
    return out


def main():
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "domain":
        log, src, out, wout = int(a[1]), a[2], a[3], a[4]
        s = sections(open(src, "rb").read())
        hdr = bytearray(s[2])
        n8q = struct.unpack_from("<I", hdr, 0)[0]
        n8r = struct.unpack_from("<I", hdr, 4 + n8q)[0]
        struct.pack_into("<III", hdr, 8 + n8q + n8r, 2, 1, 1 << log)
        g1, g2 = 2 * n8q, 4 * n8q
        parts = [(1, s[1]), (2, bytes(hdr)), (3, s[3][:2 * g1]), (4, struct.pack("<I", 0)),
                 (5, bytes(2 * g1)), (6, bytes(2 * g1)), (7, bytes(2 * g2)), (8, b"")]
        with open(out, "wb") as f:
            f.write(b"zkey" + struct.pack("<II", 1, len(parts) + 1))
            for sid, p in parts:
                f.write(struct.pack("<IQ", sid, len(p)) + p)
            f.write(struct.pack("<IQ", 9, (1 << log) * g1))
            f.truncate(f.tell() + (1 << log) * g1)
        r = bytes.fromhex("30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001")[::-1]
        with open(wout, "wb") as f:
            f.write(b"wtns" + struct.pack("<II", 2, 2))
            f.write(struct.pack("<IQI", 1, 40, 32) + r + struct.pack("<I", 2))
            f.write(struct.pack("<IQ", 2, 64) + (1).to_bytes(32, "little") + (5).to_bytes(32, "little"))
    elif len(a) == 4 and a[0] == "pad":
        size, src, out = int(a[1]), a[2], a[3]
        data = bytearray(open(src, "rb").read())
        struct.pack_into("<I", data, 8, struct.unpack_from("<I", data, 8)[0] + 1)
        with open(out, "wb") as f:
            f.write(data + struct.pack("<IQ", 11, size))
            f.truncate(len(data) + 12 + size)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
