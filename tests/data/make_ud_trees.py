"""Write tests/data/ud_trees.tsv: the gold trees (heads only, no words) of UD Greek-GDT dev and of
the non-projective sentences of UD Hungarian-Szeged dev, for the oracle checks on real trees
(tests/test_row_oracles.py); UD English-EWT is bundled whole in data/ud/.

    python tests/data/make_ud_trees.py ../shared/data/ud

Both treebanks are CC BY-NC-SA 3.0 (UD_Greek-GDT: Prokopidis & Papageorgiou; UD_Hungarian-Szeged:
Vincze et al.); the file keeps their sentence ids.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nparse.io.conllu import read_conllu
from nparse.trees import is_projective


def main(root: Path) -> None:
    lines = ["# treebank\tsent_id\theads of words 1..n (UD dev sets; CC BY-NC-SA 3.0; see make_ud_trees.py)"]
    for code, nonprojective_only in (("el_gdt", False), ("hu_szeged", True)):
        for k, s in enumerate(read_conllu(root / code / f"{code}-ud-dev.conllu")):
            heads = list(s.heads)
            if nonprojective_only and is_projective(heads):
                continue
            lines.append(f"{code}\t{s.sent_id or k + 1}\t{' '.join(map(str, heads[1:]))}")
    Path(__file__).with_name("ud_trees.tsv").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
