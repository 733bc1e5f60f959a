"""What a fitted learner is: rules over subtree patterns (`rules.RuleSet`), their flat-array layout
(`rule_tables`), the compiled matcher that finds patterns in a `Forest` (`_match`), and explanations of which
rules fired where (`explain`)."""
from .rules import ModelFormatError, RuleSet

__all__ = ["ModelFormatError", "RuleSet"]
