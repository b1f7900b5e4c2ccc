"""The production adapters: what training and decoding run on. ``arrays.Layout`` keeps parser
states as rows of one array and drives the compiled kernels over them, ``row_oracle.RowOracle``
asks an oracle's compiled twin about rows, ``factors`` counts the completion model's factors on
rows. They read the Python systems only for their declarations (codes, moves, row blocks)."""
