"""A directory tree standing in for /sys: a Raspberry Pi's PWM chip as the kernel lays it out
(class link, platform device, device-tree node and pin groups, big-endian cells), and the writes
made into it, read back in their order from the kernel's own inotify queue.

The tree is what `pwm_sysfs` sees after the kernel has done its part: `pwm0/` stands there as
the export's write makes it (`channel_dir=False` leaves it out, for a test to make it late)."""
from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

IN_CLOSE_WRITE = 0x00000008
EVENT = struct.Struct("iIII")
ATTRS = ("period", "duty_cycle", "enable", "polarity")


def cells(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "big") for v in values)


def make_tree(root: Path, *, pins: tuple[int, ...] = (18,), function: int = 2,
              compatible: str = "brcm,bcm2835-pwm", chip: int = 0, base: str = "3f20c000",
              channel_dir: bool = True) -> Path:
    """A PWM chip `pwmchip<chip>` whose device-tree node routes `pins` with `function` (GPIO18
    alt5 is the pwm overlay's); returns the chip's directory (the /sys/class/pwm entry)."""
    dt = root / "firmware/devicetree/base/soc"
    node = dt / f"pwm@7e{base[2:]}"
    node.mkdir(parents=True, exist_ok=True)
    (node / "compatible").write_bytes(compatible.encode() + b"\0")
    (node / "pinctrl-0").write_bytes(cells(0x2a))
    gpio = dt / "gpio@7e200000"
    (gpio / "pwm_pins").mkdir(parents=True, exist_ok=True)
    (gpio / "gpio-controller").write_bytes(b"")
    (gpio / "pwm_pins/phandle").write_bytes(cells(0x2a))
    (gpio / "pwm_pins/brcm,pins").write_bytes(cells(*pins))
    (gpio / "pwm_pins/brcm,function").write_bytes(cells(function))
    (gpio / "i2c1").mkdir(exist_ok=True)          # another group, another phandle
    (gpio / "i2c1/phandle").write_bytes(cells(0x10))
    (gpio / "i2c1/brcm,pins").write_bytes(cells(2, 3))
    (gpio / "i2c1/brcm,function").write_bytes(cells(4))
    device = root / f"devices/platform/soc/{base}.pwm"
    chip_dir = device / f"pwm/pwmchip{chip}"
    chip_dir.mkdir(parents=True)
    (device / "of_node").symlink_to(f"../../../../firmware/devicetree/base/soc/{node.name}")
    (chip_dir / "device").symlink_to(f"../../../{base}.pwm")
    for name, text in (("export", ""), ("unexport", ""), ("npwm", "2\n")):
        (chip_dir / name).write_text(text)
    link = root / f"class/pwm/pwmchip{chip}"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(f"../../devices/platform/soc/{base}.pwm/pwm/pwmchip{chip}")
    if channel_dir:
        make_channel(link / "pwm0")
    return link


def make_channel(path: Path, **values: int) -> None:
    """`pwmM/` as the export leaves it: period, duty and enable 0 unless given."""
    tmp = path.with_name(path.name + ".new")
    tmp.mkdir()
    for name in ATTRS:
        (tmp / name).write_text("normal\n" if name == "polarity" else f"{values.get(name, 0)}\n")
    tmp.rename(path)


class Writes:
    """The files closed after a write under the watched directories, in the order the kernel
    queued them, each with its content when `take` reads it (every call of the adapter writes a
    file at most once, so that is the value it wrote)."""

    def __init__(self, *dirs: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.dirs: dict[int, Path] = {}
        for d in dirs:
            wd = libc.inotify_add_watch(self.fd, str(d).encode(), IN_CLOSE_WRITE)
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.dirs[wd] = d

    def take(self) -> list[tuple[str, str]]:
        out = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            i = 0
            while i < len(data):
                wd, _, _, size = EVENT.unpack_from(data, i)
                name = data[i + EVENT.size:i + EVENT.size + size].split(b"\0", 1)[0].decode()
                i += EVENT.size + size
                where = self.dirs[wd]
                label = name if where.name.startswith("pwmchip") else f"{where.name}/{name}"
                out.append((label, (where / name).read_text().strip()))

    def close(self) -> None:
        os.close(self.fd)
