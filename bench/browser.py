"""Open a page in headless Chromium without network access: its DOM after the scripts ran, its console
messages, and a screenshot."""
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
           "--disable-background-networking", "--disable-component-update", "--no-first-run")
CONSOLE = re.compile(r":CONSOLE(?:\(\d+\)|:\d+)?\] (.*)$")


def find_chromium() -> Optional[str]:
    """The path of a Chromium (or Chrome) binary on PATH, or None."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageRun:
    """What headless Chromium saw: the serialized DOM and the console messages."""

    dom: str
    console: List[str]


def _run(args: Sequence[str], page: Union[str, Path], timeout: float) -> Tuple[str, List[str]]:
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("No Chromium binary found on PATH (chromium, chromium-browser, google-chrome); "
                                "install one, e.g. `apt-get install chromium` on Debian.")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", *OFFLINE, *args,
               Path(page).resolve().as_uri()]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"Chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    console = [m.group(1) for line in result.stderr.splitlines() for m in [CONSOLE.search(line)] if m]
    return result.stdout, console


def load_page(page: Union[str, Path], *, width: int = 1200, height: int = 800, timeout: float = 120.0) -> PageRun:
    """Load an HTML file headless and offline.

    page (Union[str, Path]): The HTML file.
    width (int): The window's width in pixels.
    height (int): The window's height in pixels.
    timeout (float): Seconds before giving up.
    RETURNS (PageRun): The DOM after the page's scripts ran (`--dump-dom`) and every console message
        (errors, uncaught exceptions and failed loads among them).
    """
    dom, console = _run(["--dump-dom", f"--window-size={width},{height}", "--hide-scrollbars"], page, timeout)
    return PageRun(dom, console)


def screenshot(page: Union[str, Path], target: Union[str, Path], *, width: int = 1200, height: int = 800,
               timeout: float = 120.0) -> List[str]:
    """Write a PNG screenshot of an HTML file, headless and offline. RETURNS (List[str]): The console messages."""
    target = Path(target).resolve()
    _, console = _run([f"--screenshot={target}", f"--window-size={width},{height}", "--hide-scrollbars"],
                      page, timeout)
    if not target.exists():
        raise RuntimeError(f"Chromium wrote no screenshot to {target}.")
    return console
