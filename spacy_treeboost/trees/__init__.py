"""Documents as labeled ordered trees: the forest arrays, BACT text I/O, and spaCy Docs as trees.

`forest` holds the data structure, `bact` its text format; `doc_trees` turns spaCy Docs into
forests (chains or dependency trees). Nothing here depends on the learners.
"""
from .bact import BactFormatError, decode_label, encode_label, iter_bact, read_bact, tree_to_sexpr, write_bact
from .forest import ROOT_LABEL, ROOT_TEXT, Forest, ForestBuilder, LabelVocab, chain_arrays, preorder_depths

__all__ = [
    "ROOT_LABEL", "ROOT_TEXT", "BactFormatError", "Forest", "ForestBuilder", "LabelVocab", "chain_arrays",
    "decode_label", "encode_label", "iter_bact", "preorder_depths", "read_bact", "tree_to_sexpr", "write_bact",
]
