"""How do people reach the index? The FastAPI app: JSON API and server-rendered pages."""
