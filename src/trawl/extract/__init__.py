"""What does this HTML document say? Text, metadata, links, language. Pure, no I/O."""
