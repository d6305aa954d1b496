"""pi-companion: the software of a tabletop games companion box."""
__version__ = "0.1.0"
