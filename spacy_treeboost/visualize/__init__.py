"""Pictures of the model: a doc's sentence trees with its fired subtrees (`render`, `explanation_view`),
and a report of a trained component's rules (`report_page`). See docs/visualize.md."""
from .document import ExplanationView, explanation_view, find_textcat, render
from .report import read_examples, report_page, rule_report

__all__ = ["ExplanationView", "explanation_view", "find_textcat", "read_examples", "render", "report_page",
           "rule_report"]
