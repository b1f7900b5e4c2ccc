"""The temperature of local beam scores: fitted by likelihood, saved with the model."""

from __future__ import annotations

import numpy as np

from nparse.training.calibration import fit_temperature, nll


def test_fit_recovers_the_temperature_the_data_was_drawn_with():
    """Scores z with the correct transition drawn from softmax(z / T0): the fit finds T0."""
    rng = np.random.default_rng(1)
    for t0 in (0.4, 1.0, 2.5):
        scores = rng.normal(size=(20000, 5)) * 2
        legal = np.ones_like(scores, dtype=bool)
        legal[:, 4] = rng.random(20000) < 0.5
        z = np.where(legal, scores / t0, -np.inf)
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        pick = (p.cumsum(1) > rng.random((20000, 1))).argmax(1)
        correct = np.zeros_like(legal)
        correct[np.arange(20000), pick] = True
        t = fit_temperature(scores, legal, correct)
        assert abs(t - t0) / t0 < 0.08, (t, t0)
        assert nll(scores, legal, correct, t) <= nll(scores, legal, correct, 1.0) + 1e-9


def test_several_correct_transitions_count_as_one_event():
    scores = np.array([[2.0, 2.0, 0.0]])
    legal = np.ones((1, 3), dtype=bool)
    correct = np.array([[True, True, False]])
    want = -np.log(2 * np.exp(2.0) / (2 * np.exp(2.0) + 1))
    assert np.isclose(nll(scores, legal, correct, 1.0), want)
