"""May this page be indexed, and as what? Pure decisions over fetched responses."""
