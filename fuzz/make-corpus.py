#!/usr/bin/env python3
"""Regenerates the fuzzers' seed corpus (fuzz/corpus/<target>/) from the fixtures in tests/data.

The binary seeds are small files of each format built from the fixtures' own bytes (curve constants,
points, witness values, coefficients) so that every seed is accepted by its reader and the fuzzer
mutates valid structure, not a 500 KB key: a zkey with nVars 4, nPublic 1, domainSize 4 per curve (in
snarkjs's section order, and once with the sections reordered so that they are not 8-byte aligned),
witnesses of 4 values, an r1cs of 3 constraints. The JSON seeds are the fixtures' vk, proof and public
files as they are; the ini seeds are the example ini and job.ini files as the spool writes them.
Usage: fuzz/make-corpus.py   (writes next to itself; deterministic: the same bytes every run)
"""
import hashlib
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data")
OUT = os.path.join(HERE, "corpus")


def sections(path, magic):
    b = open(path, "rb").read()
    assert b[:4] == magic, path
    n = struct.unpack_from("<I", b, 8)[0]
    pos, secs = 12, {}
    for _ in range(n):
        sid, size = struct.unpack_from("<IQ", b, pos)
        secs[sid] = b[pos + 12:pos + 12 + size]
        pos += 12 + size
    return secs


def container(magic, version, secs):
    out = bytearray(magic + struct.pack("<II", version, len(secs)))
    for sid, payload in secs:
        out += struct.pack("<IQ", sid, len(payload)) + payload
    return bytes(out)


def small_zkey(path):
    s = sections(path, b"zkey")
    h = s[2]
    n8q = struct.unpack_from("<I", h, 0)[0]
    n8r = struct.unpack_from("<I", h, 4 + n8q)[0]
    pre = h[:8 + n8q + n8r]
    pts = h[8 + n8q + n8r + 12:]
    n_vars, n_pub, domain = 4, 1, 4
    g1, g2 = 2 * n8q, 4 * n8q
    hdr = pre + struct.pack("<III", n_vars, n_pub, domain) + pts
    rec = 12 + n8r
    old = s[4]
    coefs = []
    for i in range(min(struct.unpack_from("<I", old, 0)[0], 6)):
        e = old[4 + i * rec:4 + (i + 1) * rec]
        m = struct.unpack_from("<I", e, 0)[0]
        coefs.append(struct.pack("<III", m, i % domain, (i + 1) % n_vars) + e[12:])
    c4 = struct.pack("<I", len(coefs)) + b"".join(coefs)
    return [(1, s[1]), (2, hdr), (3, s[3][:(n_pub + 1) * g1]), (4, c4), (5, s[5][:n_vars * g1]),
            (6, s[6][:n_vars * g1]), (7, s[7][:n_vars * g2]), (8, s[8][:(n_vars - n_pub - 1) * g1]),
            (9, s[9][:domain * g1]), (10, s[10][:100])]


def small_wtns(path, n=4):
    s = sections(path, b"wtns")
    h = s[1]
    return container(b"wtns", 2, [(1, h[:36] + struct.pack("<I", n)), (2, s[2][:32 * n])])


def small_r1cs(path):
    s = sections(path, b"r1cs")
    h = s[1]
    r = h[4:36]
    r_minus_1 = (int.from_bytes(r, "little") - 1).to_bytes(32, "little")
    one = (1).to_bytes(32, "little")
    seven = (7).to_bytes(32, "little")

    def lc(terms):
        return struct.pack("<I", len(terms)) + b"".join(struct.pack("<I", w) + c for w, c in terms)

    cons = (lc([(1, one)]) + lc([(2, one)]) + lc([(3, r_minus_1), (0, seven)]) +
            lc([]) + lc([(1, seven)]) + lc([(2, one)]) +
            lc([(3, one)]) + lc([(3, one)]) + lc([(1, r_minus_1)]))
    n_wires, m = 4, 3
    hdr = h[:36] + struct.pack("<IIIIQI", n_wires, 1, 1, 1, n_wires, m)
    wiremap = b"".join(struct.pack("<Q", i) for i in range(n_wires))
    return container(b"r1cs", 1, [(1, hdr), (2, cons), (3, wiremap)])


