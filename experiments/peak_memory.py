"""Peak memory of ``python -m nparse.parse`` on big inputs: memory must follow the chunk, not the file.

    python experiments/peak_memory.py [--model CKPT] [--sentences 10000 100000] [--token-mb 1]
    python experiments/peak_memory.py --model CKPT --api --ewt-train-times 4 [--batch-tokens N]

Writes CoNLL-U files of N sentences (EWT dev repeated, with fresh sent_ids) and one sentence
holding a token of ``--token-mb`` MB, parses each in a fresh process (``chunk`` as configured,
default 4096) and prints the process's peak resident memory (ru_maxrss), the time, and the
input size. Without ``--model`` an untrained model of the default configuration is used: memory
does not depend on the weights. With ``--api`` each parse goes through ``nparse.load(CKPT)`` and
``Parser.parse_file``; ``--ewt-train-times K`` parses EWT dev, then EWT train repeated K times
(fresh sent_ids), instead of the other inputs.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


from nparse.io.conllu import read_conllu
from nparse.paths import PROJECT_ROOT

DEV = PROJECT_ROOT / "data" / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu"


def child(args: list[str]) -> None:
    """Run the parse CLI (or, after ``--api``, the API) in this process and report its peak
    memory (MiB) on the last line."""
    if args[0] == "--api":
        import nparse

        options = dict(a.split("=", 1) for a in args[1:])
        bt = options.get("batch_tokens")
        nparse.load(options["model"], device="cpu").parse_file(
            options["input"], options["output"], batch_tokens=None if bt is None else int(bt)
        )
        rc = 0
    else:
        from nparse import parse

        rc = parse.main(args)
    print(f"rc={rc} peak_mib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")


def big_file(path: Path, sentences: int, source: Path = DEV) -> None:
    blocks = source.read_text(encoding="utf-8").strip("\n").split("\n\n")
    with open(path, "w", encoding="utf-8") as out:
        for k in range(sentences):
            lines = [ln for ln in blocks[k % len(blocks)].split("\n") if not ln.startswith("# sent_id")]
            out.write(f"# sent_id = big-{k}\n" + "\n".join(lines) + "\n\n")


def huge_token_file(path: Path, megabytes: float) -> None:
    sent = read_conllu(DEV)[0]
    k = sent.word_lines[1]
    lines = list(sent.lines)
    cols = lines[k].split("\t")
    cols[1] = "x" * int(megabytes * 1024 * 1024)
    lines[k] = "\t".join(cols)
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")


def measure(
    model: Path, source: Path, out: Path, api: bool = False, batch_tokens: int | None = None
) -> tuple[int, float, float]:
    start = time.perf_counter()
    cmd = [sys.executable, __file__, "--child", f"model={model}", f"input={source}", f"output={out}", "device=cpu"]
    if api:
        cmd = [sys.executable, __file__, "--child", "--api", f"model={model}", f"input={source}", f"output={out}"]
        if batch_tokens is not None:
            cmd.append(f"batch_tokens={batch_tokens}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if not last.startswith("rc=0"):
        raise SystemExit(f"parsing {source} failed: {proc.stderr[-2000:]}")
    return proc.returncode, float(last.split("peak_mib=")[1]), seconds


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=None, help="checkpoint (default: an untrained model)")
    ap.add_argument("--sentences", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--token-mb", type=float, default=1.0)
    ap.add_argument("--api", action="store_true", help="parse through nparse.load and Parser.parse_file")
    ap.add_argument("--ewt-train-times", type=int, default=0, help="parse EWT dev and EWT train repeated K times")
    ap.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        help="with --api: this cap on padded tokens per batch (default: the model's)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = args.model
        if model is None:
            from nparse.testing.fuzz import untrained_checkpoint

            model = untrained_checkpoint(read_conllu(DEV), folder)
        print("| input | size (MB) | peak memory (MiB) | seconds |")
        print("|---|---|---|---|")
        if args.ewt_train_times:
            train = DEV.with_name("en_ewt-ud-train.conllu")
            big = folder / "train_times.conllu"
            big_file(big, len(read_conllu(train)) * args.ewt_train_times, train)
            for name, source in (("EWT dev", DEV), (f"EWT train x{args.ewt_train_times}", big)):
                _, peak, seconds = measure(model, source, folder / "out.conllu", args.api, args.batch_tokens)
                size = source.stat().st_size / 1e6
                print(f"| {name} ({len(read_conllu(source)):,} sentences) | {size:.0f} | {peak:.0f} | {seconds:.0f} |")
            return
        for n in args.sentences:
            source = folder / f"big{n}.conllu"
            big_file(source, n)
            _, peak, seconds = measure(model, source, folder / "out.conllu")
            size = source.stat().st_size / 1e6
            print(f"| {n:,} sentences | {size:.0f} | {peak:.0f} | {seconds:.0f} |", flush=True)
            source.unlink()
        source = folder / "token.conllu"
        huge_token_file(source, args.token_mb)
        _, peak, seconds = measure(model, source, folder / "out.conllu")
        print(f"| one {args.token_mb:g} MB token | {source.stat().st_size / 1e6:.1f} | {peak:.0f} | {seconds:.0f} |")


if __name__ == "__main__":
    main()
