"""How is text turned into index terms? Tokens, case and accent folding, stemming per language."""
