"""Compiled (numba) kernels on configuration rows: ``<name>.py`` holds a system's transitions,
``<name>_oracle.py`` its oracles (correct sets and costs, the twins of the Python oracles that
training asks), ``rows.py`` the layout of a row, ``gold.py`` a gold tree's fields, and
``dispatch.py`` / ``oracles.py`` choose a system's or an oracle's kernel by code.

This package is the foundation: it imports nothing from the Python systems (``NONE`` lives in
``rows.py``, ``ILLEGAL`` and the gold layout in ``gold.py``; ``systems/base.py`` re-exports
``NONE``), so the reference and the production adapters depend on it, never the reverse.

Every system module declares ``CODE`` (the system's ``code``, which ``dispatch.py`` dispatches on),
its moves (``ACTIONS`` and one constant per move, numbered once here) and
five functions over one row of the state array (``rows.py`` says where each part lives):
``initial(row, off, root_end, n)``, ``terminal(row, off, root_end)``,
``legal(row, off, root_end, out)`` (one flag per action into ``out``), ``positions(row, off,
out)`` (word at every base feature position, NONE where empty) and ``apply(row, off, a)``
(the system's own effect; the step counter is kept by ``adapters/arrays.py``). They mirror the Python
system of the same name, which ``tests/test_arrays.py`` checks in lockstep.
"""
