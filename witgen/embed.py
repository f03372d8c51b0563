#!/usr/bin/env python3
"""embed.py SRC OUT NAME: writes the C header OUT that defines NAME as a string literal holding the
text of SRC (witgen/meson.build: fr_native.c, which build.c writes next to each generator it
compiles)."""
import sys

src, out, name = sys.argv[1:4]
with open(src, encoding="utf-8") as f:
    text = f.read()
lines = ["/* generated from %s by witgen/embed.py */" % src.rsplit("/", 1)[-1], "#define %s \\" % name]
for line in text.splitlines(True):
    esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("?", "\\?")
    lines.append('    "%s" \\' % esc)
lines.append('    ""')
with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(lines) + "\n")
