"""Benchmarks (run by hand; never timed inside the test suite)."""
