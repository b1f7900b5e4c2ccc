"""nparse.eval.significance: the paired bootstrap finds a real difference and not a null one."""

from __future__ import annotations

import numpy as np

from nparse.eval import significance


def test_paired_bootstrap_separates_a_real_gain_from_noise():
    rng = np.random.default_rng(0)
    words = rng.integers(5, 30, size=2000)
    a = rng.binomial(words, 0.80)
    better = np.minimum(words, a + rng.binomial(words, 0.05))  # B fixes about 5% more words
    _, _, delta, p = significance.paired_bootstrap(a, better, words, 2000, seed=1)
    assert delta > 3 and p < 0.01
    noise = np.minimum(words, np.where(rng.random(len(a)) < 0.5, a + 1, np.maximum(a - 1, 0)))
    _, _, delta, p = significance.paired_bootstrap(a, noise, words, 2000, seed=1)
    assert abs(delta) < 0.5 and p > 0.05
