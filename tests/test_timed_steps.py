"""``make reproduce``'s step timer: runs steps in order, stops at a failure, rewrites its own section."""

from __future__ import annotations

import pytest

from afr_cli.timed_steps import BEGIN, END, main, parse_step


def test_steps_run_in_order_and_the_section_is_replaced_not_appended(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Results\n\nkept above\n")
    marks = tmp_path / "order.txt"
    assert main(["--write", str(readme), f"one=echo 1 >> {marks}", f"two=echo 2 >> {marks}"]) == 0
    assert marks.read_text() == "1\n2\n"
    first = readme.read_text()
    assert first.startswith("# Results\n\nkept above\n") and "| one |" in first and "| two |" in first
    readme.write_text(first + "\nkept below\n")
    assert main(["--write", str(readme), "three=true"]) == 0
    text = readme.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert "| three |" in text and "| one |" not in text and text.endswith("kept below\n")


def test_a_failing_step_stops_the_run_and_is_reported(tmp_path):
    readme = tmp_path / "R.md"
    assert main(["--write", str(readme), "bad=exit 3", f"never=touch {tmp_path / 'x'}"]) == 3
    assert not (tmp_path / "x").exists()
    assert "| bad |" in readme.read_text() and "1 step(s) not run" in readme.read_text()


def test_a_step_without_a_command_is_refused():
    with pytest.raises(SystemExit, match="NAME=COMMAND"):
        parse_step("just-a-name")
