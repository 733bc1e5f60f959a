"""Documents as labeled ordered trees: the forest arrays, BACT text I/O, and spaCy Docs as trees.

`forest` holds the data structure and the BACT format; `doc_trees` turns spaCy Docs into
forests (chains or dependency trees). Nothing here depends on the learners.
"""
from .forest import (
    ROOT_LABEL,
    ROOT_TEXT,
    BactFormatError,
    Forest,
    ForestBuilder,
    LabelVocab,
    chain_arrays,
    decode_label,
    encode_label,
    iter_bact,
    preorder_depths,
    read_bact,
    tree_to_sexpr,
    write_bact,
)

__all__ = [
    "ROOT_LABEL", "ROOT_TEXT", "BactFormatError", "Forest", "ForestBuilder", "LabelVocab", "chain_arrays",
    "decode_label", "encode_label", "iter_bact", "preorder_depths", "read_bact", "tree_to_sexpr", "write_bact",
]
