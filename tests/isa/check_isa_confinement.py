#!/usr/bin/env python3
"""No AVX-512 instruction outside the isa_avx512 namespaces (tensor/runtime/isa.h).

A build runs on AVX2-only CPUs only if every AVX-512 instruction sits in a
kernel that the run-time dispatch calls on AVX-512 CPUs alone. This
disassembles a linked program and finds every instruction with an EVEX prefix
(byte 0x62 after any legacy prefixes: all AVX-512 instructions have one) in a
function whose name lacks isa_avx512. Such a function is typically a shared
template (std::vector<float>, say) instantiated in a kernel file compiled for
AVX-512, whose copy the linker kept.

AVX512-BF16 instructions (VDPBF16PS, VCVTNE2PS2BF16, VCVTNEPS2BF16: "bf16" in
the mnemonic) and AVX512-VNNI ones (VPDPBUSD(S), VPDPWSSD(S)), which many
AVX-512 CPUs lack, must moreover sit in isa_avx512_bf16, the namespace of the
kernels compiled with -mavx512bf16 -mavx512vnni.

usage: check_isa_confinement.py PROGRAM...
"""
import re
import subprocess
import sys

LEGACY_PREFIXES = {"66", "67", "f2", "f3", "2e", "3e", "26", "36", "64", "65"}


def evex_functions(program):
    listing = subprocess.run(["objdump", "-d", "-C", "--no-addresses", program], capture_output=True, text=True,
                             check=True).stdout
    function, confined, leaked = None, set(), {}
    for line in listing.splitlines():
        header = re.match(r"^<(.*)>:$", line)
        if header:
            function = header.group(1)
            continue
        columns = line.split("\t")
        if len(columns) < 3 or not columns[2].strip():  # not an instruction (or a long one's continued bytes)
            continue
        encoding = [byte for byte in columns[1].split()]
        first = next((byte for byte in encoding if byte not in LEGACY_PREFIXES), None)
        if first == "62":
            instruction = columns[2].strip()
            # isa_avx512_bf16 contains isa_avx512: it may hold any AVX-512 instruction.
            mnemonic = instruction.split()[0]
            beyond_avx512 = "bf16" in mnemonic or mnemonic.startswith(("vpdpbus", "vpdpwss"))
            allowed = "isa_avx512_bf16" if beyond_avx512 else "isa_avx512"
            if allowed in function:
                confined.add(function)
            else:
                leaked.setdefault(function, instruction)
    return confined, leaked


def main():
    failed = False
    for program in sys.argv[1:]:
        confined, leaked = evex_functions(program)
        print(f"{program}: {len(confined)} functions with AVX-512 instructions, all in isa_avx512"
              if not leaked else f"{program}: AVX-512 instructions outside isa_avx512 (AVX512-BF16 and VNNI ones outside isa_avx512_bf16):")
        for function, instruction in sorted(leaked.items()):
            print(f"  {function[:200]}: {instruction}")
        if not confined:
            print(f"{program}: no AVX-512 kernels at all (the AVX-512 copies are missing)")
        failed = failed or bool(leaked) or not confined
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
