"""How ``release-0.1.0.pt`` and ``release-0.1.0.conllu`` were made: run at the 0.1.0 release
(commit 51a0875, whose ``ParserModel`` took the model options as a dict) from the repository root:

    git worktree add /tmp/nparse-0.1.0 51a0875 && cd /tmp/nparse-0.1.0
    PYTHONPATH=. python /path/to/tests/data/make_release_checkpoint.py /path/to/tests/data

It writes a checkpoint as that release's trainer wrote them (every key of ``checkpoint.MODEL_KEYS``
and the resolved config), of a tiny untrained default model (``+exp=beam_archybrid_imp_maxv``
with small sizes and a temperature), and that release's parse of 30 EWT dev sentences with beam 4.
``tests/test_config.py`` loads both with the current code: the parse must be the same.
"""

import sys
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from nparse import checkpoint, config_schema  # noqa: F401
from nparse.api import Parser
from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs
from nparse.models.parser import ParserModel
from nparse.paths import CONF_DIR, PROJECT_ROOT
from nparse.systems import make_system

SIZES = [
    "model.word_dim=6",
    "model.upos_dim=3",
    "model.char_dim=3",
    "model.char_hidden=3",
    "model.lstm_dim=5",
    "model.hidden=4",
    "model.label_hidden=4",
    "model.completion.factors=[1,2a]",
    "model.completion.hidden=3",
]

out = Path(sys.argv[1])
with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
    cfg = compose(config_name="config", overrides=["+exp=beam_archybrid_imp_maxv", "decoder.beam_size=4", *SIZES])
sents = read_conllu(PROJECT_ROOT / "data/ud/en_ewt/en_ewt-ud-dev.conllu")[:30]
torch.manual_seed(0)
system = OmegaConf.to_container(cfg.system, resolve=True)
options = OmegaConf.to_container(cfg.model, resolve=True)
vocabs = Vocabs.build(sents)
model = ParserModel(vocabs, make_system(**system), options)
state = {
    "config": OmegaConf.to_container(cfg, resolve=True),
    "system": system,
    "model_options": options,
    "vocabs": vocabs.state_dict(),
    "model": model.state_dict(),
    "epoch": 1,
    "step": 1,
    "best_las": 0.0,
    "history": [],
    "calibration": {"temperature": 0.5},
}
checkpoint.save_atomic(state, out / "release-0.1.0.pt")
parser = Parser.load(out / "release-0.1.0.pt", "cpu")
parser.write(parser.parse(sents), out / "release-0.1.0.conllu")
