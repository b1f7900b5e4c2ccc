"""Train several presets on several treebanks, one after the other, and print the results table.

    python experiments/run_experiments.py [--exps 2planar_static 2planar_dynamic ...]
                                    [--data el_gdt hu_szeged en_ewt] [--epochs 15] [--seed 1]
                                    [-- extra Hydra overrides]

Runs go to runs/<exp>/<date>_<time>/ as usual (never two at once: the machine has 2 cores);
the table at the end comes from experiments/results_table.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from common import ROOT, stamped_run, train

DEFAULT_EXPS = ["2planar_static", "2planar_dynamic", "archybrid_swap", "swapstd_lazy", "swapstd_ndall"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exps", nargs="+", default=DEFAULT_EXPS)
    ap.add_argument("--data", nargs="+", default=["el_gdt", "hu_szeged", "en_ewt"])
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides (after --)")
    args = ap.parse_args()
    done = []
    for data in args.data:
        for exp in args.exps:
            run_dir = stamped_run(exp, data)
            train(
                f"+exp={exp}", f"data={data}", f"trainer.epochs={args.epochs}", f"trainer.seed={args.seed}",
                f"hydra.run.dir={run_dir}", *args.overrides,
            )  # fmt: skip
            best = json.loads((run_dir / "metrics.json").read_text()).get("best") or {}
            print(f"  -> dev LAS {best.get('dev_las', 0):.2f} ({run_dir})", flush=True)
            done.append(run_dir)
    subprocess.run([sys.executable, str(ROOT / "experiments" / "results_table.py"), *map(str, done)], check=True)


if __name__ == "__main__":
    main()
