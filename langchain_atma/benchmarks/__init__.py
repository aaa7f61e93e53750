"""benchmarks level."""
