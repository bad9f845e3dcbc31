"""Line charts as inline SVG, written in Python: no chart library, no network.

``chart`` draws one line per series across the steps, a point per step
where the series has a value, and a dashed mark (a triangle on top) at
the steps where something was injected. Every point carries
``data-series``, ``data-step`` and ``data-value`` so that tests (and a
reader's browser tools) can query what was drawn.
"""

from html import escape

WIDTH, HEIGHT = 560, 190
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 14, 46


def chart(series, labels, marks=None, wrong=(), title='', attrs=None):
    """An ``<svg>`` line chart.

    :param series: ``[(name, css class, [value or None per step])]``.
    :param labels: each step's label (the x axis, in order).
    :param marks: step position -> texts of what fired there.
    :param wrong: step positions some check found wrong here.
    :param attrs: more attributes of the ``<svg>`` element.
    """
    marks = marks or {}
    steps = len(labels)
    values = [v for _, _, vs in series for v in vs if v is not None]
    top = max(values + [1])
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x(position):
        if steps == 1:
            return LEFT + plot_w / 2
        return LEFT + plot_w * position / (steps - 1)

    def y(value):
        return TOP + plot_h * (1 - value / top)

    extra = ''.join(' %s="%s"' % (key, escape(str(value)))
                    for key, value in sorted((attrs or {}).items()))
    out = ['<svg class="chart" xmlns="http://www.w3.org/2000/svg" '
           'viewBox="0 0 %d %d" width="%d" height="%d" role="img"%s>'
           % (WIDTH, HEIGHT, WIDTH, HEIGHT, extra),
           '<title>%s</title>' % escape(title)]
    # Axes, with the top and bottom values.
    out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>'
               % (LEFT, TOP, LEFT, TOP + plot_h))
    out.append('<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>'
               % (LEFT, TOP + plot_h, LEFT + plot_w, TOP + plot_h))
    for value in (0, top):
        out.append('<text class="tick" x="%d" y="%.1f" text-anchor="end">'
                   '%s</text>' % (LEFT - 4, y(value) + 4, _number(value)))
    for position in sorted(set(wrong)):
        out.append('<rect class="wrong-band" data-step="%d" x="%.1f" '
                   'y="%d" width="12" height="%d"/>'
                   % (position, x(position) - 6, TOP, plot_h))
    for position, texts in sorted(marks.items()):
        at = x(position)
        out.append('<g class="mark" data-step="%d"><title>%s</title>'
                   '<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>'
                   '<polygon points="%.1f,%d %.1f,%d %.1f,%d"/></g>'
                   % (position, escape('\n'.join(texts)), at, TOP, at,
                      TOP + plot_h, at - 5, TOP - 8, at + 5, TOP - 8, at,
                      TOP))
    for position, label in enumerate(labels):
        out.append('<text class="step-tick" x="%.1f" y="%d" '
                   'text-anchor="middle" data-step="%d"><title>%s</title>'
                   '%d</text>' % (x(position), TOP + plot_h + 14, position,
                                  escape(label), position))
    for name, css, vs in series:
        points = [(p, v) for p, v in enumerate(vs) if v is not None]
        out.append('<g class="series %s" data-series="%s">'
                   % (escape(css), escape(name)))
        if len(points) > 1:
            out.append('<polyline points="%s"/>' % ' '.join(
                '%.1f,%.1f' % (x(p), y(v)) for p, v in points))
        for p, v in points:
            out.append('<circle class="point" cx="%.1f" cy="%.1f" r="3.5" '
                       'data-series="%s" data-step="%d" data-value="%s">'
                       '<title>%s, step %d (%s): %s</title></circle>'
                       % (x(p), y(v), escape(name), p, _number(v),
                          escape(name), p, escape(labels[p]), _number(v)))
        out.append('</g>')
    # The legend, under the step numbers.
    for n, (name, css, _) in enumerate(series):
        lx = LEFT + n * 150
        out.append('<g class="legend %s"><line x1="%d" y1="%d" x2="%d" '
                   'y2="%d"/><text x="%d" y="%d">%s</text></g>'
                   % (escape(css), lx, HEIGHT - 10, lx + 18, HEIGHT - 10,
                      lx + 22, HEIGHT - 6, escape(name)))
    out.append('</svg>')
    return ''.join(out)


def _number(value):
    if isinstance(value, float) and not value.is_integer():
        return '%.1f' % value
    return '%d' % value
