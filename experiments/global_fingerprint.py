"""A fingerprint of global training's search: for 192 settings (6 system/oracle pairs x early,
max-violation and full updates x restart from the positive or the negative x margin and softmax
losses x raw and local scores x both positives) on 30 EWT dev sentences with an untrained model,
the MD5 of the search's record (rows, nodes, updates, statistics) and the loss, as JSON. Run it
from two checkouts and compare the outputs (docs/experiments/layers-refactor.md):

    python experiments/global_fingerprint.py > new.json
    (cd OLD && PYTHONPATH=$PWD python experiments/global_fingerprint.py) > old.json && cmp old.json new.json
"""

import hashlib
import itertools
import json
import sys

import numpy as np

sys.path.insert(0, ".")  # the tests' random model and dev sentences, from the checkout run in
from nparse.io.data import collate, encode  # noqa: E402
from nparse.systems import make_oracle, make_system  # noqa: E402

try:
    from nparse.systems.adapters.arrays import Layout
except ImportError:  # a checkout from before the files moved (33e87ae)
    from nparse.systems.arrays import Layout  # type: ignore[no-redef]
from nparse.training.global_loop import GlobalSearch, GlobalSettings  # noqa: E402
from nparse.training.losses import global_loss  # noqa: E402
from tests.test_beam import dev_sentences, random_model  # noqa: E402


PAIRS = [("archybrid", "dynamic"), ("arceager", "dynamic"), ("twoplanar", "dynamic"), ("swapstandard", "lazy"),
         ("archybrid", "static"), ("covington", "dynamic")]  # fmt: skip


def main() -> None:
    out = {}
    for name, oname in PAIRS:
        system = make_system(name)
        oracle = make_oracle(system, oname)
        sents = dev_sentences()[:30]
        model = random_model(system, sents, seed=1)
        examples = [encode(s, model.vocabs) for s in sents]
        for e, s in zip(examples, sents):
            e.gold = oracle.prepare(s.heads)
        examples = [e for e in examples if e.gold is not None]
        batch = collate(examples)
        table = model.scorer.table(model.encoder(batch))
        froms = ["positive", "negative"] if oracle.complete else ["positive"]
        for update, restart, rfrom, loss, scores, pos in itertools.product(
            ["early", "max_violation", "full"],
            [False, True],
            froms,
            ["margin", "softmax"],
            ["raw", "local"],
            ["prefix", "best"],
        ):
            if restart and (not oracle.complete or update == "full"):
                continue
            if not restart and rfrom == "negative":
                continue
            if update != "max_violation" and pos == "best":
                continue
            settings = GlobalSettings(4, update, loss, restart, rfrom, scores, pos)
            search = GlobalSearch(
                Layout(system, batch.width),
                oracle,
                model.scorer,
                table.detach(),
                [e.gold for e in examples],
                [len(e) for e in examples],
                settings,
            )
            rec = search.run()
            loss_value = global_loss(model.scorer, table, rec, loss)
            h = hashlib.md5()
            for a in (rec.rows, rec.parent, rec.row, rec.action):
                h.update(np.ascontiguousarray(a).tobytes())
            h.update(repr([(u.pos, u.neg, u.beam, u.violation) for u in rec.updates]).encode())
            h.update(
                repr((rec.violations, rec.reached_end, rec.covered, rec.stuck, sorted(rec.actions.items()))).encode()
            )
            if rec.legal is not None:
                h.update(rec.legal.tobytes())
            out[f"{name}-{oname}-{update}-{restart}-{rfrom}-{loss}-{scores}-{pos}"] = (
                h.hexdigest()[:12],
                round(float(loss_value.detach()), 6),
            )
    json.dump(out, sys.stdout, indent=0)


if __name__ == "__main__":
    main()
