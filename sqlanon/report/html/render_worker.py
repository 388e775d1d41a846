"""The charts' renderer in its own process: reads one Vega-Lite specification a line (JSON) on stdin
and answers each with one line, ``{"svg": ...}`` or ``{"error": ...}``.

It is run as a script without ``site`` (``python -S render_worker.py FOLDER``, FOLDER holding
``vl_convert``), so that it imports ``vl_convert`` and nothing of sqlanon; it
starts vl-convert's JavaScript runtime at once, with a one-point chart, while the report's run is
still reading the data (:mod:`sqlanon.report.html.renderer`).
"""

import json
import sys

WARM_UP = {"mark": "point", "data": {"values": [{"a": 1}]},
           "encoding": {"x": {"field": "a", "type": "quantitative"}}}


def main() -> None:
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    import vl_convert

    vl_convert.vegalite_to_svg(WARM_UP)
    for line in sys.stdin:
        try:
            answer = {"svg": str(vl_convert.vegalite_to_svg(json.loads(line)))}
        except Exception as e:  # the caller draws the chart itself and raises the error there
            answer = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, BrokenPipeError):
        pass
