#!/usr/bin/env python3
"""groth16_verify (librapidsnark, through ctypes) against `zkpipe verify` on the same texts: valid,
tampered and malformed proofs, public signals and keys of the bn128 and bls12381 fixtures. The
outcomes must agree: VERIFIER_VALID_PROOF = exit 0, VERIFIER_INVALID_PROOF = exit 1, VERIFIER_ERROR
= exit 2 (docs/library.md)."""
import ctypes
import json
import os
import subprocess
import sys
import tempfile

root = os.environ["ZKPIPE_SOURCE_ROOT"]
build = os.environ["ZKPIPE_BUILD_ROOT"]
lib = ctypes.CDLL(os.path.join(build, "lib", "librapidsnark.so"))
lib.groth16_verify.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong]
lib.groth16_verify.restype = ctypes.c_int
zkpipe = os.path.join(build, "cli", "zkpipe")
exit_of = {0: 0, 1: 1, 2: 2}  # VALID, INVALID, ERROR -> zkpipe verify's exit status


def cases(d):
    proof = json.load(open(os.path.join(d, "proof-1.json")))
    pub = json.load(open(os.path.join(d, "public-1.json")))
    vk = json.load(open(os.path.join(d, "vk.json")))
    dump = json.dumps
    yield "valid", dump(proof), dump(pub), dump(vk)
    p2 = json.load(open(os.path.join(d, "proof-2.json")))
    yield "another witness's proof", dump(p2), dump(pub), dump(vk)
    yield "public signal + 1", dump(proof), dump([str(int(pub[0]) + 1)] + pub[1:]), dump(vk)
    yield "pi_a and pi_c swapped", dump(dict(proof, pi_a=proof["pi_c"], pi_c=proof["pi_a"])), dump(pub), dump(vk)
    yield "pi_a negated", dump(dict(proof, pi_a=[proof["pi_a"][0], str(q - int(proof["pi_a"][1])), "1"])), dump(pub), dump(vk)
    yield "pi_a.x + 1", dump(dict(proof, pi_a=[str(int(proof["pi_a"][0]) + 1)] + proof["pi_a"][1:])), dump(pub), dump(vk)
    yield "pi_b c0/c1 swapped", dump(dict(proof, pi_b=[x[::-1] for x in proof["pi_b"][:2]] + [["1", "0"]])), dump(pub), dump(vk)
    yield "pi_c.y = q", dump(dict(proof, pi_c=[proof["pi_c"][0], str(q), "1"])), dump(pub), dump(vk)
    yield "public signal = r", dump(proof), dump([str(r)] + pub[1:]), dump(vk)
    yield "one signal too few", dump(proof), dump(pub[:-1]), dump(vk)
    yield "one signal too many", dump(proof), dump(pub + ["1"]), dump(vk)
    yield "signal not decimal", dump(proof), dump(["0x1"] + pub[1:]), dump(vk)
    yield "signal a number", dump(proof), json.dumps([1] + pub[1:]), dump(vk)
    yield "truncated proof", dump(proof)[:-7], dump(pub), dump(vk)
    yield "truncated public", dump(proof), dump(pub)[:-2], dump(vk)
    yield "empty vk", dump(proof), dump(pub), "{}"
    yield "vk IC dropped", dump(proof), dump(pub), dump(dict(vk, IC=vk["IC"][:-1]))
    yield "vk delta = gamma", dump(proof), dump(pub), dump(dict(vk, vk_delta_2=vk["vk_gamma_2"]))
    yield "vk of the other curve", dump(proof), dump(pub), dump(other_vk)
    yield "not json", "pi_a", dump(pub), dump(vk)
    yield "protocol plonk", dump(dict(proof, protocol="plonk")), dump(pub), dump(vk)


fail = 0
n = 0
with tempfile.TemporaryDirectory() as tmp:
    for curve, other in (("bn128", "bls12381"), ("bls12381", "bn128")):
        d = os.path.join(root, "tests", "data", curve, "mulchain")
        other_vk = json.load(open(os.path.join(root, "tests", "data", other, "mulchain", "vk.json")))
        if curve == "bn128":
            q = 21888242871839275222246405745257275088696311157297823662689037894645226208583
            r = 21888242871839275222246405745257275088548364400416034343698204186575808495617
        else:
            q = int("1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab", 16)
            r = int("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16)
        for name, proof, pub, vk in cases(d):
            n += 1
            paths = []
            for what, text in (("vk", vk), ("public", pub), ("proof", proof)):
                p = os.path.join(tmp, what + ".json")
                with open(p, "w") as f:
                    f.write(text)
                paths.append(p)
            cli = subprocess.run([zkpipe, "verify"] + paths, capture_output=True, text=True)
            msg = ctypes.create_string_buffer(512)
            got = lib.groth16_verify(proof.encode(), pub.encode(), vk.encode(), msg, 512)
            ok = exit_of.get(got) == cli.returncode
            line = (cli.stdout + cli.stderr).strip().splitlines()
            print("%-4s %-9s %-26s groth16_verify %d, zkpipe verify exit %d (%s) / %s" % (
                "ok" if ok else "FAIL", curve, name, got, cli.returncode, line[0][:90] if line else "",
                msg.value.decode(errors="replace")[:90]))
            if not ok:
                fail += 1
            if name == "valid" and got != 0:
                print("FAIL: the fixture's own proof is not valid")
                fail += 1
print("%d cases, %d disagree" % (n, fail))
sys.exit(1 if fail else 0)
