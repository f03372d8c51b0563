#!/usr/bin/env python3
"""Oracle test: `zkpipe verify` agrees with `snarkjs groth16 verify` (accept or reject) on random
tamperings of the fixture proofs, N per curve (argv[1], default 50), plus the untouched proofs.
Tamperings: a coordinate changed (small delta or random value below q), pi_b's c0/c1 swapped, a public
signal changed, A and C swapped, A negated, A replaced by another proof's A, a proof with another
proof's public signals, A at infinity, a Jacobian z changed; and one change that keeps the proof
valid: a point rewritten in other Jacobian coordinates (X l^2, Y l^3, l). zkpipe must also exit 0, 1 or 2 only (2 where it refuses a
malformed point; snarkjs answers those with false).
Exit 77 when snarkjs is not installed. Seed: env ZKPIPE_ORACLE_SEED, else random (printed)."""
import json
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

SRC = os.environ.get("ZKPIPE_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("ZKPIPE_BUILD_ROOT")
SNARKJS = os.path.join(SRC, "node_modules", ".bin", "snarkjs")
DATA = os.path.join(SRC, "tests", "data")
Q = {"bn128": 21888242871839275222246405745257275088696311157297823662689037894645226208583,
     "bls12381": 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab}
R = {"bn128": 21888242871839275222246405745257275088548364400416034343698204186575808495617,
     "bls12381": 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001}
SETS = {
    "bn128": [("bn128/mulchain", ["1", "2"]), ("bn128/poseidon", ["1", "2", "3", "4"]), ("bn128/medium", [None])],
    "bls12381": [("bls12381/mulchain", ["1", "2"])],
}


def files(d, k):
    if k is None:
        return os.path.join(DATA, d, "proof.json"), os.path.join(DATA, d, "public.json")
    return os.path.join(DATA, d, "proof-%s.json" % k), os.path.join(DATA, d, "public-%s.json" % k)


def tamper(rng, curve, proof, public, others):
    """Returns (description, proof, public) with one random change."""
    q, r = Q[curve], R[curve]
    p = json.loads(json.dumps(proof))
    u = list(public)
    kind = rng.choice(["coord", "coord", "coord", "pub", "pub", "swap_ac", "neg_a", "other_a", "other_pub",
                       "b_c0c1", "a_inf", "rescale", "z"])
    if kind == "coord":
        key = rng.choice(["pi_a", "pi_b", "pi_c"])
        if key == "pi_b":
            i, j = rng.randrange(2), rng.randrange(2)
            old = int(p[key][i][j])
        else:
            i, j = rng.randrange(2), None
            old = int(p[key][i])
        new = (old + rng.choice([1, -1, 2, rng.randrange(1, 1 << 64)])) % q if rng.random() < 0.7 else rng.randrange(q)
        if j is None:
            p[key][i] = str(new)
        else:
            p[key][i][j] = str(new)
        desc = "%s[%d]%s %s" % (key, i, "" if j is None else "[%d]" % j, "changed")
    elif kind == "pub":
        i = rng.randrange(len(u))
        u[i] = str((int(u[i]) + 1) % r if rng.random() < 0.5 else rng.randrange(r))
        desc = "public[%d] changed" % i
    elif kind == "swap_ac":
        p["pi_a"], p["pi_c"] = p["pi_c"], p["pi_a"]
        desc = "A and C swapped"
    elif kind == "neg_a":
        p["pi_a"][1] = str(q - int(p["pi_a"][1]))
        desc = "A negated"
    elif kind == "other_a":
        o = rng.choice(others)[0]
        if o["pi_a"] == p["pi_a"]:
            p["pi_a"], p["pi_c"] = p["pi_c"], p["pi_a"]
        else:
            p["pi_a"] = o["pi_a"]
        desc = "A from another proof"
    elif kind == "other_pub":
        o = rng.choice(others)[1]
        if len(o) != len(u) or o == u:
            u[0] = str((int(u[0]) + 5) % r)
        else:
            u = list(o)
        desc = "another proof's public signals"
    elif kind == "b_c0c1":
        p["pi_b"][0] = p["pi_b"][0][::-1]
        p["pi_b"][1] = p["pi_b"][1][::-1]
        desc = "pi_b c0/c1 swapped"
    elif kind == "rescale":
        # the same point in other Jacobian coordinates (X l^2, Y l^3, l): still valid
        key = rng.choice(["pi_a", "pi_b", "pi_c"])
        lam = rng.randrange(2, q)
        if key == "pi_b":
            p[key] = [[str(int(c) * lam * lam % q) for c in p[key][0]],
                      [str(int(c) * lam * lam * lam % q) for c in p[key][1]], [str(lam), "0"]]
        else:
            p[key] = [str(int(p[key][0]) * lam * lam % q), str(int(p[key][1]) * lam * lam * lam % q), str(lam)]
        desc = "%s rescaled (Jacobian)" % key
    elif kind == "z":
        key = rng.choice(["pi_a", "pi_c"])
        p[key][2] = str(rng.randrange(2, q))
        desc = "%s z changed" % key
    else:
        p["pi_a"] = ["0", "1", "0"]
        desc = "A at infinity"
    return desc, p, u


def run(cmd):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return res.returncode, (res.stdout + res.stderr).strip().splitlines()[-1:] if (res.stdout + res.stderr).strip() else []


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    if not os.access(SNARKJS, os.X_OK):
        print("snarkjs not found at %s: skipping" % SNARKJS)
        return 77
    if not BUILD:
        print("ZKPIPE_BUILD_ROOT is not set")
        return 1
    zkpipe = os.path.join(BUILD, "cli", "zkpipe")
    seed = int(os.environ.get("ZKPIPE_ORACLE_SEED", random.randrange(1 << 32)))
    print("seed %d" % seed)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="zk-verify-oracle-")
    jobs = []
    for curve, sets in SETS.items():
        loaded = []
        for d, ks in sets:
            for k in ks:
                pf, pu = files(d, k)
                loaded.append((d, json.load(open(pf)), json.load(open(pu))))
        for d, proof, public in loaded:  # the untouched proofs: both accept
            jobs.append((curve, d, "untouched", proof, public))
        for t in range(n):
            d, proof, public = rng.choice(loaded)
            others = [(p, u) for (dd, p, u) in loaded if dd == d and p != proof]
            if not others:
                others = [(proof, public)]
            desc, p, u = tamper(rng, curve, proof, public, others)
            jobs.append((curve, d, desc, p, u))

    def check(idx_job):
        idx, (curve, d, desc, p, u) = idx_job
        pf = os.path.join(tmp, "proof-%d.json" % idx)
        pu = os.path.join(tmp, "public-%d.json" % idx)
        with open(pf, "w") as f:
            json.dump(p, f, indent=1)
        with open(pu, "w") as f:
            json.dump(u, f, indent=1)
        vk = os.path.join(DATA, d, "vk.json")
        zrc, zout = run([zkpipe, "verify", vk, pu, pf])
        src, sout = run([SNARKJS, "groth16", "verify", vk, pu, pf])
        os.unlink(pf)
        os.unlink(pu)
        return curve, d, desc, zrc, zout, src, sout

    fails = 0
    counts = {}
    with ThreadPoolExecutor(max_workers=2) as ex:
        for curve, d, desc, zrc, zout, src, sout in ex.map(check, enumerate(jobs)):
            agree = zrc in (0, 1, 2) and (zrc == 0) == (src == 0)
            c = counts.setdefault(curve, [0, 0, 0])
            c[0] += 1
            c[1] += zrc == 0
            c[2] += agree
            line = "%-5s %-9s %-18s %-32s zkpipe %d %s | snarkjs %d" % (
                "ok" if agree else "FAIL", curve, d, desc, zrc, (zout or [""])[0][-70:], src)
            print(line)
            fails += not agree
    os.rmdir(tmp)
    for curve, (tot, acc, agr) in counts.items():
        print("%s: %d cases, %d accepted, %d agree with snarkjs" % (curve, tot, acc, agr))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
