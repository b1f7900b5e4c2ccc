"""Training: the trainer (epochs, evaluation, checkpoints) and the greedy training loop and loss."""
