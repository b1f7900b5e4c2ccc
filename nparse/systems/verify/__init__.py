"""The verification tools: exhaustive search over a system's derivations (``search``; the exact
reference losses some oracles use as their own ``costs``), how each oracle is checked against
it (``verification``), and the worked sequences of the docs (``walkthrough``). The beam check of
global training is ``training/beam_check.py``: it runs the global search, which systems/ does
not import."""
