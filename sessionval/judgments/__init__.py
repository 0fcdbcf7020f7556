"""Gains from grades: gain schemes, negative-grade and unjudged policies, ideal gain vectors."""
