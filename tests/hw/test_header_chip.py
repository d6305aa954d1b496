"""The header's GPIO chip chosen by label (hw/header_chip.py): the pure choice for each Pi's
chips as the kernel lists them, and the scan over a directory of files that are no chips."""
from __future__ import annotations

import pytest

from pi_companion.hw.gpio_cdev import LineError
from pi_companion.hw.header_chip import NoHeaderChip, choose, find

# As `gpiodetect` shows them on each board.
PI5_OLD_KERNEL = [("/dev/gpiochip0", "gpio-brcmstb@107d508500", 32),
                  ("/dev/gpiochip1", "gpio-brcmstb@107d508520", 4),
                  ("/dev/gpiochip2", "gpio-brcmstb@107d517c00", 17),
                  ("/dev/gpiochip3", "gpio-brcmstb@107d517c20", 6),
                  ("/dev/gpiochip4", "pinctrl-rp1", 54)]
PI5_NEW_KERNEL = [("/dev/gpiochip0", "pinctrl-rp1", 54),
                  ("/dev/gpiochip10", "gpio-brcmstb@107d508500", 32),
                  ("/dev/gpiochip11", "pinctrl-bcm2712", 4)]
PI4 = [("/dev/gpiochip0", "pinctrl-bcm2711", 58), ("/dev/gpiochip1", "raspberrypi-exp-gpio", 8)]
PI3 = [("/dev/gpiochip0", "pinctrl-bcm2835", 54), ("/dev/gpiochip1", "raspberrypi-exp-gpio", 8)]
GPIO_SIM = [("/dev/gpiochip0", "gpio-mockup-A", 8), ("/dev/gpiochip1", "pinctrl-bcm2711", 28)]


@pytest.mark.parametrize("chips, want", [
    (PI5_OLD_KERNEL, ("/dev/gpiochip4", "pinctrl-rp1", 54)),
    (PI5_NEW_KERNEL, ("/dev/gpiochip0", "pinctrl-rp1", 54)),
    (PI4, ("/dev/gpiochip0", "pinctrl-bcm2711", 58)),
    (PI3, ("/dev/gpiochip0", "pinctrl-bcm2835", 54)),
    (GPIO_SIM, ("/dev/gpiochip1", "pinctrl-bcm2711", 28)),          # the system test's chip
])
def test_the_header_chip_is_chosen_by_label_not_number(chips, want):
    assert choose(chips) == want
    assert choose(list(reversed(chips))) == want


def test_the_preferred_label_wins_then_the_lowest_number():
    assert choose([("/dev/gpiochip0", "pinctrl-bcm2835", 54),
                   ("/dev/gpiochip9", "pinctrl-rp1", 54)])[0] == "/dev/gpiochip9"
    assert choose([("/dev/gpiochip10", "pinctrl-bcm2711", 58),
                   ("/dev/gpiochip2", "pinctrl-bcm2711", 58)])[0] == "/dev/gpiochip2"


def test_no_header_chip_names_every_chip_seen_in_one_line():
    with pytest.raises(NoHeaderChip) as caught:
        choose([("/dev/gpiochip1", "rp1-other", 54), ("/dev/gpiochip0", "gpio-mockup-A", 8)])
    assert isinstance(caught.value, LineError)           # the callers' one-line error
    assert caught.value.strerror == ('no Raspberry Pi header GPIO chip (saw gpiochip0 '
                                     '"gpio-mockup-A" 8 lines, gpiochip1 "rp1-other" 54 lines)')
    with pytest.raises(NoHeaderChip, match=r"\(saw no GPIO chip at all\)$"):
        choose([])


def test_a_pi_5_s_soc_chip_alone_is_never_the_header():
    with pytest.raises(NoHeaderChip) as caught:
        choose([("/dev/gpiochip0", "pinctrl-bcm2712", 4)])
    assert caught.value.strerror.startswith('no Raspberry Pi header GPIO chip (saw gpiochip0 '
                                            '"pinctrl-bcm2712" 4 lines); ')
    assert "RP1 driver" in caught.value.strerror and "\n" not in caught.value.strerror


def test_the_scan_reads_every_gpiochip_in_dev_and_says_why_one_is_unread(tmp_path):
    (tmp_path / "gpiochip0").write_bytes(b"")               # a file: the chip-info ioctl refuses
    (tmp_path / "gpiochip1").mkdir()                         # cannot be opened read-write
    (tmp_path / "i2c-1").write_bytes(b"")
    with pytest.raises(NoHeaderChip) as caught:
        find(tmp_path)
    assert caught.value.strerror == ("no Raspberry Pi header GPIO chip (saw gpiochip0 (not a GPIO "
                                     "character device), gpiochip1 (cannot open: Is a directory))")
    with pytest.raises(NoHeaderChip, match=r"saw no GPIO chip at all"):
        find(tmp_path / "nothing-here")


def test_the_kernel_factory_looks_for_the_header_chip_when_given_no_number(tmp_path):
    from pi_companion.hw.kernel_pins import KernelFactory
    (tmp_path / "gpiochip0").write_bytes(b"")
    with pytest.raises(NoHeaderChip, match=r"saw gpiochip0 \(not a GPIO character device\)"):
        KernelFactory(dev=tmp_path)
    with pytest.raises(LineError, match=r"gpiochip0: not a GPIO character device$"):
        KernelFactory(0, dev=tmp_path)            # a number given: that chip, its label read
