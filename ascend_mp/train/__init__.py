"""Mixed-precision training runtime."""
