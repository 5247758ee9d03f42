# Benchmark datasets and runs: see the entity benchmark issue.
