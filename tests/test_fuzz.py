"""Issue 10, fuzzing: a few hundred mutated real sentences (every class of nparse/testing/fuzz.py)
through the reader, the API, the parse CLI, evaluate and the training loader; each outcome must
be a checked valid result or an error located at file:line, never another exception or a hang."""

from __future__ import annotations

import pytest

from nparse.testing import fuzz


@pytest.mark.slow
def test_fuzzed_inputs_give_valid_results_or_located_errors():
    classes = list(fuzz.CLASSES)
    result = fuzz.fuzz(count=12 * len(classes), seed=7, classes=classes, timeout=60, progress=False)
    assert result["failures"] == [], result["failures"][:3]
    assert set(result["table"]) == set(classes)
    for name, row in result["table"].items():
        assert row["cases"] == 12
        for consumer in ("reader", "api", "cli", "evaluate", "train"):
            assert row.get(f"{consumer} ok", 0) + row.get(f"{consumer} error", 0) == 12, (name, consumer)
    # The mutations do reach both outcomes: errors where the input is broken, results where not.
    total = {k: sum(row.get(k, 0) for row in result["table"].values()) for k in ("api ok", "api error")}
    assert total["api ok"] > 20 and total["api error"] > 20


def test_utf16_input_gets_a_hint(tmp_path):
    import pytest

    from nparse.io.conllu import CoNLLUError, read_conllu

    path = tmp_path / "utf16.conllu"
    path.write_bytes("1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n".encode("utf-16"))
    with pytest.raises(CoNLLUError, match=r"utf16.conllu:1: invalid UTF-8.*UTF-16"):
        read_conllu(path)
