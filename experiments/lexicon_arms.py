"""The training lexicon's effect on trained ``_ud`` models: every seed of an arm parses its
treebank's test file in fp32 twice, with lemma rules only and with the lexicon its training file
holds (``Vocabs.lexicon``: what a model trained now holds, since the lexicon does not change
training), into two arm folders that ``experiments/ud_table.py`` compares.

    python experiments/lexicon_arms.py --data el_gdt --arm runs/ud_el --out runs/lexicon_el
    python experiments/ud_table.py --data el_gdt --arms rules=runs/lexicon_el/rules lexicon=runs/lexicon_el/lexicon --test lemmas blex

With ``--raw``, a run whose checkpoint has a segmenter (``python -m nparse.segmenter ... attach=``)
also parses the test file's raw text (``format=raw``) into ``test.raw.conllu`` beside, for
``python -m nparse.evaluate gold=TEST pred=.../test.raw.conllu``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import split_path, treebank

import nparse
from nparse.io.conllu import read_conllu
from nparse.io.data import lemma_lexicon
from nparse.io.rawtext import text_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--arm", type=Path, required=True, help="a folder of runs <data>_s<seed>")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--raw", action="store_true", help="also parse the test file's raw text (runs with a segmenter)")
    args = ap.parse_args()
    files = treebank(args.data)
    train = read_conllu(split_path(files, "train"))
    test = read_conllu(split_path(files, "test"))
    for run in sorted(args.arm.glob(f"{args.data}_s*")):
        parser = nparse.load(run / "best.pt", device="cpu", threads=1, precision="fp32")
        for arm, lexicon in (("rules", {}), ("lexicon", lemma_lexicon(train, parser.model.vocabs.lemma_max_added))):
            parser.model.vocabs.lexicon = lexicon
            out = args.out / arm / run.name / "test.pred.conllu"
            out.parent.mkdir(parents=True, exist_ok=True)
            with open(out, "w", encoding="utf-8") as f:
                parser.write(parser.parse(test), f)
            print(out, len(lexicon), "lexicon entries", flush=True)
            if args.raw and parser.segmenter_state is not None:
                raw = out.with_name("test.raw.conllu")
                with open(raw, "w", encoding="utf-8") as f:
                    parser.write(parser.parse(text_of(test), fmt="raw"), f)
                print(raw, flush=True)


if __name__ == "__main__":
    main()
