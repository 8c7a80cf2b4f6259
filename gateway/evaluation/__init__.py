"""Measuring sanigate against human sanitizers (precision, recall, F; utility)."""
