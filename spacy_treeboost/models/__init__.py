"""What a fitted learner is: rules over subtree patterns (`rules`, `rule_tables`), matched in a `Forest` by `_match`,
explained by `explain`."""
from .rules import ModelFormatError, RuleSet

__all__ = ["ModelFormatError", "RuleSet"]
