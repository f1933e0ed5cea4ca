#!/usr/bin/env python3
"""Projected data-parallel scaling of tinygpt's training over N machines (docs/distributed.md).

Every rank sends and receives, in a ring all-reduce of P float32 gradients,
2 (N - 1) / N x 4 P bytes, in 2 (N - 1) messages. With one rank per machine,
links of B bit/s and a per-message latency L, the all-reduce takes
    t_comm = 2 (N - 1) / N x 4 P x 8 / B  +  2 (N - 1) L
and, without overlapping it with the backward, a step takes t_compute + t_comm:
the scaling efficiency is t_compute / (t_compute + t_comm).

usage: python3 bench/project_scaling.py NAME=PARAMETERS:SECONDS_PER_STEP[:TOKENS_PER_STEP] ...
  e.g. gpt2=124439808:21.97:4096   (the compute time of one step measured on one machine)
"""
import sys

MACHINES = (4, 16, 64)
LINKS_GBIT = (10, 25, 100)
LATENCY_S = 50e-6  # one message over TCP on a data-centre network


def all_reduce_seconds(parameters: int, machines: int, gbit: float) -> float:
    sent_bytes = 2 * (machines - 1) / machines * 4 * parameters
    return sent_bytes * 8 / (gbit * 1e9) + 2 * (machines - 1) * LATENCY_S


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for argument in sys.argv[1:]:
        name, numbers = argument.split("=")
        fields = numbers.split(":")
        parameters, compute = int(fields[0]), float(fields[1])
        tokens = int(fields[2]) if len(fields) > 2 else None
        print(f"\n{name}: {parameters / 1e6:.1f}M parameters, {compute:.2f} s of compute per step per machine"
              + (f" ({tokens} tokens per machine)" if tokens else ""))
        print(f"{'machines':>8} {'MB sent/rank':>12} " + " ".join(f"{f'{g} Gbit/s: step, efficiency':>30}" for g in LINKS_GBIT))
        for machines in MACHINES:
            sent_mb = 2 * (machines - 1) / machines * 4 * parameters / 1e6
            cells = []
            for gbit in LINKS_GBIT:
                step = compute + all_reduce_seconds(parameters, machines, gbit)
                cells.append(f"{step:10.2f} s {100 * compute / step:8.1f}%")
            print(f"{machines:8d} {sent_mb:12.0f} " + " ".join(f"{cell:>30}" for cell in cells))


if __name__ == "__main__":
    main()
