"""Kill `spacy train` with SIGKILL at random moments and check what it leaves in model-best and model-last.

    python -m bench.kill_train [--trials 20] [--config configs/chain_sentiment.cfg] [--seed 0] [--max-delay S]

A first, complete run times how long the run goes on after its first model directory appears (spaCy then
writes model-last, copies it to model-best and writes model-last again); every trial starts the same training,
waits until its first model directory appears (polling every millisecond) and kills it after a delay drawn
uniformly from 0 to that duration plus 0.1 s, so that the kills fall while files are written, whatever the
machine's load. Each
directory left behind is checked file by file: the component's own files (treeboost_textcat/cfg and model)
must be absent or complete; spaCy's own files (meta.json, config.cfg, vocab, tokenizer, sentencizer) are
counted as damaged when they are empty or do not parse, and the directory is tried with `spacy.load`.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
COMPONENT = "treeboost_textcat"


def train_command(config: Path, output: Path) -> List[str]:
    return [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output)]


def run_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def calibrate(config: Path, work: Path) -> Tuple[float, float]:
    """(seconds from the start to the first model directory, seconds from then to the end) of one complete run."""
    output = work / "calibration"
    start = time.time()
    process = subprocess.Popen(train_command(config, output), cwd=ROOT, env=run_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    wait_for_model_directory(process, output)
    first = time.time()
    if process.wait() != 0:
        raise RuntimeError(f"spacy train {config} failed")
    end = time.time()
    shutil.rmtree(output)
    return first - start, end - first


def wait_for_model_directory(process: subprocess.Popen, output: Path) -> None:
    while process.poll() is None and not any((output / name).exists() for name in ("model-best", "model-last")):
        time.sleep(0.001)


def check_component(directory: Path) -> Dict[str, str]:
    """The state of the component's files: "absent", "complete" or a description of the damage."""
    from spacy_treeboost.files import ModelFormatError, load_cfg_json, unseal
    from spacy_treeboost.pipeline.treeboost_textcat import MODEL_FORMAT, MODEL_VERSION

    out = {}
    for name, read in (("cfg", lambda p: load_cfg_json(p.read_bytes(), str(p))),
                       ("model", lambda p: unseal(p.read_bytes(), MODEL_FORMAT, MODEL_VERSION, error=ModelFormatError,
                                                  what="model file"))):
        path = directory / COMPONENT / name
        if not path.exists():
            out[name] = "absent"
            continue
        try:
            read(path)
            out[name] = "complete"
        except ModelFormatError as err:
            out[name] = f"damaged: {err}"
    return out


def check_spacy_files(directory: Path) -> Dict[str, str]:
    """The state of spaCy's own files: "complete", "absent", "empty" or "unparseable"."""
    import srsly
    from thinc.api import Config

    readers = {
        "meta.json": srsly.read_json, "config.cfg": lambda p: Config().from_disk(p),
        "vocab/strings.json": srsly.read_json, "vocab/vectors.cfg": srsly.read_json,
        "tokenizer": lambda p: srsly.msgpack_loads(Path(p).read_bytes()), "sentencizer.json": srsly.read_json,
        "vocab/lookups.bin": lambda p: srsly.msgpack_loads(Path(p).read_bytes()),
    }
    out = {}
    for name, read in readers.items():
        path = directory / name
        if not path.exists():
            out[name] = "absent"
        elif path.stat().st_size == 0:
            out[name] = "empty"
        else:
            try:
                read(path)
                out[name] = "complete"
            except Exception:
                out[name] = "unparseable"
    return out


def loads(directory: Path) -> Optional[str]:
    """None when `spacy.load` loads the directory, else the error's first line."""
    code = ("import sys, spacy; nlp = spacy.load(sys.argv[1]); "
            "print(sorted(nlp('not bad at all').cats.items()))")
    result = subprocess.run([sys.executable, "-c", code, str(directory)], cwd=ROOT, env=run_env(),
                            capture_output=True, text=True)
    if result.returncode == 0:
        return None
    lines = [l for l in result.stderr.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else f"exit {result.returncode}"


def trial(config: Path, work: Path, delay: float) -> Dict[str, Any]:
    output = work / "trial"
    if output.exists():
        shutil.rmtree(output)
    process = subprocess.Popen(train_command(config, output), cwd=ROOT, env=run_env(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_model_directory(process, output)
    try:
        process.wait(timeout=delay)
        finished = True
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        finished = False
    result: Dict[str, Any] = {"kill_delay_s": round(delay, 4), "finished_before_kill": finished, "dirs": {}}
    for name in ("model-best", "model-last"):
        directory = output / name
        if not directory.exists():
            result["dirs"][name] = "absent"
            continue
        leftovers = sorted(str(p.relative_to(directory)) for p in directory.rglob(".*.tmp"))
        result["dirs"][name] = {"component": check_component(directory), "spacy": check_spacy_files(directory),
                                "load_error": loads(directory), "temporary_files": leftovers}
    return result


def summarize(results: List[Dict[str, Any]]) -> Dict[str, Any]:
    dirs = [d for r in results for d in r["dirs"].values() if isinstance(d, dict)]
    component_damaged = sum(any(v.startswith("damaged") for v in d["component"].values()) for d in dirs)
    spacy_damaged = sum(any(v in ("empty", "unparseable") for v in d["spacy"].values()) for d in dirs)
    return {
        "trials": len(results), "killed": sum(not r["finished_before_kill"] for r in results),
        "directories_left": len(dirs), "component_files_half_written": component_damaged,
        "spacy_files_half_written": spacy_damaged,
        "unloadable": sum(d["load_error"] is not None for d in dirs),
        "component_files_absent": sum("absent" in d["component"].values() for d in dirs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "chain_sentiment.cfg")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="Write the results as JSON here")
    parser.add_argument("--max-delay", type=float, default=None,
                        help="Kill at most this many seconds after the first model directory appears (default: the "
                        "calibrated rest of the run plus 0.1 s)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kill_train_") as tmp:
        work = Path(tmp)
        first, saving = calibrate(args.config, work)
        window = (0.0, saving + 0.1 if args.max_delay is None else args.max_delay)
        print(f"calibration: the first model directory appears {first:.2f} s after the start and the run ends "
              f"{saving:.2f} s later; killing {window[0]:.2f}-{window[1]:.2f} s after that directory appears",
              file=sys.stderr)
        results = []
        for i in range(args.trials):
            results.append(trial(args.config, work, rng.uniform(*window)))
            print(json.dumps(results[-1]), file=sys.stderr)
    summary = {"window_s": [round(w, 3) for w in window], **summarize(results)}
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "trials": results}, indent=2), encoding="utf8")


if __name__ == "__main__":
    main()
