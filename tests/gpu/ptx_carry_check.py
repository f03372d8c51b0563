#!/usr/bin/env python3
"""The carry chains of gpud/cuda/ff.cuh survive compilation: in the PTX nvcc emits, every
instruction that reads the carry flag (addc, subc, madc) follows an instruction that writes it
(*.cc) with no label, branch, call or return in between. The chains are written as separate asm
statements (as sppark does); this checks, without a GPU, that nothing split them.
Usage: ptx_carry_check.py FILE.ptx..."""
import re
import sys


def check(path):
    reads = bad = 0
    valid = False
    func = "?"
    for no, line in enumerate(open(path), 1):
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        if ".entry" in s or ".func" in s:
            func, valid = s[:100], False
        if re.match(r"^\$?[\w$]+:$", s) or s[0] in "{}" or re.search(r"\b(bra|call|ret|exit)\b", s):
            valid = False
            continue
        words = s.split()
        op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
        reads_cf = op.startswith(("addc", "subc", "madc"))
        if reads_cf:
            reads += 1
            if not valid:
                bad += 1
                if bad <= 5:
                    print(f"{path}:{no}: carry read without a carry write before it: {s} (in {func})")
        if ".cc" in op:
            valid = True
        elif reads_cf:
            valid = False
    return reads, bad


total_reads = total_bad = 0
for p in sys.argv[1:]:
    r, b = check(p)
    print(f"{p}: {r} carry reads, {b} broken")
    total_reads += r
    total_bad += b
if total_reads == 0:
    print("no carry chains found: wrong input?")
    sys.exit(1)
sys.exit(1 if total_bad else 0)
