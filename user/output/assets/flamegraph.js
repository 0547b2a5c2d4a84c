'use strict';
(function () {
  var svg = document.documentElement, NS = svg.namespaceURI;
  var PAD = +svg.getAttribute('data-pad'), W = +svg.getAttribute('data-fw');
  var TOTAL = +svg.getAttribute('data-total'), CW = +svg.getAttribute('data-cw');
  var fg = document.getElementById('frames'), tip = document.getElementById('tip');
  var tipBox = tip.querySelector('rect'), tipText = tip.querySelector('text');
  var details = document.getElementById('details');
  var matched = document.getElementById('matched');
  var reset = document.getElementById('reset');
  var search = document.getElementById('search');
  var frames = [], byG = new Map(), root = null, cur = null;

  function base(loc) {
    return loc.slice(loc.lastIndexOf('/') + 1);
  }

  /* The C side wrote each frame's title as three lines: name, file:line (a C function's: what
   * it is), times. A thread's or the root's frame (class r) and a C function's (class c) are
   * labelled by their name alone. */
  Array.prototype.forEach.call(fg.children, function (g) {
    var t = g.querySelector('title'), lines = t.textContent.split('\n');
    var f = {
      g: g, rect: g.querySelector('rect'), text: g.querySelector('text'),
      x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),
      d: +g.getAttribute('data-d'), name: lines[0], loc: lines[1] || '',
      stats: lines[2] || ''
    };
    f.label = g.classList.contains('r') || g.classList.contains('c') ? f.name :
      f.name + ' (' + base(f.loc) + ')';
    f.key = (f.name + ' ' + f.loc).toLowerCase();
    /* the browser's own tooltip would cover ours */
    g.removeChild(t);
    if (!f.text) {
      f.text = document.createElementNS(NS, 'text');
      /* baseline 12 px below the frame's top, as the C side places it */
      f.text.setAttribute('y', +f.rect.getAttribute('y') + 12);
      g.appendChild(f.text);
    }
    if (f.d === 0)
      root = f;
    frames.push(f);
    byG.set(g, f);
  });

  function fit(f, x, w) {
    var n = Math.floor((w - 6) / CW), cs = Array.from(f.label);

    if (n < 3)
      cs = [];
    else if (cs.length > n)
      cs = cs.slice(0, n - 1).concat('\u2026');
    f.text.textContent = cs.join('');
    f.text.setAttribute('x', (x + 3).toFixed(2));
  }

  function place(f, x, w) {
    f.g.classList.remove('h');
    f.rect.setAttribute('x', (PAD + x).toFixed(2));
    f.rect.setAttribute('width', w.toFixed(2));
    fit(f, PAD + x, w);
  }

  /* z spans the width; its ancestors too (faded); what lies outside it is hidden */
  function zoom(z) {
    cur = z;
    frames.forEach(function (f) {
      f.g.classList.remove('a');
      if (f.d < z.d) {
        if (f.x <= z.x && f.x + f.w >= z.x + z.w) {
          place(f, 0, W);
          f.g.classList.add('a');
        } else {
          f.g.classList.add('h');
        }
      } else if (f.x >= z.x && f.x + f.w <= z.x + z.w) {
        place(f, (f.x - z.x) / z.w * W, f.w / z.w * W);
      } else {
        f.g.classList.add('h');
      }
    });
    reset.classList.toggle('h', z === root);
    hide();
  }

  function unzoom() {
    if (root)
      zoom(root);
  }

  /* Fill the window's width (the file says 1200 px, for viewers without script):
   * the frames are laid out again, text keeps its size. */
  function fill() {
    var vb = svg.viewBox.baseVal, w;

    svg.setAttribute('width', '100%');
    w = Math.floor(svg.getBoundingClientRect().width);
    if (!(w >= 400) || w === vb.width)
      return;
    svg.setAttribute('viewBox', '0 0 ' + w + ' ' + vb.height);
    W = w - 2 * PAD;
    svg.setAttribute('data-fw', W);
    ['title', 'subtitle'].forEach(function (id) {
      document.getElementById(id).setAttribute('x', w / 2);
    });
    matched.setAttribute('x', w - PAD);
    document.getElementById('searchbox').setAttribute('x', w - PAD - 260);
    zoom(cur || root);
  }

  function point(e) {
    var pt = svg.createSVGPoint(), m = svg.getScreenCTM();

    pt.x = e.clientX;
    pt.y = e.clientY;
    return m ? pt.matrixTransform(m.inverse()) : pt;
  }

  function move(e) {
    var p = point(e), b = tipText.getBBox(), vb = svg.viewBox.baseVal;
    var w = b.width + 12, h = tipText.childNodes.length * 15 + 7;
    var x = p.x + 14, y = p.y + 18;

    if (x + w > vb.width)
      x = Math.max(0, p.x - w - 6);
    if (y + h > vb.height)
      y = Math.max(0, p.y - h - 6);
    tip.setAttribute('transform',
      'translate(' + x.toFixed(1) + ',' + y.toFixed(1) + ')');
    tipBox.setAttribute('width', w.toFixed(1));
    tipBox.setAttribute('height', h.toFixed(1));
  }

  function show(f, e) {
    var lines = [f.name, f.loc, f.stats].filter(Boolean);

    while (tipText.firstChild)
      tipText.removeChild(tipText.firstChild);
    lines.forEach(function (s) {
      var ts = document.createElementNS(NS, 'tspan');

      ts.setAttribute('x', '6');
      ts.setAttribute('dy', '15');
      ts.textContent = s;
      tipText.appendChild(ts);
    });
    details.textContent = f.name + (f.loc ? ' (' + f.loc + ')' : '') + ': ' + f.stats;
    tip.classList.remove('h');
    move(e);
  }

  function hide() {
    tip.classList.add('h');
    details.textContent = ' ';
  }

  function frameOf(el) {
    for (; el && el !== fg; el = el.parentNode)
      if (byG.has(el))
        return byG.get(el);
    return null;
  }

  /* Case-insensitive substring of name or file:line. Frames nest or are disjoint,
   * so the union of the matched spans counts recursion once. */
  function find(q) {
    var hits = [], sum = 0, end = -1;

    q = q.trim().toLowerCase();
    frames.forEach(function (f) {
      var m = q !== '' && f.key.indexOf(q) >= 0;

      f.g.classList.toggle('m', m);
      if (m)
        hits.push(f);
    });
    if (!q) {
      matched.textContent = ' ';
      return;
    }
    hits.sort(function (a, b) {
      return a.x - b.x || b.w - a.w;
    });
    hits.forEach(function (f) {
      var e = f.x + f.w;

      if (e > end) {
        sum += e - Math.max(f.x, end);
        end = e;
      }
    });
    matched.textContent = 'Matched: ' + (TOTAL ? 100 * sum / TOTAL : 0).toFixed(2) +
      '% of total (' + hits.length + ' frame' + (hits.length === 1 ? '' : 's') + ')';
  }

  fg.addEventListener('mouseover', function (e) {
    var f = frameOf(e.target);

    if (f)
      show(f, e);
  });
  fg.addEventListener('mousemove', function (e) {
    if (!tip.classList.contains('h'))
      move(e);
  });
  fg.addEventListener('mouseout', function (e) {
    var f = frameOf(e.target);

    if (f && !f.g.contains(e.relatedTarget))
      hide();
  });
  fg.addEventListener('click', function (e) {
    var f = frameOf(e.target);

    if (f)
      zoom(f);
  });
  reset.addEventListener('click', unzoom);
  window.addEventListener('resize', fill);
  fill();
  search.addEventListener('input', function () {
    find(search.value);
  });
  document.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {
      e.preventDefault();
      search.focus();
      search.select();
    } else if (e.key === 'Escape') {
      if (search.value) {
        search.value = '';
        find('');
      } else {
        unzoom();
      }
    }
  });
})();
