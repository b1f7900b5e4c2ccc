"""The compiled oracle alone: microseconds per configuration along explored walks of EWT train.

    python experiments/oracle_speed.py SYSTEM ORACLE [--sentences 3000] [--explore 0.1]

Walks the first N training sentences in batches of 32 as rows, taking a random correct transition
or, with probability ``--explore``, a random legal one, and times only the oracle's calls
(``RowOracle.ask``: legal moves, costs and correct sets of every live row). The first pass fills
numba's cache; the second is reported.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from nparse.io.conllu import read_conllu
from nparse.paths import PROJECT_ROOT
from nparse.systems import make_oracle, make_system
from nparse.systems.adapters.arrays import Layout
from nparse.systems.kernels.dispatch import apply_one
from nparse.systems.adapters.row_oracle import RowOracle

EWT_TRAIN = PROJECT_ROOT / "data" / "ud" / "en_ewt" / "en_ewt-ud-train.conllu"


def walk(system, oracle, golds, explore: float, seed: int) -> tuple[float, int]:
    """Seconds in the oracle and configurations asked, over one walk of every sentence."""
    rng = np.random.default_rng(seed)
    seconds, configurations = 0.0, 0
    for b in range(0, len(golds), 32):
        batch = golds[b : b + 32]
        lengths = np.array([g.n for g in batch])
        layout = Layout(system, int(lengths.max()) + 1)
        states = layout.initial(lengths)
        rows = RowOracle(oracle, batch)
        sent = np.arange(len(batch))
        live = np.flatnonzero(~layout.inspect(states, sent * layout.width, 0)[2])
        while len(live):
            start = time.perf_counter()
            legal, _, correct = rows.ask(layout, states, live, sent)
            seconds += time.perf_counter() - start
            configurations += len(live)
            for k, i in enumerate(live.tolist()):
                options = np.flatnonzero(legal[k]) if rng.random() < explore else np.flatnonzero(correct[k])
                apply_one(states[i], layout.offsets, layout.code, int(rng.choice(options)))
            live = np.flatnonzero(~layout.inspect(states, sent * layout.width, 0)[2])
    return seconds, configurations


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("system")
    ap.add_argument("oracle")
    ap.add_argument("--sentences", type=int, default=3000)
    ap.add_argument("--explore", type=float, default=0.1)
    args = ap.parse_args()
    system = make_system(args.system)
    oracle = make_oracle(system, args.oracle)
    sents = read_conllu(EWT_TRAIN)[: args.sentences]
    golds = [g for g in (oracle.prepare(list(s.heads)) for s in sents) if g is not None]
    walk(system, oracle, golds, args.explore, 1)  # numba's cache
    seconds, configurations = walk(system, oracle, golds, args.explore, 1)
    print(f"{args.system} {args.oracle}: {configurations} configurations, oracle {seconds:.3f} s, "
          f"{seconds / configurations * 1e6:.2f} us per configuration")  # fmt: skip


if __name__ == "__main__":
    main()
