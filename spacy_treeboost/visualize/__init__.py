"""Pictures of the model: a doc's trees with its fired subtrees (`render`), a rule report (`report_page`)."""
from .document import ExplanationView, explanation_view, find_textcat, render
from .report import read_examples, report_page, rule_report

__all__ = ["ExplanationView", "explanation_view", "find_textcat", "read_examples", "render", "report_page",
           "rule_report"]
