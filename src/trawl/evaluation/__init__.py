"""Does ranking get better or worse? Judged collections, a golden set, metrics and sweeps."""
