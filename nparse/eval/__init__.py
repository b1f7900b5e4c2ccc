"""Scoring parses against gold: UAS/LAS on gold tokens (``scores``), and tokens, sentences,
words, UPOS, UAS, LAS F1 on a prediction with its own tokenization (``aligned``)."""

from .aligned import aligned_scores
from .scores import Scores, score, score_files

__all__ = ["Scores", "aligned_scores", "score", "score_files"]
