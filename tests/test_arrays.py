"""The compiled array configurations run in lockstep with the Python systems they mirror."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nparse.systems import NONE, SYSTEMS, make_system
from nparse.systems.adapters.arrays import Layout
from nparse.systems.base import _all_slots

# Every registered system, with each root placement it supports.
VARIANTS = [(name, {"root": root} if len(cls.roots) > 1 else {}) for name, cls in SYSTEMS.items() for root in cls.roots]


def same_config(a, b) -> bool:
    return all(getattr(a, s) == getattr(b, s) for s in _all_slots(type(a)))


@pytest.mark.parametrize("name,options", VARIANTS, ids=[f"{n}-{o.get('root', '')}" for n, o in VARIANTS])
@pytest.mark.parametrize("modifiers", [False, True])
def test_rows_follow_the_python_system(name, options, modifiers):
    """Random walks: legal, terminal, features and the configuration agree at every step (and
    ``from_config`` gives the row back); a batch of sentences of different lengths is driven at
    once, branching by gather."""
    system = make_system(name, modifiers=modifiers, **options)
    rng = random.Random(7)
    for _ in range(15):
        lengths = [rng.randint(1, 12) for _ in range(6)]
        width = max(lengths) + 1
        layout = Layout(system, width)
        states = layout.initial(np.array(lengths))
        configs = [system.initial(n) for n in lengths]
        offsets = np.arange(len(lengths)) * width
        empty = len(lengths) * width
        for _ in range(10 * (width + 1) ** 2):
            rows, legal, done = layout.inspect(states, offsets, empty)
            for i, c in enumerate(configs):
                assert same_config(layout.to_config(states, i), c), (i, c, layout.to_config(states, i))
                assert same_config(layout.to_config(layout.from_config(c)[None], 0), c)  # and back
                assert bool(done[i]) == system.terminal(c)
                if done[i]:
                    continue
                assert legal[i].tolist() == system.legal(c)
                want = [empty if w == NONE else offsets[i] + w for w in system.features(c)]
                assert rows[i].tolist() == want
            if done.all():
                break
            # Branch: every item is replaced by a copy of a random live one, then moves on.
            live = [i for i in range(len(configs)) if not done[i]]
            parents = np.array([i if not done[i] else rng.choice(live) for i in range(len(configs))])
            states, offsets = states[parents], offsets[parents]
            configs = [configs[p].copy() for p in parents]
            actions = []
            for i, c in enumerate(configs):
                if system.terminal(c):
                    actions.append(-1)
                    continue
                a = rng.choice([a for a, ok in enumerate(system.legal(c)) if ok])
                system.apply(c, a)
                actions.append(a)
            layout.apply(states, np.array(actions))
        assert done.all()
