"""Which pages answer this query, in what order, and why? Reads the index via index/."""
