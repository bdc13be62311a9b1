"""The papers' published claims, as checks on simulated results (one module per study)."""
