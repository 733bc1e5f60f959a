"""Memory studies of the learner: each script runs as `python -m bench.memory.NAME`."""
