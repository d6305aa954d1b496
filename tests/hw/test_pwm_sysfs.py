"""The piezo's tones on the kernel's PWM through sysfs (hw/pwm_sysfs.py, kernel_pins.ChannelPin),
on a real directory tree standing in for /sys: the channel routed to GPIO18 found from the
device tree, the exact writes in their order (read back from the kernel's inotify queue), a
tone started and stopped through gpiozero's TonalBuzzer, and every fault (EIO from the kernel,
the chip gone) ending in the software PWM or silence with one log line, never an exception."""
from __future__ import annotations

import logging
import os
import shutil
import threading
from types import SimpleNamespace

import pytest
from gpiozero import TonalBuzzer
from gpiozero.pins.mock import MockFactory, MockPWMPin
from gpiozero.tones import Tone

from helpers.pwm_tree import Writes, make_channel, make_tree
from pi_companion.config import Config
from pi_companion.doctor import check_piezo
from pi_companion.hw import pwm_sysfs
from pi_companion.hw.kernel_pins import ChannelPin, KernelFactory
from pi_companion.hw.pwm_sysfs import Channel, PWMError, Route, find

A4 = 2_272_727          # ns: 1e9 / 440, rounded
A5 = 1_136_364          # 1e9 / 880


@pytest.fixture
def sysfs(tmp_path):
    root = tmp_path / "sys"
    make_tree(root)
    return root


def route(sysfs) -> Route:
    found, why = find(18, sysfs)
    assert found is not None, why
    return found


# -- which channel ------------------------------------------------------------------------------
def test_the_pwm_overlay_s_route_is_channel_0_of_the_bcm2835_chip(sysfs):
    found = route(sysfs)
    assert (found.chip, found.channel, found.name) == (sysfs / "class/pwm/pwmchip0", 0, "pwmchip0/pwm0")


def test_a_chip_routing_other_pins_is_not_ours_and_the_reason_says_what_to_add(tmp_path):
    make_tree(tmp_path, pins=(40, 41), function=4)           # the audio jack's PWM (mainline Pi 3 B)
    found, why = find(18, tmp_path)
    assert found is None
    assert why == ("no PWM on GPIO18 (pwmchip0 routes GPIO40, GPIO41): add dtoverlay=pwm,pin=18,func=2 "
                   "to /boot/firmware/config.txt and reboot")


def test_gpio18_in_another_function_or_on_another_chip_is_no_route(tmp_path):
    make_tree(tmp_path / "a", function=0)                    # GPIO18 an input: not the PWM's
    assert find(18, tmp_path / "a")[0] is None
    make_tree(tmp_path / "b", compatible="raspberrypi,rp1-pwm")
    assert "pwmchip0 is raspberrypi,rp1-pwm" in find(18, tmp_path / "b")[1]
    assert find(18, tmp_path / "none")[1].startswith("no PWM on GPIO18 (no PWM chip in ")
    assert "has no PWM function" in find(17, tmp_path / "a")[1]


def test_the_pin_decides_the_channel(tmp_path):
    make_tree(tmp_path, pins=(19,), function=2)
    found, _ = find(19, tmp_path)
    assert found is not None and found.channel == 1


# -- the writes ---------------------------------------------------------------------------------
def test_export_then_a_period_before_anything_else(sysfs):
    writes = Writes(sysfs / "class/pwm/pwmchip0", sysfs / "class/pwm/pwmchip0/pwm0")
    Channel(route(sysfs))
    assert writes.take() == [("export", "0"), ("pwm0/period", str(A4))]


