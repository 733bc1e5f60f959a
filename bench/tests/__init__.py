"""Tests of the benchmark scripts and their harness."""
