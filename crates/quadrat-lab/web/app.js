// The quadrat lab's page: draws the frames the server streams over a
// WebSocket, and sends settings and input back as small JSON messages.
// The frame format is documented in src/serve/frame.rs.
'use strict';

(() => {
  const HEADER_LEN = 96;
  const PLAYER_HALF = 18; // half the player's side, in world units
  const Q = 65535; // quantization steps over the world's side

  const FLAG = { PAUSED: 1, BRUTE_FORCE: 2, OBJECTS_OMITTED: 4, LEAVES_TRUNCATED: 8, QUERY: 16, PICKED: 32 };
  const MARK = { BOX: 1, COLLIDING: 2, IN_QUERY: 4, CANDIDATE: 8, CONTACT: 16, PICKED: 32, PLAYER: 64, LARGE: 128 };

  const COLOR = {
    world: '#0d1117',
    node: 'rgba(120, 160, 220, 0.5)',
    object: '#7284a8',
    colliding: '#ff7b54',
    query: '#3fd18f',
    queryFill: 'rgba(63, 209, 143, 0.10)',
    candidate: '#5cc8ff',
    contact: '#ff4fa3',
    player: '#ffd24d',
    playerFill: 'rgba(255, 210, 77, 0.22)',
    picked: '#ffffff',
  };

  const $ = (id) => document.getElementById(id);
  const canvas = $('view');
  const ctx = canvas.getContext('2d', { alpha: false });
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

  // ----- state -----

  const lab = {
    world: 1000,
    limits: null,
    settings: null,
    frame: null, // the latest decoded frame
    fresh: false, // a frame arrived since the last drawing
    showNodes: true,
    query: null, // [x0, y0, x1, y1] in world units, as sent
    drawn: null, // the frame drawn last: { frame, highlighted (objects drawn as query hits), queryHits (the server's answer) }
    stats: { raf: 0, drawn: 0, received: 0, drawMs: 0, drawFps: 0, receiveFps: 0 },
  };
  // For tests and the curious: the page's view of the lab.
  window.lab = lab;

  // ----- connection -----

  let socket = null;

  function connect() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    socket = new WebSocket(`${scheme}://${location.host}/ws`);
    socket.binaryType = 'arraybuffer';
    setStatus('connecting', 'connecting…');
    socket.onmessage = (event) => {
      if (typeof event.data === 'string') {
        onText(JSON.parse(event.data));
      } else {
        onFrame(event.data);
      }
    };
    socket.onclose = (event) => {
      const [short, long] = closeReason(event);
      setStatus('closed', `disconnected: ${short}`);
      showNotice(`${long} Retrying…`);
      setTimeout(connect, 1500);
    };
  }

  // Why the connection closed, short and long, from the close code (the
  // server's are listed in src/serve/protocol.rs) and reason.
  function closeReason({ code, reason }) {
    const why = reason ? `: ${reason}` : '';
    switch (code) {
      case 1001:
        return ['server stopped', 'The lab server is shutting down.'];
      case 1002:
        return ['protocol error', `The lab server closed the connection on a protocol error${why}.`];
      case 1007:
        return ['invalid text', `The lab server closed the connection on invalid text${why}.`];
      case 1009:
        return ['message too big', `The lab server closed the connection on a message too big${why}.`];
      case 1011:
        return ['server error', `The lab server closed the session on an error${why}.`];
      case 4408:
        return ['timed out', `The session timed out${why}.`];
      case 1006:
        return ['connection lost', 'The connection to the lab server was lost, or refused.'];
      default:
        return [`code ${code}`, `The lab server closed the connection (code ${code}${why}).`];
    }
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(message));
    }
  }

  function onText(message) {
    switch (message.type) {
      case 'hello':
        lab.world = message.world;
        lab.limits = message.limits;
        setupLimits(message.limits);
        syncControls(message.settings);
        hideNotice();
        if (lab.query) send({ type: 'query', rect: lab.query });
        break;
      case 'settings':
        syncControls(message.settings);
        say('');
        break;
      case 'error':
        say(message.message, true);
        if (lab.settings) syncControls(lab.settings);
        break;
      default:
        break;
    }
  }

  function onFrame(buffer) {
    const frame = decode(buffer);
    if (!frame) return;
    lab.frame = frame;
    lab.fresh = true;
    lab.stats.received += 1;
    const paused = (frame.h.flags & FLAG.PAUSED) !== 0;
    setStatus(paused ? 'paused' : 'live', paused ? 'paused' : 'live');
    $('pause').textContent = paused ? 'resume' : 'pause';
    $('pause').classList.toggle('on', paused);
  }

  // ----- frames -----

  function decode(buffer) {
    const view = new DataView(buffer);
    if (buffer.byteLength < HEADER_LEN || view.getUint32(0, true) !== 0x3146_4c51) return null; // "QLF1"
    const u32 = (o) => view.getUint32(o, true);
    const f32 = (o) => view.getFloat32(o, true);
    const h = {
      frame: u32(4),
      count: u32(8),
      sent: u32(12),
      leaves: u32(16),
      nodes: u32(20),
      depth: view.getUint8(24),
      flags: view.getUint8(25),
      pairs: u32(28),
      checks: Number(view.getBigUint64(32, true)),
      candidates: Number(view.getBigUint64(40, true)),
      colliding: u32(48),
      queryHits: u32(52),
      playerCandidates: u32(56),
      playerContacts: u32(60),
      picked: u32(64),
      pickedDistance: f32(68),
      updateMs: f32(72),
      pairsMs: f32(76),
      simFps: f32(80),
      player: { x: f32(84), y: f32(88) },
      dropped: u32(92),
    };
    const objectsAt = HEADER_LEN;
    const leavesAt = objectsAt + 8 * h.sent;
    const marksAt = leavesAt + 8 * h.leaves;
    if (buffer.byteLength !== marksAt + h.sent) return null;
    return {
      h,
      objects: u16s(buffer, view, objectsAt, 4 * h.sent),
      leaves: u16s(buffer, view, leavesAt, 4 * h.leaves),
      marks: new Uint8Array(buffer, marksAt, h.sent),
    };
  }

  // Little-endian u16s: a view of the buffer where the machine agrees.
  function u16s(buffer, view, offset, length) {
    if (littleEndian) return new Uint16Array(buffer, offset, length);
    const out = new Uint16Array(length);
    for (let i = 0; i < length; i++) out[i] = view.getUint16(offset + 2 * i, true);
    return out;
  }

  // ----- drawing -----

  const groups = {
    object: [], colliding: [], query: [], contact: [], candidate: [], picked: [],
    largeObject: [], largeColliding: [], largeQuery: [], largeContact: [],
  };

  function draw() {
    const frame = lab.frame;
    const w = canvas.width;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = COLOR.world;
    ctx.fillRect(0, 0, w, canvas.height);
    if (!frame) return;
    const s = w / Q; // pixels per quantization step
    const px = w / lab.world; // pixels per world unit

    // Sort objects into groups by what they are, then draw each group in
    // one go: one path and one fill per colour, whatever the count.
    for (const g in groups) groups[g].length = 0;
    const o = frame.objects;
    const marks = frame.marks;
    let highlighted = 0;
    for (let i = 0; i < marks.length; i++) {
      const m = marks[i];
      if (m & MARK.IN_QUERY) highlighted += 1;
      const large = m & MARK.LARGE;
      if (m & MARK.PLAYER) {
        // Drawn on its own, below.
      } else if (m & MARK.CONTACT) (large ? groups.largeContact : groups.contact).push(i);
      else if (m & MARK.IN_QUERY) (large ? groups.largeQuery : groups.query).push(i);
      else if (m & MARK.COLLIDING) (large ? groups.largeColliding : groups.colliding).push(i);
      else (large ? groups.largeObject : groups.object).push(i);
      if ((m & (MARK.CANDIDATE | MARK.CONTACT)) === MARK.CANDIDATE) groups.candidate.push(i);
      if (m & MARK.PICKED) groups.picked.push(i);
    }
    lab.drawn = { frame: frame.h.frame, highlighted, queryHits: frame.h.queryHits };

    const layers = [
      [groups.object, COLOR.object],
      [groups.colliding, COLOR.colliding],
      [groups.query, COLOR.query],
      [groups.contact, COLOR.contact],
    ];
    // The mixed layout's large objects are see-through, so that the small
    // ones around and under them stay visible.
    const largeLayers = [
      [groups.largeObject, COLOR.object],
      [groups.largeColliding, COLOR.colliding],
      [groups.largeQuery, COLOR.query],
      [groups.largeContact, COLOR.contact],
    ];
    if (marks.length > RASTER_ABOVE) {
      raster(frame, s, layers);
      queryArea(px, 'fill');
      for (const [indices, color] of largeLayers) seeThrough(indices, color, o, marks, s);
    } else {
      queryArea(px, 'fill');
      for (const [indices, color] of largeLayers) seeThrough(indices, color, o, marks, s);
      for (const [indices, color] of layers) fillGroup(indices, color, o, marks, s);
    }
    if (lab.showNodes) drawNodes(frame.leaves, s);
    queryArea(px, 'stroke');

    // The player is see-through, so that its candidates and contacts
    // (mostly under it) show; it is drawn even when the objects are not.
    const p = frame.h.player;
    const half = PLAYER_HALF * px;
    ctx.fillStyle = COLOR.playerFill;
    ctx.fillRect(p.x * px - half, p.y * px - half, 2 * half, 2 * half);
    ctx.strokeStyle = COLOR.player;
    ctx.lineWidth = 2;
    ctx.strokeRect(p.x * px - half, p.y * px - half, 2 * half, 2 * half);
    strokeGroup(groups.candidate, COLOR.candidate, o, marks, s, 1.5, 1);
    strokeGroup(groups.picked, COLOR.picked, o, marks, s, 2, 4);
  }

  function queryArea(px, how) {
    if (!lab.query) return;
    const [x0, y0, x1, y1] = lab.query;
    if (how === 'fill') {
      ctx.fillStyle = COLOR.queryFill;
      ctx.fillRect(x0 * px, y0 * px, (x1 - x0) * px, (y1 - y0) * px);
    } else {
      ctx.strokeStyle = COLOR.query;
      ctx.lineWidth = 1.5;
      ctx.strokeRect(x0 * px, y0 * px, (x1 - x0) * px, (y1 - y0) * px);
    }
  }

  // Many objects: filling paths (anti-aliased) costs too much without a
  // GPU, so the objects are written straight into an image instead, row by
  // row, and put on the canvas in one call. Outlines are drawn on top.
  const RASTER_ABOVE = 3000;
  let image = null;
  let pixels = null;

  function rgba(hex) {
    const v = parseInt(hex.slice(1), 16);
    const [r, g, b] = [(v >> 16) & 255, (v >> 8) & 255, v & 255];
    return littleEndian ? (0xff000000 | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | 0xff) >>> 0;
  }

  function raster(frame, s, layers) {
    const w = canvas.width;
    const h = canvas.height;
    if (!image || image.width !== w || image.height !== h) {
      image = ctx.createImageData(w, h);
      pixels = new Uint32Array(image.data.buffer);
    }
    pixels.fill(rgba(COLOR.world));
    const o = frame.objects;
    const marks = frame.marks;
    for (const [indices, color] of layers) {
      const c = rgba(color);
      for (const i of indices) {
        const k = 4 * i;
        const x = o[k] * s;
        const y = o[k + 1] * s;
        const hx = o[k + 2] * s;
        const hy = o[k + 3] * s;
        if (marks[i] & MARK.BOX) {
          spanRect(x - hx, y - hy, x + hx, y + hy, c, w, h);
        } else {
          spanCircle(x, y, hx, c, w, h);
        }
      }
    }
    ctx.putImageData(image, 0, 0);
  }

  // Pixels whose centres lie in the box; at least one.
  function spanRect(x0, y0, x1, y1, c, w, h) {
    let a = Math.max(0, Math.round(x0));
    let b = Math.min(w, Math.round(x1));
    let top = Math.max(0, Math.round(y0));
    let bottom = Math.min(h, Math.round(y1));
    if (b <= a) { a = Math.max(0, Math.floor((x0 + x1) / 2)); b = Math.min(w, a + 1); }
    if (bottom <= top) { top = Math.max(0, Math.floor((y0 + y1) / 2)); bottom = Math.min(h, top + 1); }
    for (let row = top; row < bottom; row++) pixels.fill(c, row * w + a, row * w + b);
  }

  // Pixels whose centres lie in the disc; at least one.
  function spanCircle(cx, cy, r, c, w, h) {
    if (r < 0.75) {
      spanRect(cx - 0.5, cy - 0.5, cx + 0.5, cy + 0.5, c, w, h);
      return;
    }
    const top = Math.max(0, Math.ceil(cy - r - 0.5));
    const bottom = Math.min(h - 1, Math.floor(cy + r - 0.5));
    const r2 = r * r;
    for (let row = top; row <= bottom; row++) {
      const dy = row + 0.5 - cy;
      const dx = Math.sqrt(Math.max(0, r2 - dy * dy));
      const a = Math.max(0, Math.ceil(cx - dx - 0.5));
      const b = Math.min(w, Math.floor(cx + dx - 0.5) + 1);
      if (b > a) pixels.fill(c, row * w + a, row * w + b);
    }
  }

  // The leaves' cells as 1-pixel outlines on pixel centres, one path.
  function drawNodes(l, s) {
    ctx.beginPath();
    for (let i = 0; i < l.length; i += 4) {
      const x0 = Math.round(l[i] * s) + 0.5;
      const y0 = Math.round(l[i + 1] * s) + 0.5;
      const x1 = Math.round(l[i + 2] * s) + 0.5;
      const y1 = Math.round(l[i + 3] * s) + 0.5;
      ctx.rect(x0, y0, x1 - x0, y1 - y0);
    }
    ctx.strokeStyle = COLOR.node;
    ctx.lineWidth = 1;
    ctx.stroke();
  }

  function fillGroup(indices, color, o, marks, s) {
    if (!indices.length) return;
    ctx.beginPath();
    for (const i of indices) shapePath(o, marks, i, s, 0);
    ctx.fillStyle = color;
    ctx.fill();
  }

  function seeThrough(indices, color, o, marks, s) {
    if (!indices.length) return;
    ctx.globalAlpha = 0.16;
    fillGroup(indices, color, o, marks, s);
    ctx.globalAlpha = 0.9;
    strokeGroup(indices, color, o, marks, s, 1.5, 0);
    ctx.globalAlpha = 1;
  }

  function strokeGroup(indices, color, o, marks, s, width, grow) {
    if (!indices.length) return;
    ctx.beginPath();
    for (const i of indices) shapePath(o, marks, i, s, grow);
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.stroke();
  }

  // Adds object i to the current path, grown by `grow` pixels. Objects
  // smaller than about a pixel become small squares: much faster to fill.
  function shapePath(o, marks, i, s, grow) {
    const k = 4 * i;
    const x = o[k] * s;
    const y = o[k + 1] * s;
    const hx = Math.max(o[k + 2] * s, 0.6) + grow;
    const hy = Math.max(o[k + 3] * s, 0.6) + grow;
    if (marks[i] & MARK.BOX || hx < 1.2) {
      ctx.rect(x - hx, y - hy, 2 * hx, 2 * hy);
    } else {
      ctx.moveTo(x + hx, y);
      ctx.arc(x, y, hx, 0, 2 * Math.PI);
    }
  }

  function drawNotice(frame) {
    if (frame && frame.h.flags & FLAG.OBJECTS_OMITTED) {
      showNotice(`${fmt(frame.h.count)} objects are simulated and counted, but only up to ${fmt(lab.limits ? lab.limits.draw_max : 50000)} are drawn.`);
    } else if (socket && socket.readyState === WebSocket.OPEN) {
      hideNotice();
    }
  }

  // ----- the animation loop -----

  let windowStart = performance.now();
  let windowDrawn = 0;
  let windowReceived = 0;
  let lastFigures = 0;

  function animate(now) {
    lab.stats.raf += 1;
    const running = lab.frame && !(lab.frame.h.flags & FLAG.PAUSED);
    if (lab.fresh || pendingRedraw || running) {
      const t0 = performance.now();
      draw();
      const t1 = performance.now();
      lab.stats.drawMs = 0.8 * lab.stats.drawMs + 0.2 * (t1 - t0);
      lab.stats.drawn += 1;
      lab.fresh = false;
      pendingRedraw = false;
    }
    flushInput();
    if (now - windowStart >= 1000) {
      lab.stats.drawFps = ((lab.stats.drawn - windowDrawn) * 1000) / (now - windowStart);
      lab.stats.receiveFps = ((lab.stats.received - windowReceived) * 1000) / (now - windowStart);
      windowStart = now;
      windowDrawn = lab.stats.drawn;
      windowReceived = lab.stats.received;
    }
    if (now - lastFigures >= 200) {
      lastFigures = now;
      showFigures();
    }
    requestAnimationFrame(animate);
  }

  let pendingRedraw = false;

  // ----- figures -----

  function fmt(n) {
    return Math.round(n).toLocaleString('en-US');
  }

  function ms(v) {
    return v < 10 ? `${v.toFixed(2)} ms` : `${v.toFixed(1)} ms`;
  }

  function showFigures() {
    const frame = lab.frame;
    if (!frame) return;
    const h = frame.h;
    drawNotice(frame);
    const n = h.count + 1; // the player is an object too
    const all = (n * (n - 1)) / 2;
    const brute = (h.flags & FLAG.BRUTE_FORCE) !== 0;
    setText('f-objects', `${fmt(h.count)} + player`);
    setText('f-tree', `${fmt(h.nodes)} nodes · depth ${h.depth}`);
    setText('f-pairs', `${fmt(h.pairs)} · ${fmt(h.colliding)} objects`);
    setText('f-checks', `${brute ? 'brute force · ' : ''}${fmt(h.checks)}`);
    setText('f-all', fmt(all));
    const ratio = h.checks > 0 ? all / h.checks : Infinity;
    const fewer = ratio === Infinity ? 'all' : `${ratio >= 10 ? fmt(ratio) : ratio.toFixed(1)}× fewer`;
    setText('f-saved', `${(100 * (1 - h.checks / all)).toFixed(ratio > 1000 ? 3 : 1)}% · ${fewer}`);
    $('f-saved').classList.toggle('good', ratio > 1.5);
    setText('f-update', ms(h.updateMs));
    setText('f-pairtime', ms(h.pairsMs));
    setText('f-simfps', (h.flags & FLAG.PAUSED) ? 'paused' : `${h.simFps.toFixed(0)} ticks/s`);
    setText('f-drawfps', `${lab.stats.drawFps.toFixed(0)} frames/s · ${lab.stats.drawMs.toFixed(1)} ms`);
    setText('f-query', (h.flags & FLAG.QUERY) ? `${fmt(h.queryHits)} objects` : 'drag on the world');
    setText('f-candidates', `${fmt(h.playerCandidates)} (boxes touch)`);
    setText('f-contacts', `${fmt(h.playerContacts)} (shapes touch)`);
    setText('f-picked', (h.flags & FLAG.PICKED) ? `#${h.picked} · ${h.pickedDistance.toFixed(1)} away` : 'click on the world');
    setText('f-dropped', fmt(h.dropped));
  }

  function setText(id, text) {
    const el = $(id);
    if (el.textContent !== text) el.textContent = text;
  }

  function setStatus(state, text) {
    const el = $('status');
    if (el.dataset.state !== state) el.dataset.state = state;
    if (el.textContent !== text) el.textContent = text;
  }

  function say(text, error = false) {
    const el = $('message');
    el.textContent = text;
    el.classList.toggle('error', error);
  }

  function showNotice(text) {
    const el = $('notice');
    if (el.textContent !== text) el.textContent = text;
    el.hidden = false;
  }

  function hideNotice() {
    $('notice').hidden = true;
  }

  // ----- controls -----

  // The count slider is logarithmic: 0..1000 spans count_min..count_max.
  function countToSlider(count) {
    const { count_min: lo, count_max: hi } = lab.limits;
    return Math.round((1000 * Math.log(count / lo)) / Math.log(hi / lo));
  }

  function sliderToCount(v) {
    const { count_min: lo, count_max: hi } = lab.limits;
    const raw = lo * Math.pow(hi / lo, v / 1000);
    const step = Math.pow(10, Math.max(0, Math.floor(Math.log10(raw)) - 1));
    return Math.min(hi, Math.max(lo, Math.round(raw / step) * step));
  }

  function setupLimits(limits) {
    $('count').min = limits.count_min;
    $('count').max = limits.count_max;
    $('max-items').max = limits.max_items;
    $('max-depth').max = limits.max_depth;
  }

  function syncControls(settings) {
    lab.settings = settings;
    $('count').value = settings.count;
    if (lab.limits) $('count-range').value = countToSlider(settings.count);
    $('scene').value = settings.scene;
    $('size').value = settings.size;
    $('size-out').textContent = `${Number(settings.size).toFixed(2)}×`;
    $('speed').value = settings.speed;
    $('speed-out').textContent = `${Number(settings.speed).toFixed(1)}×`;
    $('max-items').value = settings.max_items;
    $('max-items-range').value = Math.min(settings.max_items, 128);
    $('max-depth').value = settings.max_depth;
    $('max-depth-out').textContent = settings.max_depth;
    for (const radio of document.querySelectorAll('input[name="broad"]')) {
      radio.checked = radio.value === settings.broad_phase;
    }
  }

  function setting(field, value) {
    send({ type: 'settings', [field]: value });
  }

  function wireControls() {
    const countRange = $('count-range');
    countRange.addEventListener('input', () => {
      $('count').value = sliderToCount(Number(countRange.value));
    });
    countRange.addEventListener('change', () => setting('count', sliderToCount(Number(countRange.value))));
    $('count').addEventListener('change', (e) => {
      const v = Number(e.target.value);
      if (Number.isInteger(v)) setting('count', v);
      else say('objects must be a whole number', true);
    });
    $('scene').addEventListener('change', (e) => setting('scene', e.target.value));
    $('reseed').addEventListener('click', () => setting('seed', Math.floor(Math.random() * 2 ** 32)));
    $('size').addEventListener('input', (e) => { $('size-out').textContent = `${Number(e.target.value).toFixed(2)}×`; });
    $('size').addEventListener('change', (e) => setting('size', Number(e.target.value)));
    $('speed').addEventListener('input', (e) => { $('speed-out').textContent = `${Number(e.target.value).toFixed(1)}×`; });
    $('speed').addEventListener('change', (e) => setting('speed', Number(e.target.value)));
    $('max-items-range').addEventListener('input', (e) => { $('max-items').value = e.target.value; });
    $('max-items-range').addEventListener('change', (e) => setting('max_items', Number(e.target.value)));
    $('max-items').addEventListener('change', (e) => setting('max_items', Number(e.target.value)));
    $('max-depth').addEventListener('input', (e) => { $('max-depth-out').textContent = e.target.value; });
    $('max-depth').addEventListener('change', (e) => setting('max_depth', Number(e.target.value)));
    for (const radio of document.querySelectorAll('input[name="broad"]')) {
      radio.addEventListener('change', () => setting('broad_phase', radio.value));
    }
    $('pause').addEventListener('click', togglePause);
    $('step').addEventListener('click', () => send({ type: 'step' }));
    $('clear').addEventListener('click', clearSelection);
    $('nodes').addEventListener('change', (e) => { lab.showNodes = e.target.checked; pendingRedraw = true; });
  }

  function togglePause() {
    const paused = lab.frame ? (lab.frame.h.flags & FLAG.PAUSED) !== 0 : false;
    send({ type: 'pause', paused: !paused });
  }

  function clearSelection() {
    lab.query = null;
    send({ type: 'query', rect: null });
    send({ type: 'pick', at: null });
    pendingRedraw = true;
  }

  // ----- mouse: drag a query rectangle, click to pick -----

  let drag = null; // { x, y, moved } in world units, while the button is down
  let queryDirty = false;

  function worldAt(event) {
    const r = canvas.getBoundingClientRect();
    const x = ((event.clientX - r.left) / r.width) * lab.world;
    const y = ((event.clientY - r.top) / r.height) * lab.world;
    return [x, y];
  }

  function wireMouse() {
    canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      canvas.focus();
      canvas.setPointerCapture(e.pointerId);
      const [x, y] = worldAt(e);
      drag = { x, y, sx: e.clientX, sy: e.clientY, moved: false };
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!drag) return;
      if (!drag.moved && Math.hypot(e.clientX - drag.sx, e.clientY - drag.sy) < 4) return;
      drag.moved = true;
      const [x, y] = worldAt(e);
      lab.query = [Math.min(drag.x, x), Math.min(drag.y, y), Math.max(drag.x, x), Math.max(drag.y, y)];
      queryDirty = true;
      pendingRedraw = true;
    });
    canvas.addEventListener('pointerup', (e) => {
      if (!drag) return;
      if (!drag.moved) {
        send({ type: 'pick', at: worldAt(e) });
      } else {
        queryDirty = true;
      }
      drag = null;
    });
    canvas.addEventListener('contextmenu', (e) => {
      e.preventDefault();
      clearSelection();
    });
  }

  // ----- keyboard: the player, pause, step -----

  const held = new Set();
  let direction = [0, 0];
  const KEYS = {
    ArrowLeft: 'left', a: 'left', A: 'left',
    ArrowRight: 'right', d: 'right', D: 'right',
    ArrowUp: 'up', w: 'up', W: 'up',
    ArrowDown: 'down', s: 'down', S: 'down',
  };

  // Keys that belong to the focused control: anything typed into a field,
  // and Space or Enter on a button (which presses it).
  function forControl(e) {
    const t = e.target;
    if (t instanceof HTMLButtonElement) return e.key === ' ' || e.key === 'Enter';
    return t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement;
  }

  function steer() {
    const dx = (held.has('right') ? 1 : 0) - (held.has('left') ? 1 : 0);
    const dy = (held.has('down') ? 1 : 0) - (held.has('up') ? 1 : 0);
    if (dx !== direction[0] || dy !== direction[1]) {
      direction = [dx, dy];
      send({ type: 'player', dx, dy });
    }
  }

  function wireKeys() {
    window.addEventListener('keydown', (e) => {
      if (forControl(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const key = KEYS[e.key];
      if (key) {
        e.preventDefault();
        held.add(key);
        steer();
        return;
      }
      if (e.repeat) return;
      if (e.key === ' ') { e.preventDefault(); togglePause(); }
      else if (e.key === 'n' || e.key === 'N') send({ type: 'step' });
      else if (e.key === 't' || e.key === 'T') { $('nodes').click(); }
      else if (e.key === 'Escape') clearSelection();
    });
    window.addEventListener('keyup', (e) => {
      const key = KEYS[e.key];
      if (key) {
        held.delete(key);
        steer();
      }
    });
    window.addEventListener('blur', () => {
      held.clear();
      steer();
    });
    document.addEventListener('visibilitychange', () => {
      // A hidden tab stops its player (keys may be released unseen).
      if (document.hidden) {
        held.clear();
        steer();
      }
    });
  }

  // At most one query message per animation frame while dragging.
  function flushInput() {
    if (queryDirty && lab.query) {
      queryDirty = false;
      send({ type: 'query', rect: lab.query.map((v) => Math.round(v * 100) / 100) });
    }
  }

  // ----- layout -----

  function fit() {
    const world = $('world');
    const side = Math.max(100, Math.floor(Math.min(world.clientWidth, world.clientHeight)));
    const ratio = window.devicePixelRatio || 1;
    canvas.style.width = `${side}px`;
    canvas.style.height = `${side}px`;
    canvas.width = Math.round(side * ratio);
    canvas.height = Math.round(side * ratio);
    $('key').style.width = `${side}px`;
    pendingRedraw = true;
  }

  // ----- start -----

  wireControls();
  wireMouse();
  wireKeys();
  new ResizeObserver(fit).observe($('world'));
  fit();
  connect();
  requestAnimationFrame(animate);
})();
