"""The wind puck's firmware on both Picos: what firmware/puck.py asks of MicroPython's rp2 port
is there on the RP2040 (Pico) and the RP2350 (Pico 2) alike, read from the source with ast.

The limits are MicroPython's rp2 port's (ports/rp2/machine_wdt.c: the watchdog's 24-bit counter
gives 8388 ms on the RP2040 and 16777 ms on the RP2350; machine.Pin, disable_irq/enable_irq and
hard pin interrupts are the port's on both chips; both boards' builds keep the port's USB id
2e8a:0005, which the box's udev rule and discovery look for)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PUCK = ROOT / "firmware" / "puck.py"
WDT_MAX_MS = {"RP2040": 8388, "RP2350": 16777}
MACHINE = {"Pin", "WDT", "disable_irq", "enable_irq"}
PIN = {"IN", "PULL_UP", "IRQ_RISING", "IRQ_FALLING"}
# GPIO both boards bring out on the same 40 pins (GP23 to GP25 and GP29 are on-board).
HEADER_GPIO = set(range(0, 23)) | {26, 27, 28}


def uses(tree: ast.Module, name: str) -> set[str]:
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name}


def constants(tree: ast.Module) -> dict[str, object]:
    return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)}


def test_the_watchdog_timeout_fits_both_chips():
    timeout = constants(ast.parse(PUCK.read_text()))["WDT_TIMEOUT_MS"]
    assert 0 < timeout <= min(WDT_MAX_MS.values())


def test_the_firmware_uses_only_what_the_rp2_port_has_on_both_chips():
    tree = ast.parse(PUCK.read_text())
    assert uses(tree, "machine") <= MACHINE
    assert uses(tree, "Pin") <= PIN
    imports = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
               for alias in node.names} | {node.module for node in ast.walk(tree)
                                           if isinstance(node, ast.ImportFrom) and node.module}
    assert not {"rp2", "_thread", "network"} & imports, "chip-specific (rp2: PIO and DMA differ between the chips)"
    pins = constants(tree)
    assert {pins["HALL_A_PIN"], pins["HALL_B_PIN"]} <= HEADER_GPIO
