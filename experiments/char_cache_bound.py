"""The most a character cache can speed up greedy parsing: the same text parsed with a cold
cache and with every form already cached (a second pass), alternating.

    python experiments/char_cache_bound.py [--model runs/ewt_quick/best.pt] [--repeats 3] [--threads 1]

Parses EWT dev + test greedily. Prints tokens/s of each pass; their ratio bounds any gain from
caching character vectors (``model.char_cache``, ``models/encoder.py``) on this model.
"""

from __future__ import annotations

import argparse
import statistics
import time

from nparse.api import Parser
from nparse.io.conllu import read_conllu
from nparse.paths import PROJECT_ROOT


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="runs/ewt_quick/best.pt")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    parser = Parser.load(args.model, "cpu", threads=args.threads)
    cache = parser.model.encoder.char_cache
    if cache is None:
        raise SystemExit(f"error: {args.model}: the model has no character cache (model.char_cache=0 or no char model)")
    folder = PROJECT_ROOT / "data" / "ud" / "en_ewt"
    sents = read_conllu(folder / "en_ewt-ud-dev.conllu") + read_conllu(folder / "en_ewt-ud-test.conllu")
    tokens = sum(len(s) for s in sents)
    parser.parse_nbest(sents[:100], beam_size=1)  # warm-up
    speeds: dict[str, list[float]] = {"cold": [], "warm": []}
    for _ in range(args.repeats):
        for mode in speeds:
            cache.clear()
            if mode == "warm":
                parser.parse_nbest(sents, beam_size=1)  # fills the cache with every form
            start = time.perf_counter()
            parser.parse_nbest(sents, beam_size=1)
            speeds[mode].append(tokens / (time.perf_counter() - start))
    for mode, values in speeds.items():
        print(f"{mode}: " + ", ".join(f"{v:,.0f}" for v in values) + " tokens/s")
    cold, warm = statistics.median(speeds["cold"]), statistics.median(speeds["warm"])
    print(f"every form cached: {warm / cold - 1:+.1%} on the medians ({len(cache.rows):,} forms)")


if __name__ == "__main__":
    main()
