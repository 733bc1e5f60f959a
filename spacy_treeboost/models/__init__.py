"""Fitted models: rules over subtree patterns (`rules`, `rule_tables`), matched by `_match`, explained by `explain`."""
from .rules import ModelFormatError, RuleSet

__all__ = ["ModelFormatError", "RuleSet"]
