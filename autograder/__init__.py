"""Autograded exercises and exams for a PyTorch course."""

__version__ = "0.1.0"
