"""Train one preset on several treebanks and seeds, one run after the other, into named folders.

    python experiments/seed_runs.py --exp 2planar_dynamic --name hinge --data el_gdt hu_szeged --seeds 1 2 3
                              [--threads 1] [-- extra Hydra overrides, with {data} and {seed}]

Every run goes to ``runs/<name>/<data>_s<seed>/``. A finished run (its ``metrics.json`` says why
it stopped) is skipped, and an interrupted one goes on from its ``last.pt``
(``trainer.resume=auto``): ``metrics.json`` is written after every epoch, so its presence alone
does not mean the run finished. ``--go-on`` takes finished runs on too, from their ``last.pt``
with the overrides given (``trainer.epochs=100 trainer.final_decay=8`` after a shorter run). The arms of a comparison get the
same command with a different ``--name`` and overrides, which is what ``experiments/seed_table.py``
reads. ``{data}`` and ``{seed}`` in an override are replaced, so fine-tuning arms start from
their own seed's model: ``trainer.init_from=runs/hinge/{data}_s{seed}/best.pt``. Runs are
sequential: the machine has 2 cores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import RUNS, train


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exp", required=True)
    ap.add_argument("--name", required=True, help="the arm: runs/<name>/<data>_s<seed>/")
    ap.add_argument("--data", nargs="+", default=["el_gdt", "hu_szeged"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--threads", type=int, default=0, help="trainer.threads (1 if anything else runs)")
    ap.add_argument(
        "--go-on",
        action="store_true",
        help="finished runs go on too, from their last.pt with the overrides (more epochs, a final phase)",
    )
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides (after --)")
    args = ap.parse_args()
    for data in args.data:
        for seed in args.seeds:
            run = RUNS / args.name / f"{data}_s{seed}"
            if finished(run) and not args.go_on:
                print(f"done already: {run}", flush=True)
                continue
            train(
                f"+exp={args.exp}", f"data={data}", f"trainer.seed={seed}", f"trainer.threads={args.threads}",
                f"hydra.run.dir={run}", "trainer.resume=auto", *(o.format(data=data, seed=seed) for o in args.overrides),
            )  # fmt: skip


def finished(run: Path) -> bool:
    """Whether a run ended: ``stopped`` (and ``test``, where there is a test set; runs from
    before ``stopped`` have only that) come with the run's last metrics, not with each epoch's."""
    metrics = run / "metrics.json"
    return metrics.is_file() and not {"stopped", "test"}.isdisjoint(json.loads(metrics.read_text()))


if __name__ == "__main__":
    main()
