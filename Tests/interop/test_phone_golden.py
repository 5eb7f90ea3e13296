"""The committed phone golden lists are what PyPI phonenumbers (pinned to Debian's
libphonenumber version) makes of its numbers today: regenerated, it is byte for
byte the committed file. The Swift PhoneGoldenTests check the C shim against it."""
import os

import gen_phone_golden


def test_committed_golden_list_is_regenerated_unchanged():
    with open(os.path.join(gen_phone_golden.HERE, "phone_golden.tsv"), encoding="utf-8") as committed:
        assert committed.read() == gen_phone_golden.render()


def test_committed_format_golden_list_is_regenerated_unchanged():
    with open(os.path.join(gen_phone_golden.HERE, "phone_format_golden.tsv"), encoding="utf-8") as committed:
        assert committed.read() == gen_phone_golden.render_formats()