def test_a_tone_its_note_changes_and_its_stop_are_the_fewest_writes_in_the_kernel_s_order(sysfs):
    writes = Writes(sysfs / "class/pwm/pwmchip0", sysfs / "class/pwm/pwmchip0/pwm0")
    channel = Channel(route(sysfs))
    writes.take()
    channel.tone(880, 0.5)                  # a longer period is set: the period first
    assert writes.take() == [("pwm0/period", str(A5)), ("pwm0/duty_cycle", str(A5 // 2)),
                             ("pwm0/enable", "1")]
    channel.tone(440, 0.9)                  # longer than the duty set: period first still
    assert writes.take() == [("pwm0/period", str(A4)), ("pwm0/duty_cycle", str(round(A4 * 0.9)))]
    channel.tone(880, 0.5)                  # shorter than the duty set: the duty first
    assert writes.take() == [("pwm0/duty_cycle", str(A5 // 2)), ("pwm0/period", str(A5))]
    channel.tone(880, 0.5)                  # the same: nothing
    assert writes.take() == []
    channel.off()
    assert writes.take() == [("pwm0/enable", "0")]
    channel.tone(880, 0.5)                  # the same note again: only enable
    assert writes.take() == [("pwm0/enable", "1")]
    channel.close()
    assert writes.take() == [("pwm0/enable", "0"), ("unexport", "0")]


def test_every_state_written_is_one_the_kernel_accepts(sysfs):
    """Never a duty above the period, never a period of 0, whatever the notes' order."""
    channel = Channel(route(sysfs))
    pwm0 = sysfs / "class/pwm/pwmchip0/pwm0"
    seen = []
    real = channel._write_to

    def checked(path, value):
        real(path, value)
        period, duty = (int((pwm0 / n).read_text()) for n in ("period", "duty_cycle"))
        seen.append((period, duty))
        assert period > 0 and duty <= period, (path.name, value, period, duty)
    channel._write_to = checked
    for hz in (220, 880, 330, 880, 440, 110, 1760, 220):
        for duty in (0.5, 0.9, 0.1):
            channel.tone(hz, duty)
    channel.level(True)
    assert int((pwm0 / "duty_cycle").read_text()) == int((pwm0 / "period").read_text())
    assert len(seen) > 30


def test_a_channel_left_exported_by_an_earlier_run_is_read_back_and_silenced(sysfs, monkeypatch):
    pwm0 = sysfs / "class/pwm/pwmchip0/pwm0"
    for name, value in (("period", A5), ("duty_cycle", A5 // 2), ("enable", 1)):
        (pwm0 / name).write_text(f"{value}\n")
    writes = Writes(sysfs / "class/pwm/pwmchip0", pwm0)
    # The kernel refuses a second export with EBUSY; a regular file takes it, so the refusal
    # is the kernel's errno raised where the adapter writes export.
    real = Channel._write_to

    def busy_export(self, path, value):
        if path.name == "export":
            raise PWMError(16, "pwmchip0/export: Device or resource busy")
        real(self, path, value)
    monkeypatch.setattr(Channel, "_write_to", busy_export)
    channel = Channel(route(sysfs))
    assert (channel.period, channel.duty, channel.enabled) == (A5, A5 // 2, False)
    assert writes.take() == [("pwm0/enable", "0")]
    channel.tone(880, 0.5)
    assert writes.take() == [("pwm0/enable", "1")]


def test_the_channel_directory_made_late_is_waited_for(tmp_path):
    root = tmp_path / "sys"
    chip = make_tree(root, channel_dir=False)
    threading.Timer(0.05, make_channel, (chip / "pwm0",)).start()
    channel = Channel(route(root), wait_s=2.0)
    assert (chip / "pwm0/period").read_text() == f"{A4}\n" and channel.period == A4


def test_a_channel_that_never_comes_is_one_error_and_unexported(tmp_path):
    root = tmp_path / "sys"
    chip = make_tree(root, channel_dir=False)
    writes = Writes(chip)
    with pytest.raises(PWMError) as err:
        Channel(route(root), wait_s=0.05)
    assert str(err.value) == "[Errno 2] pwmchip0/pwm0/period: No such file or directory"
    assert writes.take() == [("export", "0"), ("unexport", "0")]


# -- through gpiozero: a tone, its stop, the fallback -------------------------------------------
def buzzer_on(sysfs):
    """A TonalBuzzer on GPIO18 of a mock factory whose pin 18 is a ChannelPin on the stand-in;
    `line["pin"]` is the mock pin it hands over to, once it has."""
    factory = MockFactory()
    line = {}

    def make(f, info):
        def line_pin():
            line["pin"] = MockPWMPin(f, info)
            return line["pin"]
        return ChannelPin(f, info, Channel(route(sysfs)), line_pin)
    pin = factory.pin(18, pin_class=make)
    return TonalBuzzer(18, pin_factory=factory), pin, line


def test_a_buzzer_s_tone_starts_and_stops_on_the_channel(sysfs):
    writes = Writes(sysfs / "class/pwm/pwmchip0", sysfs / "class/pwm/pwmchip0/pwm0")
    buzzer, pin, line = buzzer_on(sysfs)
    writes.take()
    buzzer.play(Tone("A5"))
    assert writes.take() == [("pwm0/period", str(A5)), ("pwm0/duty_cycle", str(A5 // 2)),
                             ("pwm0/enable", "1")]
    assert pin.frequency == pytest.approx(880) and pin.state == 0.5
    buzzer.stop()
    assert writes.take() == [("pwm0/enable", "0")]
    buzzer.close()
    pin.free()
    assert writes.take()[-1] == ("unexport", "0") and not line


def eio_link(path):
    """`path` replaced by a link to a hung-up terminal: the kernel answers its open with EIO."""
    master, slave = os.openpty()
    os.close(master)
    path.unlink()
    path.symlink_to(f"/proc/{os.getpid()}/fd/{slave}")
    return slave


def test_eio_from_the_kernel_hands_the_tone_to_the_software_pwm_with_one_log_line(sysfs, caplog):
    buzzer, pin, line = buzzer_on(sysfs)
    slave = eio_link(sysfs / "class/pwm/pwmchip0/pwm0/duty_cycle")
    try:
        with caplog.at_level(logging.WARNING):
            buzzer.play(Tone("A5"))                    # never raises
            buzzer.stop()
            buzzer.play(Tone("A4"))
    finally:
        os.close(slave)
    assert [r.getMessage() for r in caplog.records] == [
        "GPIO18: the hardware PWM failed (pwmchip0/pwm0/duty_cycle: Input/output error): its tones "
        "come from the software PWM from now on"]
    software = line["pin"]
    assert software.frequency == pytest.approx(440) and software.state == 0.5
    assert pin.channel is None and pin.frequency == pytest.approx(440)


def test_a_vanished_chip_mid_tone_falls_back_and_the_tone_goes_on(sysfs, caplog):
    buzzer, pin, line = buzzer_on(sysfs)
    buzzer.play(Tone("A5"))
    shutil.rmtree(sysfs / "devices")
    with caplog.at_level(logging.WARNING):
        buzzer.play(Tone("A4"))
    assert len(caplog.records) == 1 and "No such file or directory" in caplog.records[0].getMessage()
    assert line["pin"].frequency == pytest.approx(440) and line["pin"].state == 0.5
    buzzer.stop()
    assert line["pin"].frequency is None
    buzzer.close()
    pin.free()                                       # the chip is gone: no error letting go


def test_a_line_that_cannot_be_had_either_leaves_the_piezo_silent_with_one_line(sysfs, caplog):
    factory = MockFactory()

    def no_line():
        raise OSError(16, "Device or resource busy")
    pin = factory.pin(18, pin_class=lambda f, info: ChannelPin(f, info, Channel(route(sysfs)), no_line))
    buzzer = TonalBuzzer(18, pin_factory=factory)
    shutil.rmtree(sysfs / "devices")
    with caplog.at_level(logging.WARNING):
        for note in ("A5", "A4", "C5"):
            buzzer.play(Tone(note))
            buzzer.stop()
    assert len(caplog.records) == 1
    assert caplog.records[0].getMessage().startswith("GPIO18 is silent: the hardware PWM failed")
    assert pin.silent
    buzzer.close()


def test_asked_to_be_an_input_the_pin_leaves_the_pwm_for_its_line(sysfs):
    factory = MockFactory()
    made = []
    pin = factory.pin(18, pin_class=lambda f, info: ChannelPin(
        f, info, Channel(route(sysfs)), lambda: made.append(MockPWMPin(f, info)) or made[-1]))
    pin.function = "input"
    assert made and made[0].function == "input" and pin.function == "input"
    assert (sysfs / "class/pwm/pwmchip0/unexport").read_text() == "0\n"


def test_the_factory_gives_a_routed_pin_to_the_channel_and_says_so(sysfs):
    factory = MockFactory()
    host = SimpleNamespace(sysfs=sysfs, tones={})
    pin = KernelFactory._new_pin(host, factory, next(iter(factory.board_info.find_pin("GPIO18")))[1])
    assert isinstance(pin, ChannelPin) and host.tones == {18: "hardware PWM pwmchip0/pwm0"}
    pin.free()


def test_a_routed_pin_whose_channel_will_not_export_is_a_line_with_one_warning(sysfs, caplog,
                                                                              monkeypatch):
    from pi_companion.hw import kernel_pins
    factory = MockFactory()
    host = SimpleNamespace(sysfs=sysfs, tones={})
    slave = eio_link(sysfs / "class/pwm/pwmchip0/export")
    # No GPIO chip here for a real line request: the line pin is noted instead.
    monkeypatch.setattr(kernel_pins, "KernelPin", lambda f, info: ("line request", info.name))
    try:
        with caplog.at_level(logging.INFO):
            pin = KernelFactory._new_pin(host, factory, next(iter(factory.board_info.find_pin("GPIO18")))[1])
    finally:
        os.close(slave)
    assert pin == ("line request", "GPIO18")
    why = "pwmchip0/pwm0 did not export: pwmchip0/export: Input/output error"
    assert host.tones == {18: f"software PWM: {why}"}
    assert [r.getMessage() for r in caplog.records] == [
        f"GPIO18: no hardware PWM ({why}): its tones come from the software PWM"]


# -- doctor -------------------------------------------------------------------------------------
def test_doctor_names_the_channel_or_the_overlay_to_add(tmp_path):
    make_tree(tmp_path / "pi/sys")
    assert check_piezo(Config(), tmp_path / "pi") == ("ok", "hardware PWM pwmchip0/pwm0 on GPIO18")
    level, text = check_piezo(Config(), tmp_path / "pi5")
    assert level == "warn" and text.startswith("software PWM (a thread toggling GPIO18): no PWM on GPIO18")
    assert "dtoverlay=pwm,pin=18,func=2" in text
