"""Checkpoints: one file holds everything needed to parse (weights, config, vocabularies, system).

Writes are atomic: the file is written next to its destination, flushed to disk and renamed
over it, so a kill during saving leaves the previous checkpoint intact. Reads accept tensors and
plain data only (``weights_only=True``): a crafted file cannot run code through ``nparse.load``,
``python -m nparse.parse`` or ``trainer.resume``/``init_from``.
"""

from __future__ import annotations

import os
import pickle
import zipfile
import tempfile
from pathlib import Path
from typing import Any, Sequence

import torch

from .config import Config, model_config
from .io.data import Vocabs
from .models.parser import ParserModel
from .paths import PROJECT_ROOT
from .systems import make_system

FORMAT = 1
# What parsing needs, and what resuming needs on top (a last.pt; best.pt has no optimizer state).
MODEL_KEYS = ("config", "model", "model_options", "system", "vocabs")
RESUME_KEYS = ("optimizer", "rng", "epoch", "best_las", "history", "step")


def save_atomic(state: dict[str, Any], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save({"format": FORMAT, **state}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(path: str | Path, device: str | torch.device = "cpu", resume: bool = False) -> dict[str, Any]:
    """The checkpoint's state, checked to hold what parsing (``resume``: and resuming) needs."""
    path = Path(path).expanduser()
    if path.is_dir():
        best = " (a run's folder? give its best.pt)" if (path / "best.pt").is_file() else ""
        raise IsADirectoryError(f"checkpoint {path} is a folder, not a file{best}")
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    if not zipfile.is_zipfile(path):  # what torch.save writes; a CoNLL-U or text file is not one
        raise ValueError(
            f"{path}: not an nparse checkpoint (not a file torch.save wrote), or one cut short (an interrupted copy?)"
        )
    try:  # tensors and plain data only: unpickling arbitrary objects could run code
        state = torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError as err:
        raise ValueError(
            f"{path}: refused: it holds Python objects other than tensors and plain data, which could "
            "run code when loaded; nparse checkpoints never do, so this file was not written by nparse "
            f"or was tampered with ({str(err).splitlines()[0]})"
        ) from err
    except Exception as err:  # torch raises several types for damaged files
        raise ValueError(f"{path}: not a readable nparse checkpoint ({err})") from err
    if not isinstance(state, dict):
        raise ValueError(f"{path}: not an nparse checkpoint (it holds a {type(state).__name__}, not a dict)")
    if state.get("format") != FORMAT:
        raise ValueError(f"{path}: not an nparse checkpoint (format {state.get('format')!r}, expected {FORMAT})")
    need = MODEL_KEYS + (RESUME_KEYS if resume else ())
    missing = [k for k in need if k not in state]
    if missing:
        if resume and "optimizer" in missing and not set(missing) & set(MODEL_KEYS):
            raise ValueError(f"{path}: holds no optimizer state (a best.pt?); resume from the run's last.pt")
        what = "a resumable nparse checkpoint" if resume else "a complete nparse checkpoint"
        raise ValueError(f"{path}: not {what}: missing {', '.join(missing)}")
    if not isinstance(state["model"], dict) or not isinstance(state["config"], dict):
        raise ValueError(f"{path}: damaged nparse checkpoint: 'model' and 'config' must be dicts")
    return state


def config_from_state(state: dict, path: str | Path | None = None) -> Config:
    """The typed config a checkpoint was trained with (``config.upgrade_config`` fills what older
    releases did not save); a config that does not convert is refused with the file named."""
    try:
        return Config.from_dict(state["config"])
    except ValueError as err:
        where = f"{path}: " if path else ""
        raise ValueError(f"{where}damaged or incompatible nparse checkpoint ({err})") from err


def model_from_state(state: dict, device: torch.device, path: str | Path | None = None) -> ParserModel:
    try:
        vocabs = Vocabs.from_state(state["vocabs"])
        system = make_system(**state["system"])
        model = ParserModel(vocabs, system, model_config(state["model_options"]))
        model.load_state_dict(state["model"])
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as err:
        where = f"{path}: " if path else ""
        raise ValueError(f"{where}damaged or incompatible nparse checkpoint ({error_summary(err)})") from err
    return model.to(device).eval()


def error_summary(err: BaseException, most: int = 3) -> str:
    """An error's lines on one line: torch's state-dict errors put the weights that differ (their
    names and shapes) on the lines after the first, and they are what a user needs to see."""
    lines = [cut(line.strip()) for line in str(err).splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    rest = lines[1 : 1 + most]
    more = f"; and {len(lines) - 1 - most} more" if len(lines) - 1 > most else ""
    return lines[0] + (" " + "; ".join(rest) + more if rest else "")


def cut(line: str, most: int = 200) -> str:
    """A line shortened to ``most`` characters (torch lists every missing weight on one line)."""
    return line if len(line) <= most else line[: most - 3] + "..."


def attach_segmenter(path: str | Path, model: bytes) -> None:
    """Store a trained segmenter (``io/segmenter.py``) in a checkpoint, as a uint8 tensor (reads
    take tensors and plain data only)."""
    state = load(path)
    state["segmenter"] = torch.frombuffer(bytearray(model), dtype=torch.uint8)
    save_atomic(state, path)


def checkpoint_paths(path: str | Path | Sequence[str | Path]) -> list[str | Path]:
    """The checkpoints named: one path, a list, or paths joined by commas (an existing file whose
    name has a comma is one path)."""
    if isinstance(path, Path) or (isinstance(path, str) and ("," not in path or Path(path).exists())):
        return [path]
    items = path.split(",") if isinstance(path, str) else list(path)
    if not items or any(not str(p).strip() for p in items):
        raise ValueError(f"{path!r}: an empty checkpoint path; join several with commas: ck1.pt,ck2.pt")
    items = [os.path.expanduser(p.strip()) if isinstance(p, str) else p for p in items]
    if isinstance(path, str):  # where a comma was in a file's name, say so (as resolve_path looks)
        missing = next((p for p in items if not (Path(p).exists() or (PROJECT_ROOT / p).exists())), None)
        if missing is not None:
            raise FileNotFoundError(
                f"checkpoint not found: {missing} (model={path} was split at its commas into "
                f"{len(items)} checkpoints; a path holding a comma can only be loaded alone, or "
                "in a list: nparse.load([...]))"
            )
    return items
