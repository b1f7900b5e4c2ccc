"""Test support, kept out of the parser's own modules: the input fuzzer and its fixtures
(``fuzz.py``: mutated real sentences, an untrained checkpoint), used by ``tests/``, ``tools/``
and ``experiments/``; nothing in nparse imports it."""
