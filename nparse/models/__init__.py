"""The network: BiLSTM encoder, transition and label scorers, and the parser model joining them."""