JOB_INIS = [
    "[job]\nid = 20261130T051203.123456-3fa9c1\ncircuit = mulchain\npriority = NORMAL\npartitions = 1\n"
    "submitted_ns = 1764479523123456789\n",
    "[job]\nid = a\ncircuit = poseidon\npriority = critical\npartitions = 4\n",
    "; a comment\n[job]\nid = j_2\ncircuit = m\npartitions = 2\npriority = LOW\n",
]

INIS = [
    "[pipeline]\nname = t1\nspool = /tmp/zk-spool\nslabs = 6\nslab_size = 64M\nreserve_critical = 1\n"
    "[synth]\ninstances = 3\ntrim = 256M\n[gpu]\ndevices = 2\nbackend = cpu\ninflight = 2\n"
    "[finalizer]\nverify = no\n[circuit mul]\nzkey = /x/m.zkey\nr1cs = m.r1cs\npriority = high\npreload = no\n",
    "[pipeline]\nsegment = /dev/shm/zkpipe-x\nhugepages = yes\njobs = 16\nevents = 1024\n"
    "[circuit \"a.b\"]\nzkey = a.zkey\n[circuit c]\nzkey = /c.zkey\n",
]


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for curve in ("bn128", "bls12381"):
        secs = small_zkey(os.path.join(DATA, curve, "mulchain", "mulchain.zkey"))
        put("zkey", curve + ".zkey", container(b"zkey", 1, secs))
        # the contributions first, 100 bytes: every later section starts off an 8-byte boundary
        put("zkey", curve + "_unaligned.zkey", container(b"zkey", 1, [secs[-1]] + secs[:-1]))
        w = os.path.join(DATA, curve, "mulchain", "witness-1.wtns")
        put("wtns", curve + ".wtns", small_wtns(w))
        put("wtns", curve + "_1.wtns", small_wtns(w, 1))
        put("r1cs", curve + ".r1cs", small_r1cs(os.path.join(DATA, curve, "mulchain", "mulchain.r1cs")))
    for d in ("bn128/mulchain", "bn128/poseidon", "bls12381/mulchain"):
        tag = d.replace("/", "_")
        src = os.path.join(DATA, d)
        put("vk", tag + "_vk.json", open(os.path.join(src, "vk.json"), "rb").read())
        for f in sorted(os.listdir(src)):
            if f.startswith("proof"):
                put("proof", tag + "_" + f, open(os.path.join(src, f), "rb").read())
            if f.startswith("public"):
                put("public", tag + "_" + f, open(os.path.join(src, f), "rb").read())
    for i, t in enumerate(JOB_INIS):
        put("jobini", "job%d.ini" % i, t.encode())
    put("ini", "example.ini", open(os.path.join(ROOT, "config", "zkpipe.ini.example"), "rb").read())
    for i, t in enumerate(INIS):
        put("ini", "t%d.ini" % i, t.encode())
    # lines past inih's compiled 200 bytes: 900-character paths (read whole) and a 5000-character
    # line (over the raised limit: an error); the second also lifts libFuzzer's input size limit
    deep = "/" + "/".join("d%02d" % i + "x" * 20 for i in range(37))
    put("ini", "long_path.ini", ("[pipeline]\nspool = %s\n[circuit c]\nzkey = %s.zkey\n" % (deep, deep)).encode())
    put("ini", "long_line.ini", ("[pipeline]\n# " + "y" * 5000 + "\nslabs = 2\n").encode())
    n = sum(len(fs) for _, _, fs in os.walk(OUT))
    digest = hashlib.sha256()
    for dp, _, fs in sorted(os.walk(OUT)):
        for f in sorted(fs):
            digest.update(open(os.path.join(dp, f), "rb").read())
    print("fuzz/corpus: %d seed files, sha256 %s" % (n, digest.hexdigest()[:16]))


if __name__ == "__main__":
    main()
