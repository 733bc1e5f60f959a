"""Pictures of the model: a doc's sentence trees with its fired subtrees (`render`), and a report of a
trained component's rules (`report_page`)."""
from .document import ExplanationView, explanation_view, find_textcat, render

__all__ = ["ExplanationView", "explanation_view", "find_textcat", "render"]
