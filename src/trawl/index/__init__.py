"""How are pages made findable? The tantivy index: its fields, writer and reader."""
