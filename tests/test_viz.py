"""Trees as pictures: one arc per word with its label, crossing arcs marked, gold over predicted
with the errors coloured, and a page of every parsed sentence from the parse CLI."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from html import escape

import pytest

from nparse import parse as parse_cli
from nparse.testing.fuzz import untrained_checkpoint
from nparse.io.conllu import read_conllu, write_conllu
from nparse.trees import is_projective
from nparse.viz.svg import COLOURS, compare_svg, crossing_arcs, levels, tree_arcs, tree_svg

from .conftest import EWT_DEV

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

NS = "{http://www.w3.org/2000/svg}"


def dev(n: int = 300):
    return read_conllu(EWT_DEV)[:n]


def test_a_tree_has_an_arc_and_a_label_per_word_and_dashes_only_crossing_arcs():
    sents = dev(600)
    crossing = next(s for s in sents if not is_projective(s.heads))
    for sent in (sents[0], crossing):
        svg = tree_svg(sent.forms, sent.heads, sent.deprels, sent.upos)
        root = ET.fromstring(svg)  # well-formed XML
        paths = [p for p in root.iter(f"{NS}path") if p.get("fill") == "none"]
        assert len(paths) == len(sent)  # one curve (or the root's arrow) per word
        labels = [t.text for t in root.iter(f"{NS}text") if t.get("class") == "l"]
        assert sorted(labels) == sorted(sent.deprels[1:])
        dashed = sum(p.get("stroke-dasharray") is not None for p in paths)
        assert dashed == len(crossing_arcs(sent.heads)) and (dashed > 0) == (sent is crossing)


def test_nested_arcs_are_higher_than_the_arcs_inside_them():
    heads = [-1, 2, 0, 4, 2, 2]  # She saw her ducks today
    level = levels(tree_arcs(heads, ["_", "nsubj", "root", "nmod", "obj", "obl"]))
    assert level[1] == level[3] == 1 and level[4] == 2 and level[5] == 3


def test_gold_over_predicted_marks_wrong_heads_and_labels():
    sent = dev(5)[2]
    heads, labels = list(sent.heads), list(sent.deprels)
    heads[1] = 3 if sent.heads[1] != 3 else 2
    labels[2] = "xcomp" if labels[2] != "xcomp" else "obj"
    svg = compare_svg(sent.forms, sent.heads, sent.deprels, heads, labels, sent.upos)
    ET.fromstring(svg)
    assert svg.count(f'stroke="{COLOURS["wrong_head"]}"') == 1 + (heads[2] != sent.heads[2])
    assert f'stroke="{COLOURS["wrong_label"]}"' in svg and 'class="w bad"' in svg


def test_a_sentence_shows_itself_in_jupyter():
    sent = dev(1)[0]
    assert sent._repr_svg_().startswith("<svg") and "nparse-scroll" in sent._repr_html_()


def test_the_parse_cli_writes_an_html_page_of_trees(tmp_path, capsys):
    model = untrained_checkpoint(dev(100), tmp_path)
    source = tmp_path / "in.conllu"
    sents = dev(12)
    write_conllu(sents, source)
    out = tmp_path / "trees.html"
    assert parse_cli.main([f"model={model}", f"input={source}", f"output={out}", "device=cpu"]) == 0, (
        capsys.readouterr().err
    )
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert page.count("<figure>") == 12 and page.count("<svg") == 12 and "<script" not in page
    assert sents[0].name in page
    forced = tmp_path / "trees.txt"
    assert parse_cli.main([f"model={model}", f"input={source}", f"output={forced}", "output_format=html"]) == 0
    assert forced.read_text(encoding="utf-8").count("<svg") == 12
    assert parse_cli.main([f"model={model}", f"input={source}", f"output={forced}", "output_format=pdf"]) == 1
    assert "output_format=pdf" in capsys.readouterr().err


def test_hovering_over_a_word_shows_its_lemma_xpos_and_features():
    """Each word of a sentence with an analysis carries a <title> (the browser's hover text) with
    its lemma, XPOS and features; a sentence without any has none."""
    sent = dev(1)[0]
    svg = sent.svg()
    k = next(i for i in range(1, len(sent) + 1) if sent.feats[i] != "_")
    note = f"lemma {sent.lemmas[k]} · XPOS {sent.xpos[k]} · {sent.feats[k]}"
    assert f">{escape(sent.forms[k])}<title>{escape(note)}</title></text>" in svg
    assert svg.count("<title>lemma ") == len(sent)
    bare = read_conllu(io.StringIO("1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n\n"))[0]
    assert "<title>lemma" not in bare.svg()
