"""How the experiment reports print numbers."""
from typing import Any, Dict


def code(text: str) -> str:
    """Markdown code span that survives backticks in the text."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def pct(x: Any, digits: int = 2) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}"


def pm(ms: Dict[str, float]) -> str:
    return f"{pct(ms['mean'])} ± {pct(ms['std'])}"


def pval(p: float) -> str:
    return f"{p:.2e}" if p < 1e-3 else f"{p:.4f}"
