"""The durable game log: one checksummed JSON line per input, in the state directory.

The rule: the engine never acts on a record that the log could lose; what it acted on is
written in order and, once `GameLog.wait` says so, survives a power cut, and what a resume reads
back is exactly a prefix of it. One module per concept: `format` (the line, pure), `reader`
(streaming a log, stopping at damage), `durable` (synced writes), `lock` (one writer per state
directory), `history` (finished games), `writer` (`GameLog`: the game in progress).
"""
from .format import Damaged, TooNew, decode, encode
from .history import REMOVED_KEEP, history_files
from .lock import StateDirBusy, lock_state_dir
from .reader import open_log
from .writer import GameLog

__all__ = ["Damaged", "GameLog", "REMOVED_KEEP", "StateDirBusy", "TooNew", "decode", "encode", "history_files",
           "lock_state_dir", "open_log"]
