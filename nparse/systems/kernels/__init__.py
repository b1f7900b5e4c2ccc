"""Compiled (numba) kernels on configuration rows: ``<name>.py`` holds a system's transitions,
``<name>_oracle.py`` its oracle's compiled costs where the oracle has them (2-Planar, Covington,
SwapStandard), and ``rows.py`` the layout of a row.

Every system module declares ``CODE`` (the system's ``code``, which ``arrays.py`` dispatches on) and
five functions over one row of the state array (``rows.py`` says where each part lives):
``initial(row, off, root_end, n)``, ``terminal(row, off, root_end)``,
``legal(row, off, root_end, out)`` (one flag per action into ``out``), ``positions(row, off,
out)`` (word at every base feature position, NONE where empty) and ``apply(row, off, a)``
(the system's own effect; the step counter is kept by ``arrays.py``). They mirror the Python
system of the same name, which ``tests/test_arrays.py`` checks in lockstep.
"""
