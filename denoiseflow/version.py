"""The SDK's version: the distribution's, and the one its requests announce."""

__version__ = "0.2.0"
