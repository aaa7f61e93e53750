"""retrieval level."""
