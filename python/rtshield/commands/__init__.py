"""One module per CLI verb; each exposes ``register(subparsers)``."""
