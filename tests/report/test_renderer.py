"""The charts' renderer process draws what vl-convert draws in this process, and a chart is still
drawn (or refused with vl-convert's own error) when that process is gone or refuses it."""

from __future__ import annotations

import pytest

from sqlanon.report.html import charts, renderer

SIZES = [{"size": 1, "classes": 40, "phase": "before"}, {"size": 7, "classes": 3, "phase": "after"}]


def test_the_renderer_process_draws_the_same_svg_as_this_process():
    import vl_convert

    spec = charts.class_sizes(SIZES)
    renderer.start()
    drawn = renderer.draw(spec)
    assert drawn is not None and drawn == str(vl_convert.vegalite_to_svg(spec))
    assert charts.svg(spec) == drawn[drawn.find("<svg"):]


def test_a_chart_is_drawn_here_when_the_renderer_process_is_gone():
    spec = charts.class_sizes(SIZES)
    renderer.start()
    expected = charts.svg(spec)
    renderer.stop()
    assert renderer.draw(spec) is None
    assert charts.svg(spec) == expected
    renderer.start()
    assert renderer._child is not None
    renderer._child.kill()
    renderer._child.wait()
    assert renderer.draw(spec) is None and renderer._child is None
    assert charts.svg(spec) == expected


def test_a_spec_the_renderer_refuses_raises_vl_converts_error_here():
    renderer.start()
    bad = {"mark": "no-such-mark", "data": {"values": []}}
    assert renderer.draw(bad) is None
    with pytest.raises(ValueError, match="conversion failed"):
        charts.svg(bad)
    assert renderer.draw(charts.class_sizes(SIZES)) is not None  # the child goes on after a refusal


def test_a_forked_process_draws_its_charts_itself():
    import os

    spec = charts.class_sizes(SIZES)
    renderer.start()
    expected = charts.svg(spec)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child process: the renderer's pipes belong to its parent
        code = 0 if renderer.draw(spec) is None else 1
        os.write(write, bytes([code]))
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == bytes([0])
    assert charts.svg(spec) == expected  # the parent's renderer is untouched
