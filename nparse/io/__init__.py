"""Input and output: CoNLL-U and plain text, vocabularies, sentences as index batches."""
