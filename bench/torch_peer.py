"""torch_peer.py - PyTorch's CPU scaled_dot_product_attention timed on one
benchmark case, for sdpa_bench's torch column (BENCH_PYTHON runs it).

    torch_peer.py --probe
    torch_peer.py --pass fwd|bwd --shape B Hq Hkv Sq Sk D --dtype f32|f16|bf16
                  --causal 0|1 --threads N --reps N --budget S --min-reps N --max-reps N

prints one line, "TORCH status=ok ..." (ms= median milliseconds, reps=,
backend= the kernel PyTorch was held to, version=, threads=) or
"TORCH status=skipped reason=\"...\"". The timing policy is sdpa_bench's
(bench_repeat.c): one warm-up run, then --reps runs, or as many as fit in
--budget seconds within [--min-reps, --max-reps]; the median is reported.
Forward runs in inference mode; backward times torch.autograd.grad over a
forward recorded once (retain_graph), as sdpa_bench times our backward after
one training forward. Grouped-query cases pass enable_gqa=True; causal cases
are bottom-right aligned (PyTorch's is_causal when Sq == Sk).
"""

import argparse
import math
import statistics
import sys
import time

MIN_VERSION = (2, 5)


def say(**fields):
    words = []
    for key, value in fields.items():
        value = str(value)
        words.append('%s="%s"' % (key, value) if " " in value or not value else
                     "%s=%s" % (key, value))
    print("TORCH " + " ".join(words), flush=True)


def load_torch():
    """torch, or None after saying why it cannot serve."""
    try:
        import torch
    except ImportError as error:
        say(status="skipped", reason="no torch in %s (%s)" % (sys.executable, error))
        return None
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if version < MIN_VERSION:
        say(status="skipped", reason="torch %s < %d.%d" % ((torch.__version__,) + MIN_VERSION))
        return None
    return torch


def repeat(run, reps, budget, min_reps, max_reps):
    warm = run()
    if reps <= 0:
        wanted = math.ceil(budget / warm) if warm > 0 else max_reps
        reps = max(min(wanted, max_reps), min_reps, 1)
    times = [run() for _ in range(reps)]
    return statistics.median(times), reps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--pass", dest="pass_", choices=("fwd", "bwd"))
    parser.add_argument("--shape", type=int, nargs=6)
    parser.add_argument("--dtype", choices=("f32", "f16", "bf16"))
    parser.add_argument("--causal", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=0)
    parser.add_argument("--budget", type=float, default=3.0)
    parser.add_argument("--min-reps", type=int, default=3)
    parser.add_argument("--max-reps", type=int, default=10)
    args = parser.parse_args()

    torch = load_torch()
    if torch is None:
        return 0
    torch.set_num_threads(args.threads)
    if args.probe:
        say(status="ok", version=torch.__version__, threads=torch.get_num_threads())
        return 0

    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    b, hq, hkv, sq, sk, d = args.shape
    dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    generator = torch.Generator().manual_seed(1)

    def uniform(*shape):
        return (torch.rand(*shape, generator=generator) * 2 - 1).to(dtype)

    q, k, v = uniform(b, hq, sq, d), uniform(b, hkv, sk, d), uniform(b, hkv, sk, d)
    kw = dict(enable_gqa=hq != hkv)
    if args.causal and sq == sk:
        kw["is_causal"] = True
    elif args.causal:
        from torch.nn.attention.bias import causal_lower_right
        kw["attn_mask"] = causal_lower_right(sq, sk)

    def timed(fn):
        def run():
            start = time.perf_counter()
            fn()
            return time.perf_counter() - start
        return run

    def measure(backends):
        with sdpa_kernel(backends):
            if args.pass_ == "fwd":
                with torch.inference_mode():
                    return repeat(timed(lambda: sdpa(q, k, v, **kw)), args.reps, args.budget,
                                  args.min_reps, args.max_reps)
            inputs = [x.clone().requires_grad_() for x in (q, k, v)]
            out = sdpa(*inputs, **kw)
            grad_out = uniform(*out.shape)
            return repeat(timed(lambda: torch.autograd.grad(out, inputs, grad_out,
                                                            retain_graph=True)),
                          args.reps, args.budget, args.min_reps, args.max_reps)

    try:
        seconds, reps = measure([SDPBackend.FLASH_ATTENTION])
        backend = "flash"
    except RuntimeError:  # no flash kernel for this case: what PyTorch picks
        seconds, reps = measure([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH])
        backend = "math"
    say(status="ok", ms="%.4f" % (seconds * 1e3), reps=reps, backend=backend,
        version=torch.__version__, threads=torch.get_num_threads())
    return 0


if __name__ == "__main__":
    sys.exit(main())
