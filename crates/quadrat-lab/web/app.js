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

  // The decoder's picture: what the frames so far add up to. Each frame
  // says only what changed since the one before (see src/serve/frame.rs,
  // which this code follows section by section); a key frame starts afresh.
  let picture = null;
  const FRAME_HEADER_LEN = 168;
  const SECTION = { KEY: 1, SIZES: 2, TREE: 4, TILES: 8 };
  // Flag bits past the first six (FLAG, above).
  const MORE_FLAGS = { BRUTE_ESTIMATED: 64, FULL_PASS: 128 };

  function decode(buffer) {
    try {
      return decodeFrame(buffer);
    } catch (e) {
      return null; // a frame that does not parse is dropped, the picture kept
    }
  }

  function decodeFrame(buffer) {
    const view = new DataView(buffer);
    if (buffer.byteLength < FRAME_HEADER_LEN || view.getUint32(0, true) !== 0x3246_4c51) return null; // "QLF2"
    const u32 = (o) => view.getUint32(o, true);
    const u64 = (o) => Number(view.getBigUint64(o, true));
    const f32 = (o) => view.getFloat32(o, true);
    const h = {
      frame: u32(4),
      count: u32(8),
      sent: u32(12),
      leaves: u32(16),
      nodes: u32(20),
      depth: view.getUint8(24),
      flags: view.getUint8(25),
      sections: view.getUint8(26),
      pairs: u32(28),
      checks: u64(32),
      candidates: u64(40),
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
      treeTests: u64(96),
      treeBoundTests: u64(104),
      sweepTests: u64(112),
      bruteTests: u64(120),
      treeMs: f32(128),
      sweepMs: f32(132),
      bruteMs: f32(136),
      exactMs: f32(140),
      moved: u32(144),
      stepCandidates: u32(148),
      stepExact: u32(152),
      tiles: u32(156),
      tilesVersion: u32(160),
      touched: u32(164),
    };
    const key = (h.sections & SECTION.KEY) !== 0;
    const base = key ? null : picture;
    const n = h.sent;
    if (!key && (!base || base.n !== n)) return null;
    const r = reader(buffer, FRAME_HEADER_LEN);

    // 1. Positions: absolute in a key frame; else each object's move as a
    // change from its move in the frame before (4 bits: -1, 0 or 1 on each
    // axis), and a list of the objects whose move changed more.
    let pos;
    let steps;
    if (key) {
      pos = new Uint16Array(2 * n);
      for (let i = 0; i < 2 * n; i++) pos[i] = r.u16();
      steps = new Int32Array(2 * n);
    } else {
      pos = base.pos.slice();
      steps = base.steps.slice();
      const far = r.varint();
      const listed = new Map();
      for (let k = 0; k < far; k++) {
        const i = r.varint();
        if (i >= n) return null;
        listed.set(i, [r.u16(), r.u16()]);
      }
      const codes = r.bytes(Math.ceil(n / 2));
      for (let i = 0; i < n; i++) {
        const code = (codes[i >> 1] >> (4 * (i & 1))) & 15;
        const x = pos[2 * i];
        const y = pos[2 * i + 1];
        let nx;
        let ny;
        if (code === 15) {
          const p = listed.get(i);
          if (!p) return null;
          [nx, ny] = p;
        } else if (code <= 8 && !listed.has(i)) {
          nx = clampQ(x + steps[2 * i] + (code % 3) - 1);
          ny = clampQ(y + steps[2 * i + 1] + Math.floor(code / 3) - 1);
        } else {
          return null;
        }
        steps[2 * i] = nx - x;
        steps[2 * i + 1] = ny - y;
        pos[2 * i] = nx;
        pos[2 * i + 1] = ny;
      }
    }
    // 2. Sizes, when they changed.
    let sizes = base ? base.sizes : null;
    if (h.sections & SECTION.SIZES) {
      sizes = new Uint16Array(2 * n);
      for (let i = 0; i < 2 * n; i++) sizes[i] = r.u16();
    }
    if (!sizes) return null;
    // 3. Marks: all of them, or the changed ones.
    let marks;
    const marksMode = r.u8();
    if (marksMode === 0) {
      marks = r.bytes(n).slice();
    } else if (marksMode === 1 && base) {
      marks = base.marks.slice();
      r.changes(marks, () => r.u8());
    } else {
      return null;
    }
    // 4. The tree's shape, when it changed: leaves' cells and depths.
    const brute = (h.flags & FLAG.BRUTE_FORCE) !== 0;
    let tree = base && !brute ? base.tree : null;
    if (h.sections & SECTION.TREE) {
      const p = r.varint();
      tree = leafCells(r.bytes(Math.ceil(p / 8)), p);
      if (!tree) return null;
    } else if (brute) {
      tree = null;
    }
    if (!brute && !tree) return null;
    const leafCount = tree ? tree.depth.length : 0;
    if (leafCount !== h.leaves) return null;
    // 5. Leaf items: all, the changed ones, or none changed.
    let leafItems = new Uint32Array(0);
    if (!brute) {
      const mode = r.u8();
      const old = base && base.leafItems.length === leafCount && !(h.sections & SECTION.TREE) ? base.leafItems : null;
      if (mode === 0) {
        leafItems = new Uint32Array(leafCount);
        for (let i = 0; i < leafCount; i++) leafItems[i] = r.varint();
      } else if (mode === 1 && old) {
        leafItems = old.slice();
        r.changes(leafItems, () => r.varint());
      } else if (mode === 2 && old) {
        leafItems = old;
      } else {
        return null;
      }
    }
    // 6. Tiles, once per version.
    let tiles = base ? base.tiles : null;
    if (h.sections & SECTION.TILES) {
      const k = r.varint();
      const boxes = new Uint16Array(4 * k);
      for (let i = 0; i < 4 * k; i++) boxes[i] = r.u16();
      tiles = { version: h.tilesVersion, boxes };
    } else if (!tiles || tiles.version !== h.tilesVersion) {
      if (h.tilesVersion !== 0) return null;
      tiles = null;
    }
    // 7. Touched tiles.
    const touched = new Uint32Array(h.touched);
    let previous = -1;
    for (let i = 0; i < h.touched; i++) {
      previous += 1 + r.varint();
      if (!tiles || previous >= tiles.boxes.length / 4) return null;
      touched[i] = previous;
    }
    if (r.at !== buffer.byteLength) return null;

    picture = { n, pos, steps, sizes, marks, tree, leafItems, tiles };
    const objects = new Uint16Array(4 * n);
    for (let i = 0; i < n; i++) {
      objects[4 * i] = pos[2 * i];
      objects[4 * i + 1] = pos[2 * i + 1];
      objects[4 * i + 2] = sizes[2 * i];
      objects[4 * i + 3] = sizes[2 * i + 1];
    }
    return {
      h,
      objects,
      marks,
      leaves: tree ? tree.cells : new Uint16Array(0),
      leafItems,
      leafDepth: tree ? tree.depth : new Uint8Array(0),
      tiles: tiles ? { version: tiles.version, boxes: tiles.boxes, touched } : null,
    };
  }

  function clampQ(v) {
    return v < 0 ? 0 : v > Q ? Q : v;
  }

  // A cursor over a frame's bytes; reading past the end throws.
  function reader(buffer, at) {
    const bytes = new Uint8Array(buffer);
    const r = {
      at,
      need(k) {
        if (r.at + k > bytes.length) throw new Error('the frame ends early');
      },
      u8() {
        r.need(1);
        return bytes[r.at++];
      },
      u16() {
        r.need(2);
        const v = bytes[r.at] | (bytes[r.at + 1] << 8);
        r.at += 2;
        return v;
      },
      bytes(k) {
        r.need(k);
        const out = bytes.subarray(r.at, r.at + k);
        r.at += k;
        return out;
      },
      // LEB128, as a Number (exact below 2^53).
      varint() {
        let v = 0;
        for (let scale = 1; scale < 2 ** 56; scale *= 128) {
          const b = r.u8();
          v += (b & 0x7f) * scale;
          if (b < 0x80) return v;
        }
        throw new Error('a varint too long');
      },
      // Changed entries: a count, then (gap, value) each.
      changes(into, value) {
        const m = r.varint();
        let i = -1;
        for (let k = 0; k < m; k++) {
          i += 1 + r.varint();
          if (i >= into.length) throw new Error('a changed entry out of range');
          into[i] = value();
        }
      },
    };
    return r;
  }

  // The leaves of a tree given by its shape (one bit a node in pre-order,
  // low bit first; 1 for a node split into four): each leaf's cell,
  // quantized, and its depth. The root's cell is the world.
  function leafCells(bits, p) {
    const cells = [];
    const depth = [];
    const stack = [[0, 0, lab.world, lab.world, 0]];
    let k = 0;
    const q = (v) => Math.min(Q, Math.max(0, Math.round((v * Q) / lab.world)));
    while (stack.length) {
      const [x0, y0, x1, y1, d] = stack.pop();
      if (k >= p) return null;
      const split = (bits[k >> 3] >> (k & 7)) & 1;
      k += 1;
      if (split) {
        if (d >= 32) return null;
        const mx = (x0 + x1) / 2;
        const my = (y0 + y1) / 2;
        // Children 3, 2, 1, 0 pushed so that 0 (low x, low y) comes first.
        stack.push([mx, my, x1, y1, d + 1], [x0, my, mx, y1, d + 1], [mx, y0, x1, my, d + 1], [x0, y0, mx, my, d + 1]);
      } else {
        cells.push(q(x0), q(y0), q(x1), q(y1));
        depth.push(d);
      }
    }
    if (k !== p) return null;
    return { cells: Uint16Array.from(cells), depth: Uint8Array.from(depth) };
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

  // Large counts in a few characters: 12,502,500 as 12.5 M.
  function compact(n) {
    if (n >= 1e9) return `${(n / 1e9).toFixed(n >= 1e10 ? 0 : 1)} G`;
    if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 1 : 2)} M`;
    return fmt(n);
  }

  function plural(n, one, many) {
    return `${fmt(n)} ${n === 1 ? one : many}`;
  }

  function times(a, b) {
    if (!(a > 0) || !(b > 0)) return '–';
    const r = b / a;
    return r >= 10 ? `${fmt(r)}×` : `${r.toFixed(1)}×`;
  }

  function showFigures() {
    const frame = lab.frame;
    if (!frame) return;
    const h = frame.h;
    drawNotice(frame);
    const brute = (h.flags & FLAG.BRUTE_FORCE) !== 0;
    const level = h.tilesVersion !== 0;
    const estimated = (h.flags & 64) !== 0; // BRUTE_ESTIMATED
    const fullPass = (h.flags & 128) !== 0; // FULL_PASS
    setText('f-objects', level ? `${fmt(h.count)} movers + player · ${plural(h.tiles, 'tile', 'tiles')}` : `${fmt(h.count)} + player`);
    setText('f-tree', brute ? 'not kept (brute force)' : `${plural(h.nodes, 'node', 'nodes')} · depth ${h.depth}`);
    setText('f-pairs', `${fmt(h.pairs)} · ${plural(h.colliding, 'object', 'objects')}`);
    setText('f-checks', level ? `level step · ${compact(h.stepCandidates)}` : `${brute ? 'brute force' : 'quadtree'} · ${compact(h.checks)}`);
    const none = level ? 'n/a in the level' : '–';
    setText('f-tree-tests', brute || level ? (brute ? 'no tree kept' : none) : `${compact(h.treeTests)} · ${ms(h.treeMs)}`);
    setText('f-sweep', level ? none : `${compact(h.sweepTests)} · ${ms(h.sweepMs)}`);
    setText('f-brute', level ? none : `${compact(h.bruteTests)} · ${estimated ? '≈ ' : ''}${ms(h.bruteMs)}`);
    setText('f-saved', brute || level ? '–' : `${times(h.treeTests, h.sweepTests)} vs sweep · ${times(h.treeTests, h.bruteTests)} vs all`);
    $('f-saved').classList.toggle('good', !brute && !level && h.treeTests > 0 && h.treeTests * 1.5 < h.sweepTests);
    setText('f-all', fmt(h.candidates));
    setText('f-update', brute ? 'none (brute force)' : ms(h.updateMs));
    setText('f-pairtime', level ? ms(h.pairsMs) : `${ms(h.pairsMs)} (exact ${ms(h.exactMs)})`);
    setText('f-moved', level ? `${plural(h.moved, 'body', 'bodies')} moved` : 'level scene only');
    setText('f-stepwork', level ? `${fmt(h.stepCandidates)} pairs · ${fmt(h.stepExact)} exact · ${fullPass ? 'full pass' : 'incremental'}` : '–');
    setText('f-simfps', (h.flags & FLAG.PAUSED) ? 'paused' : `${h.simFps.toFixed(0)} ticks/s`);
    setText('f-drawfps', `${lab.stats.drawFps.toFixed(0)} frames/s · ${lab.stats.drawMs.toFixed(1)} ms`);
    setText('f-query', (h.flags & FLAG.QUERY) ? plural(h.queryHits, 'object', 'objects') : 'drag on the world');
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
