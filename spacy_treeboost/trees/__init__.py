"""Documents as labeled ordered trees: forest arrays (`forest`), the BACT text format (`bact`), Docs (`doc_trees`)."""
from .bact import BactFormatError, decode_label, encode_label, iter_bact, read_bact, tree_to_sexpr, write_bact
from .forest import ROOT_LABEL, ROOT_TEXT, Forest, ForestBuilder, LabelVocab, preorder_depths

__all__ = [
    "ROOT_LABEL", "ROOT_TEXT", "BactFormatError", "Forest", "ForestBuilder", "LabelVocab", "decode_label",
    "encode_label", "iter_bact", "preorder_depths", "read_bact", "tree_to_sexpr", "write_bact",
]
