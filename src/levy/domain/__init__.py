"""Domain core: plain Python business rules, no I/O."""
