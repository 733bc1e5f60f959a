"""Benchmarks of spacy-treeboost: each script runs as `python -m bench.NAME` from the repository root, and
every child process is measured by `bench.harness`."""
