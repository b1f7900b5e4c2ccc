"""Decoding: turning scores into transition sequences for whole batches."""
