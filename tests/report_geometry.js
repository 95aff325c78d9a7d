// SPDX-License-Identifier: MIT
// Measures the report page's plots where Chromium drew them (getBBox, in each SVG's own viewBox
// units, so the numbers do not depend on the window's width) and appends a <pre
// id="geometry">: one line per problem, "BAD plot-ID: what", then "CHECKED n plots m points".
// Appended after report.html by tests/report_plots.sh and tests/report_browser.sh; the page
// itself has no script.
(function () {
  var out = [], plots = 0, points = 0;
  function bad(fig, what) { out.push('BAD ' + fig.id + ': ' + what); }
  function meet(a, b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  }
  function inside(a, b) {
    return a.x >= b.x - 0.5 && a.y >= b.y - 0.5 && a.x + a.width <= b.x + b.width + 0.5 &&
           a.y + a.height <= b.y + b.height + 0.5;
  }
  function txt(b) { return [b.x, b.y, b.width, b.height].map(function (v) { return v.toFixed(1); }).join(','); }
  document.querySelectorAll('figure').forEach(function (fig) {
    var svg = fig.querySelector('svg.plot');
    if (!svg) return;
    plots++;
    var vb = svg.viewBox.baseVal, view = {x: 0, y: 0, width: vb.width, height: vb.height};
    var title = svg.querySelector('text.title').getBBox();
    if (!inside(title, view)) bad(fig, 'the title leaves the chart ' + txt(title));
    var frameEl = svg.querySelector('rect.frame') || svg.querySelector('rect[stroke="#444"]');
    var frame = frameEl ? frameEl.getBBox() : null;
    var legend = svg.querySelector('g.legend');
    if (legend && legend.getBBox().width > 0) {
      var lb = legend.getBBox();
      if (meet(lb, title)) bad(fig, 'the legend ' + txt(lb) + ' overlaps the title ' + txt(title));
      if (frame && meet(lb, frame)) bad(fig, 'the legend ' + txt(lb) + ' overlaps the plot area ' + txt(frame));
      if (!inside(lb, view)) bad(fig, 'the legend ' + txt(lb) + ' leaves the chart ' + txt(view));
      var items = legend.querySelectorAll(':scope > g, :scope > text');
      for (var i = 0; i < items.length; i++)
        for (var k = i + 1; k < items.length; k++)
          if (meet(items[i].getBBox(), items[k].getBBox()))
            bad(fig, 'legend items ' + i + ' and ' + k + ' overlap');
    }
    if (frame) {
      svg.querySelectorAll('polyline.series, polygon.band').forEach(function (line) {
        var pts = line.points;
        for (var i = 0; i < pts.numberOfItems; i++) {
          var p = pts.getItem(i);
          points++;
          if (p.x < frame.x - 0.5 || p.x > frame.x + frame.width + 0.5 ||
              p.y < frame.y - 0.5 || p.y > frame.y + frame.height + 0.5)
            bad(fig, 'point ' + p.x + ',' + p.y + ' outside the plot area ' + txt(frame));
        }
      });
      svg.querySelectorAll('circle.point, path.point, path.marker').forEach(function (m) {
        var b = m.getBBox(), cx = b.x + b.width / 2, cy = b.y + b.height / 2;
        points++;
        if (cx < frame.x - 0.5 || cx > frame.x + frame.width + 0.5 ||
            cy < frame.y - 0.5 || cy > frame.y + frame.height + 0.5)
          bad(fig, 'marker at ' + cx + ',' + cy + ' outside the plot area ' + txt(frame));
      });
    }
    // Curves drawn on each other stay apart: other dash patterns, and a legend note that says so.
    var lines = svg.querySelectorAll('polyline.series');
    for (var i = 0; i < lines.length; i++)
      for (var k = i + 1; k < lines.length; k++)
        if (lines[i].getAttribute('points') == lines[k].getAttribute('points')) {
          if (lines[i].getAttribute('stroke-dasharray') == lines[k].getAttribute('stroke-dasharray'))
            bad(fig, 'series ' + i + ' and ' + k + ' draw the same curve in the same dash pattern');
          if (!svg.querySelector('g.legend text.same'))
            bad(fig, 'series ' + i + ' and ' + k + ' draw the same curve and the legend does not say so');
        }
    var bars = svg.querySelectorAll('rect.bar'), left = Infinity;
    bars.forEach(function (r) { left = Math.min(left, r.getBBox().x); });
    // (A bar chart's labels are the SVG's own right-aligned texts, with or without their class.)
    svg.querySelectorAll(':scope > text.bar-label, :scope > text[text-anchor="end"]').forEach(function (l) {
      var b = l.getBBox();
      if (!inside(b, view)) bad(fig, 'the bar label ' + l.textContent + ' leaves the chart ' + txt(b));
      if (b.x + b.width > left + 0.5) bad(fig, 'the bar label ' + l.textContent + ' runs into the bars');
    });
    var xaxis = svg.querySelector('g.axis.x');
    if (xaxis) {
      var ticks = xaxis.querySelectorAll('text.tick'), label = xaxis.querySelector('text.label');
      var counts = /^(games|epoch|iteration)$/.test(label ? label.textContent : '');
      for (var i = 0; i < ticks.length; i++) {
        if (counts && ticks[i].textContent.indexOf('.') >= 0)
          bad(fig, 'a count axis has the tick ' + ticks[i].textContent);
        if (i > 0 && meet(ticks[i - 1].getBBox(), ticks[i].getBBox()))
          bad(fig, 'x ticks ' + ticks[i - 1].textContent + ' and ' + ticks[i].textContent + ' overlap');
      }
    }
  });
  var pre = document.createElement('pre');
  pre.id = 'geometry';
  pre.textContent = out.concat(['CHECKED ' + plots + ' plots ' + points + ' points']).join('\n');
  document.body.appendChild(pre);
})();
