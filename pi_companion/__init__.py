"""pi-companion: the software of a tabletop games companion box.

`__version__` is the one version number: the wheel's, the Debian package's, `--version`'s,
`doctor`'s, the OLED's About screen's and the web pages' footer's (docs/CHANGELOG.md).
"""
__version__ = "0.2.0"
