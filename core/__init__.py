"""The floor every app stands on: it imports no app."""
