#!/usr/bin/env python3
"""Instruction mix of the hottest loop of each kernel in an nvdisasm listing (experiments/sass/disasm.sh).

A loop is the span from a label to a later branch back to it; the hottest is taken to be the
smallest loop holding the most integer dot products (IDP) or tensor-core ops (HMMA/IMMA), else the
longest innermost loop. Prints, per kernel whose mangled name contains PATTERN: the loop's size, its
opcode counts, and its LDG count, so instructions per loaded byte can be worked out by hand
(a GEMV lane's bytes per iteration depend on the kernel's shape, which the listing does not say).
"""
import collections
import re
import sys


def kernels(text):
    parts = re.split(r'//-+ \.text\.(\S+) -+', text)
    for i in range(1, len(parts), 2):
        yield parts[i], parts[i + 1]


def loops(body):
    ins = [(int(m.group(1), 16), m.group(2).strip())
           for m in re.finditer(r'/\*([0-9a-f]{4,})\*/\s+([^;]*);', body)]
    labels = {m.group(1): int(m.group(2), 16)
              for m in re.finditer(r'\.(L_x_\d+):\s*\n\s*/\*([0-9a-f]+)\*/', body)}
    found = []
    for addr, text in ins:
        m = re.search(r'BRA.*\.(L_x_\d+)', text)
        if m and m.group(1) in labels and labels[m.group(1)] < addr:
            lo = labels[m.group(1)]
            found.append((lo, addr, [t for a, t in ins if lo <= a <= addr]))
    return found


def opcode(text):
    text = re.sub(r'^@!?U?P\w+\s+', '', text)
    return text.split()[0].split('.')[0]


def main():
    text = open(sys.argv[1]).read()
    pattern = sys.argv[2] if len(sys.argv) > 2 else ''
    for name, body in kernels(text):
        if pattern not in name:
            continue
        found = loops(body)
        if not found:
            print(f'{name}: no loop')
            continue
        def dots(loop):
            c = collections.Counter(opcode(t) for t in loop[2])
            return c['IDP'] + c['HMMA'] + c['IMMA']
        most = max(dots(l) for l in found)
        # the smallest loop with the most dot products (an outer loop holds them too), else the
        # longest innermost loop
        if most > 0:
            lo, hi, body_ins = min((l for l in found if dots(l) == most), key=lambda l: len(l[2]))
        else:
            inner = [l for l in found if not any(o is not l and l[0] <= o[0] and o[1] <= l[1] for o in found)]
            lo, hi, body_ins = max(inner, key=lambda l: len(l[2]))
        mix = collections.Counter(opcode(t) for t in body_ins)
        print(f'{name}\n  hottest loop {lo:#x}..{hi:#x}: {len(body_ins)} instructions, '
              + ', '.join(f'{k} {v}' for k, v in mix.most_common()))


if __name__ == '__main__':
    main()
