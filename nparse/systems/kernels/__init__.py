"""Compiled (numba) transition kernels, one module per system, on configuration rows.

Every module declares ``CODE`` (the system's ``code``, which ``arrays.py`` dispatches on) and
five functions over one row of the state array (``rows.py`` says where each part lives):
``initial(row, off, root_end, n)``, ``terminal(row, off, root_end)``,
``legal(row, off, root_end, out)`` (one flag per action into ``out``), ``positions(row, off,
out)`` (word at every base feature position, NONE where empty) and ``apply(row, off, a)``
(the system's own effect; the step counter is kept by ``arrays.py``). They mirror the Python
system of the same name, which ``tests/test_arrays.py`` checks in lockstep.
"""
