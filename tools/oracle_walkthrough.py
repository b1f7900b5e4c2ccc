"""Readable move sequences of every system and oracle on one sentence (the docs' worked examples).

    python tools/oracle_walkthrough.py [--system NAME] [--oracle NAME]
    python tools/oracle_walkthrough.py --write docs/worked-sequences.md

The first form prints the sequences (``nparse/systems/verify/walkthrough.py`` says what they show); the
second regenerates them between the walkthrough markers of a docs page, which
``tests/test_docs.py`` checks are current.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nparse.systems.verify.walkthrough import all_walkthroughs, with_walkthroughs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system")
    ap.add_argument("--oracle")
    ap.add_argument("--write", type=Path, help="regenerate the worked sequences of this docs page")
    args = ap.parse_args()
    if args.write:
        args.write.write_text(with_walkthroughs(args.write.read_text(encoding="utf-8")), encoding="utf-8")
        return
    print("\n".join(all_walkthroughs(args.system, args.oracle)))


if __name__ == "__main__":
    main()
