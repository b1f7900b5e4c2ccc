"""Fuzz the input side: mutated real sentences through the reader, the parser, evaluate and training.

    python tools/fuzz_conllu.py [--count N] [--seed S] [--classes a,b,...] [--timeout T] [--json]

The mutation classes and the checks of every outcome are in ``nparse/testing/fuzz.py`` (its docstring
says what counts as a valid result and as a located error). Prints one row per class and the
failures with their input; the exit status is 1 when any case failed or hung.
"""

from __future__ import annotations

import argparse
import json
import sys

from nparse.testing.fuzz import CLASSES, fuzz, print_table


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=1000, help="number of cases")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--classes", default="", help="comma-separated classes (default: all)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per consumer and case")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    result = fuzz(args.count, args.seed, args.classes.split(",") if args.classes else list(CLASSES), args.timeout)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
