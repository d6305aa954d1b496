"""Entry point of the wind puck: MicroPython runs this file at boot."""

import micropython

import puck

micropython.alloc_emergency_exception_buf(100)   # lets an interrupt handler report an error
puck.start()
