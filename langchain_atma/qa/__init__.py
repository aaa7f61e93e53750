"""qa level."""
