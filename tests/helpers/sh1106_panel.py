"""An emulated SH1106 controller behind a fake luma serial interface (hw/test_sh1106_dirty,
hw/test_oled_worst_frame)."""
from __future__ import annotations

import random


# Commands with one argument byte, as luma's sh1106 set-up sends them.
ARGS = {0x81: 1, 0x20: 1, 0x8D: 1, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1, 0xDB: 1, 0xAD: 1}


NO_ARGS = (set(range(0x00, 0x20)) | set(range(0x40, 0x80)) | set(range(0xB0, 0xB8))
           | {0xA0, 0xA1, 0xA4, 0xA5, 0xA6, 0xA7, 0xAE, 0xAF, 0xC0, 0xC8})


RAM_COLUMNS = 132


class Panel:
    def __init__(self, seed: int = 0) -> None:
        self.ram = bytearray(random.Random(seed).randbytes(RAM_COLUMNS * 8))
        self.page = self.col = 0
        self.pending: list[int] = []
        self.transfers = self.bytes = 0

    def command(self, *cmd: int) -> None:
        self.transfers += 1
        self.bytes += len(cmd)
        for byte in cmd:
            self.pending.append(byte)
            op = self.pending[0]
            if op not in ARGS and op not in NO_ARGS:
                raise AssertionError(f"command 0x{op:02X} is not emulated")
            if len(self.pending) == 1 + ARGS.get(op, 0):
                if 0xB0 <= op <= 0xB7:
                    self.page = op & 0x07
                elif op <= 0x0F:
                    self.col = (self.col & 0xF0) | op
                elif op <= 0x1F:
                    self.col = (self.col & 0x0F) | ((op & 0x0F) << 4)
                self.pending = []

    def data(self, data: list[int]) -> None:
        assert not self.pending, "data in the middle of a command"
        self.transfers += 1
        self.bytes += len(data)
        for byte in data:
            assert 0 <= byte <= 255 and self.col < RAM_COLUMNS, "written past the RAM's end"
            self.ram[self.page * RAM_COLUMNS + self.col] = byte
            self.col += 1                       # page addressing: never on to the next page

    def visible(self) -> bytes:
        return b"".join(self.ram[p * RAM_COLUMNS + 2:p * RAM_COLUMNS + 130] for p in range(8))

    def cleanup(self) -> None:
        pass
