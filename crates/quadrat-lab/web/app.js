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
    tile: '#3a4356',
    touched: '#e0b050',
    hover: '#c79bff',
  };

  const $ = (id) => document.getElementById(id);
  const canvas = $('view');
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

  // Two renderers draw every object at every count: WebGL2 on a GPU, and
  // the 2D canvas, objects written straight into pixels, where WebGL runs
  // in software (SwiftShader, llvmpipe: headless Chromium without a GPU
  // draws 100,000 instanced quads at about one frame per second, the
  // pixel path at several times that). ?renderer=webgl or ?renderer=2d
  // chooses one.
  const GL_OPTIONS = { alpha: false, antialias: false, depth: false, stencil: false, preserveDrawingBuffer: false };
  const glRenderer = (() => {
    const probe = document.createElement('canvas').getContext('webgl2');
    if (!probe) return null;
    const info = probe.getExtension('WEBGL_debug_renderer_info');
    const name = String(probe.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : probe.RENDERER));
    const lose = probe.getExtension('WEBGL_lose_context');
    if (lose) lose.loseContext();
    return name;
  })();
  const softwareGl = glRenderer !== null && /swiftshader|llvmpipe|software|basic render/i.test(glRenderer);
  const asked = new URLSearchParams(location.search).get('renderer');
  const useGl = glRenderer !== null && asked !== '2d' && (asked === 'webgl' || !softwareGl);
  const gl = useGl ? canvas.getContext('webgl2', GL_OPTIONS) : null;
  const ctx = gl ? null : canvas.getContext('2d', { alpha: false });

  // ----- state -----

  const lab = {
    world: 1000,
    limits: null,
    settings: null,
    frame: null, // the latest decoded frame
    fresh: false, // a frame arrived since the last drawing
    showNodes: true,
    query: null, // [x0, y0, x1, y1] in world units, as sent
    drawn: null, // the frame drawn last: { frame, highlighted (objects drawn as query hits), queryHits (the server's answer), objects (records drawn) }
    renderer: gl ? 'WebGL' : softwareGl ? '2D canvas (WebGL here is software)' : '2D canvas',
    glRenderer, // what WebGL runs on here, or null without WebGL2
    // The view: zoom ≥ 1 and the world point (as a fraction of its side)
    // at the canvas' top left corner.
    view: { zoom: 1, x: 0, y: 0 },
    cursor: null, // [x, y] in world units, while the pointer is over the world
    hover: null, // the leaf under the cursor: { index, depth, items, bounds: [x0, y0, x1, y1] }
    connected: false,
    retry: { delay: 0, at: 0 }, // the next attempt, while disconnected
    retries: [], // the delays waited since the last hello, in ms
    stats: { raf: 0, drawn: 0, received: 0, drawMs: 0, drawFps: 0, receiveFps: 0 },
  };
  // For tests and the curious: the page's view of the lab.
  window.lab = lab;

  // ----- connection -----

  const RETRY_FIRST = 1000;
  const RETRY_MOST = 30_000;
  let socket = null;
  let retryDelay = RETRY_FIRST;
  let retryTimer = 0;
  let countdownTimer = 0;

  function connect() {
    clearTimeout(retryTimer);
    clearInterval(countdownTimer);
    lab.retry = { delay: 0, at: 0 };
    $('retry-line').hidden = true;
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    socket = ws;
    ws.binaryType = 'arraybuffer';
    setStatus('connecting', 'connecting…');
    ws.onmessage = (event) => {
      if (ws !== socket) return;
      if (typeof event.data === 'string') {
        onText(JSON.parse(event.data));
      } else {
        onFrame(event.data);
      }
    };
    ws.onclose = (event) => {
      if (ws !== socket) return;
      const [short, long] = closeReason(event);
      setConnected(false);
      setStatus('closed', short);
      lab.closed = { code: event.code, reason: event.reason, short };
      scheduleRetry(long);
    };
  }

  // Retries back off: 1 s, doubling up to 30 s, with a countdown and a
  // button that tries at once. A connection that got as far as `hello`
  // starts again from 1 s.
  function scheduleRetry(why) {
    const delay = retryDelay;
    retryDelay = Math.min(RETRY_MOST, retryDelay * 2);
    lab.retry = { delay, at: performance.now() + delay };
    lab.retries.push(delay);
    showNotice(why);
    $('retry-line').hidden = false;
    const tick = () => {
      const left = Math.max(0, lab.retry.at - performance.now());
      setText('retry-in', `Retrying in ${Math.ceil(left / 1000)} s.`);
    };
    tick();
    countdownTimer = setInterval(tick, 250);
    retryTimer = setTimeout(connect, delay);
  }

  function setConnected(on) {
    lab.connected = on;
    $('controls').disabled = !on;
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
        return ['timed out', `The session timed out: the server heard nothing from this page for too long${why}.`];
      case 4429:
        return ['too many tabs', `The lab server has no free session (${reason || 'too many tabs'}). Close another lab tab, or start the server with a higher --max-sessions.`];
      case 4507:
        return ['server full', `The lab server has no room for this tab's objects (${reason || 'server full'}). Close another lab tab, lower its object or tile counts or their size, or start the server with a higher --max-bodies.`];
      case 4403:
        return ['origin refused', `The lab server refused this page's origin${why}. Open the page at the address the server printed.`];
      case 4000:
        return ['frame unreadable', `This page could not read a frame${why}; each frame builds on the one before, so it reconnects for a fresh start.`];
      case 1006:
        return ['connection lost', 'The connection to the lab server was lost, or refused: is the server running?'];
      default:
        return [`code ${code}`, `The lab server closed the connection (code ${code}${why}).`];
    }
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  function onText(message) {
    switch (message.type) {
      case 'hello':
        lab.world = message.world;
        lab.limits = message.limits;
        retryDelay = RETRY_FIRST;
        lab.retries = [];
        setupLimits(message.limits);
        syncControls(message.settings);
        setConnected(true);
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
    if (!frame) {
      // Later frames build on this one: start afresh with a key frame.
      if (socket && socket.readyState === WebSocket.OPEN) socket.close(4000, 'out of step with the server');
      return;
    }
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

  // The view: zoom and pan.

  const ZOOM_MOST = 1024;

  // Keeps the view inside the world.
  function clampView() {
    const v = lab.view;
    v.zoom = Math.min(ZOOM_MOST, Math.max(1, v.zoom));
    const most = 1 - 1 / v.zoom;
    v.x = Math.min(most, Math.max(0, v.x));
    v.y = Math.min(most, Math.max(0, v.y));
    setText('zoom', `zoom ${v.zoom < 10 ? v.zoom.toFixed(1).replace(/\.0$/, '') : Math.round(v.zoom)}×`);
    pendingRedraw = true;
  }

  // Zooms by `factor` keeping the point at (fx, fy), fractions of the
  // canvas, where it is.
  function zoomAt(factor, fx, fy) {
    const v = lab.view;
    const ux = v.x + fx / v.zoom;
    const uy = v.y + fy / v.zoom;
    v.zoom = Math.min(ZOOM_MOST, Math.max(1, v.zoom * factor));
    v.x = ux - fx / v.zoom;
    v.y = uy - fy / v.zoom;
    clampView();
  }

  function resetView() {
    lab.view = { zoom: 1, x: 0, y: 0 };
    clampView();
  }

  // The canvas' side in pixels (it is square).
  const side = () => canvas.width;

  // The leaf under the cursor.

  function findHover(frame) {
    lab.hover = null;
    if (!lab.cursor || !frame || frame.h.flags & FLAG.BRUTE_FORCE) return;
    const l = frame.leaves;
    const qx = (lab.cursor[0] / lab.world) * Q;
    const qy = (lab.cursor[1] / lab.world) * Q;
    let best = -1;
    for (let i = 0; i < l.length; i += 4) {
      if (qx >= l[i] && qx <= l[i + 2] && qy >= l[i + 1] && qy <= l[i + 3]) {
        // The smallest cell holding the point (cells on a border touch).
        if (best < 0 || l[i + 2] - l[i] < l[best + 2] - l[best]) best = i;
      }
    }
    if (best < 0) return;
    const k = best / 4;
    const width = l[best + 2] - l[best];
    const depth = frame.leafDepth ? frame.leafDepth[k] : Math.max(0, Math.round(Math.log2(Q / Math.max(1, width))));
    const items = frame.leafItems ? frame.leafItems[k] : null;
    const scale = lab.world / Q;
    const bounds = [l[best] * scale, l[best + 1] * scale, l[best + 2] * scale, l[best + 3] * scale];
    lab.hover = { index: k, depth, items, bounds };
  }

  function showHover() {
    const h = lab.hover;
    let text;
    if (!lab.cursor) text = 'point at the world to see the node under the cursor';
    else if (!h) text = lab.frame && lab.frame.h.flags & FLAG.BRUTE_FORCE ? 'brute force: no tree is kept' : 'no leaf under the cursor';
    else {
      const b = h.bounds.map((v) => v.toFixed(v < 100 && h.depth > 6 ? 2 : 1));
      const items = h.items === null ? '' : ` · ${fmt(h.items)} ${h.items === 1 ? 'item' : 'items'}`;
      text = `leaf at depth ${h.depth}${items} · x ${b[0]}–${b[2]}, y ${b[1]}–${b[3]}`;
    }
    setText('hover', text);
  }

  // What is drawn, and how.
  function showDrawn(frame, records) {
    let text;
    if (!frame) text = '–';
    else {
      const objects = Math.max(0, records - 1);
      const all = objects >= frame.h.count;
      const what = all
        ? `all ${fmt(frame.h.count)} objects + player`
        : records === 0
          ? `no objects: the server sent none of the ${fmt(frame.h.count)}`
          : `${fmt(objects)} of ${fmt(frame.h.count)} objects`;
      const count = (n, one, many) => `${fmt(n)} ${n === 1 ? one : many}`;
      const tiles = frame.tiles ? ` · ${count(frame.tiles.boxes.length / 4, 'tile', 'tiles')}` : '';
      const leaves = frame.leaves.length / 4;
      const nodes = lab.showNodes && leaves ? ` · ${count(leaves, 'leaf', 'leaves')}` : '';
      text = `drawn: ${what}${tiles}${nodes} · ${lab.renderer}`;
    }
    setText('drawn', text);
  }

  // Objects drawn on top of the rest, so they are always visible: query
  // hits, the player's contacts and candidates, the pick.
  const ON_TOP = MARK.IN_QUERY | MARK.CONTACT | MARK.CANDIDATE | MARK.PICKED;
  let topObjects = new Uint16Array(0);
  let topMarks = new Uint8Array(0);
  let topCount = 0;

  // Sorts out what goes on top, counts query hits, and returns nothing.
  function collectTop(frame) {
    const o = frame.objects;
    const marks = frame.marks;
    let n = 0;
    let highlighted = 0;
    for (let i = 0; i < marks.length; i++) {
      const m = marks[i];
      if (m & MARK.IN_QUERY) highlighted += 1;
      if (m & ON_TOP && !(m & MARK.PLAYER)) {
        if (n === topMarks.length) {
          const grown = Math.max(256, 2 * n);
          const no = new Uint16Array(4 * grown);
          no.set(topObjects);
          const nm = new Uint8Array(grown);
          nm.set(topMarks);
          topObjects = no;
          topMarks = nm;
        }
        topObjects.set(o.subarray(4 * i, 4 * i + 4), 4 * n);
        topMarks[n] = m;
        n += 1;
      }
    }
    topCount = n;
    lab.drawn = { frame: frame.h.frame, highlighted, queryHits: frame.h.queryHits, objects: marks.length };
  }

  // Each animation frame: the frame, with WebGL or the 2D canvas.

  function draw() {
    const frame = lab.frame;
    if (frame) {
      collectTop(frame);
      findHover(frame);
    }
    if (gl) glDraw(frame);
    else draw2d(frame);
    showHover();
    showDrawn(frame, frame ? frame.marks.length : 0);
  }

  function rgbaOf(css) {
    if (css.startsWith('#')) {
      const v = parseInt(css.slice(1), 16);
      return [((v >> 16) & 255) / 255, ((v >> 8) & 255) / 255, (v & 255) / 255, 1];
    }
    const [r, g, b, a] = css.match(/[\d.]+/g).map(Number);
    return [r / 255, g / 255, b / 255, a === undefined ? 1 : a];
  }

  // ----- drawing with WebGL2 -----
  //
  // One instanced program draws everything: each instance is a box or a
  // circle (centre and half size, or a cell's corners) as a fraction of
  // the world's side, widened to at least a pixel or so, filled or
  // outlined with a distance test in the fragment shader. Objects are
  // uploaded as the frame's own u16 arrays; their colour comes from their
  // marks. Static tiles are drawn once per version and view into a
  // texture, which each frame then copies.

  const VERTEX = `#version 300 es
layout(location = 0) in vec2 a_corner;
layout(location = 1) in vec4 a_box;
layout(location = 2) in float a_mark;
uniform vec3 u_view;
uniform float u_side;
uniform bool u_corners;
uniform float u_minHalf;
uniform float u_grow;
uniform int u_only;
uniform int u_skip;
out vec2 v_local;
flat out vec2 v_half;
flat out int v_mark;
void main() {
  int m = int(a_mark + 0.5);
  if ((u_only != 0 && (m & u_only) == 0) || (m & u_skip) != 0) {
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    return;
  }
  vec2 c = u_corners ? (a_box.xy + a_box.zw) * 0.5 : a_box.xy;
  vec2 h = u_corners ? (a_box.zw - a_box.xy) * 0.5 : a_box.zw;
  float px = u_side * u_view.x;
  vec2 hp = max(h * px, vec2(u_minHalf)) + u_grow;
  vec2 local = a_corner * (hp + 1.0);
  vec2 screen = (c - u_view.yz) * px + local;
  gl_Position = vec4(screen.x / u_side * 2.0 - 1.0, 1.0 - screen.y / u_side * 2.0, 0.0, 1.0);
  v_local = local;
  v_half = hp;
  v_mark = m;
}`;

  const FRAGMENT = `#version 300 es
precision highp float;
in vec2 v_local;
flat in vec2 v_half;
flat in int v_mark;
uniform float u_ring;
uniform vec4 u_color;
uniform vec4 u_palette[4];
out vec4 outColor;
void main() {
  bool round = (v_mark & 1) == 0 && v_half.x >= 1.2;
  vec2 q = abs(v_local) - v_half;
  float d = round ? length(v_local) - v_half.x : max(q.x, q.y);
  float cover = u_ring > 0.0
    ? clamp(u_ring * 0.5 + 0.5 - abs(d + u_ring * 0.5), 0.0, 1.0)
    : clamp(0.5 - d, 0.0, 1.0);
  if (cover <= 0.0) discard;
  vec4 c = u_color;
  if (c.a < 0.0) {
    c = (v_mark & 16) != 0 ? u_palette[3] : (v_mark & 4) != 0 ? u_palette[2] : (v_mark & 2) != 0 ? u_palette[1] : u_palette[0];
    if ((v_mark & 128) != 0) c.a *= d > -1.5 ? 0.9 : 0.16;
  }
  outColor = vec4(c.rgb, c.a * cover);
}`;

  const COPY_VERTEX = `#version 300 es
layout(location = 0) in vec2 a_corner;
out vec2 v_uv;
void main() { v_uv = a_corner * 0.5 + 0.5; gl_Position = vec4(a_corner, 0.0, 1.0); }`;

  const COPY_FRAGMENT = `#version 300 es
precision mediump float;
in vec2 v_uv;
uniform sampler2D u_texture;
out vec4 outColor;
void main() { outColor = texture(u_texture, v_uv); }`;

  const BY_MARK = [0, 0, 0, -1];
  let g = null; // the WebGL objects, made on first use

  function program(vertex, fragment) {
    const p = gl.createProgram();
    for (const [type, text] of [[gl.VERTEX_SHADER, vertex], [gl.FRAGMENT_SHADER, fragment]]) {
      const s = gl.createShader(type);
      gl.shaderSource(s, text);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      gl.attachShader(p, s);
    }
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
    const u = {};
    const n = gl.getProgramParameter(p, gl.ACTIVE_UNIFORMS);
    for (let i = 0; i < n; i++) {
      const name = gl.getActiveUniform(p, i).name.replace('[0]', '');
      u[name] = gl.getUniformLocation(p, name);
    }
    return { p, u };
  }

  function glSetup() {
    const shapes = program(VERTEX, FRAGMENT);
    const copy = program(COPY_VERTEX, COPY_FRAGMENT);
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const corners = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, corners);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
    gl.vertexAttribDivisor(1, 1);
    gl.vertexAttribDivisor(2, 1);
    const buffer = () => gl.createBuffer();
    g = {
      shapes, copy, vao,
      objects: buffer(), marks: buffer(), leaves: buffer(), top: buffer(), topMarks: buffer(),
      tiles: buffer(), touched: buffer(), single: buffer(),
      tilesVersion: null, tilesKey: '', tilesCount: 0, texture: null, fbo: null, textureSide: 0,
      touchedBoxes: new Uint16Array(0),
      palette: new Float32Array([COLOR.object, COLOR.colliding, COLOR.query, COLOR.contact].flatMap(rgbaOf)),
    };
    gl.useProgram(shapes.p);
    gl.uniform4fv(shapes.u.u_palette, g.palette);
    gl.enable(gl.BLEND);
    gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
  }

  // Instances from a u16 array (normalized: fractions of the world) and,
  // when given, a u8 array of marks; otherwise every instance has `mark`.
  function instances(buffer, data, normalized) {
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    if (data) gl.bufferData(gl.ARRAY_BUFFER, data, gl.STREAM_DRAW);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 4, normalized ? gl.UNSIGNED_SHORT : gl.FLOAT, normalized, 0, 0);
  }

  function marksFrom(buffer, data) {
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    if (data) gl.bufferData(gl.ARRAY_BUFFER, data, gl.STREAM_DRAW);
    gl.enableVertexAttribArray(2);
    gl.vertexAttribPointer(2, 1, gl.UNSIGNED_BYTE, false, 0, 0);
  }

  function sameMark(mark) {
    gl.disableVertexAttribArray(2);
    gl.vertexAttrib1f(2, mark);
  }

  // One draw call: `style` sets the look.
  function shapes(count, { color = BY_MARK, ring = 0, grow = 0, minHalf = 0.6, only = 0, skip = MARK.PLAYER, corners = false }) {
    if (!count) return;
    const u = g.shapes.u;
    gl.uniform4fv(u.u_color, color);
    gl.uniform1f(u.u_ring, ring);
    gl.uniform1f(u.u_grow, grow);
    gl.uniform1f(u.u_minHalf, minHalf);
    gl.uniform1i(u.u_only, only);
    gl.uniform1i(u.u_skip, skip);
    gl.uniform1i(u.u_corners, corners ? 1 : 0);
    gl.drawArraysInstanced(gl.TRIANGLE_STRIP, 0, 4, count);
  }

  // A single box, in world units, filled or outlined.
  function box(x0, y0, x1, y1, style) {
    const w = lab.world;
    instances(g.single, new Float32Array([x0 / w, y0 / w, x1 / w, y1 / w]), false);
    sameMark(MARK.BOX);
    shapes(1, { ...style, corners: true, skip: 0, minHalf: 0 });
  }

  function setView(program, sidePx) {
    const v = lab.view;
    gl.uniform3f(program.u.u_view, v.zoom, v.x, v.y);
    gl.uniform1f(program.u.u_side, sidePx);
  }

  // The static tiles, drawn into a texture when their version, the view or
  // the canvas changes, and copied from it otherwise.
  function glTiles(tiles) {
    const w = side();
    const v = lab.view;
    // Keyed by the boxes themselves: versions count afresh in a new scene.
    if (g.tilesBoxes !== tiles.boxes) {
      gl.bindBuffer(gl.ARRAY_BUFFER, g.tiles);
      gl.bufferData(gl.ARRAY_BUFFER, tiles.boxes, gl.STATIC_DRAW);
      g.tilesBoxes = tiles.boxes;
      g.tilesVersion = (g.tilesVersion || 0) + 1;
      g.tilesCount = tiles.boxes.length / 4;
      g.tilesKey = '';
    }
    if (g.textureSide !== w) {
      if (g.texture) gl.deleteTexture(g.texture);
      g.texture = gl.createTexture();
      gl.bindTexture(gl.TEXTURE_2D, g.texture);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, w, w, 0, gl.RGBA, gl.UNSIGNED_BYTE, null);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
      if (!g.fbo) g.fbo = gl.createFramebuffer();
      gl.bindFramebuffer(gl.FRAMEBUFFER, g.fbo);
      gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, g.texture, 0);
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      g.textureSide = w;
      g.tilesKey = '';
    }
    const key = `${g.tilesVersion}:${v.zoom}:${v.x}:${v.y}:${w}`;
    if (g.tilesKey !== key) {
      g.tilesKey = key;
      gl.bindFramebuffer(gl.FRAMEBUFFER, g.fbo);
      gl.viewport(0, 0, w, w);
      gl.clearColor(0, 0, 0, 0);
      gl.clear(gl.COLOR_BUFFER_BIT);
      instances(g.tiles, null, true);
      sameMark(MARK.BOX);
      shapes(g.tilesCount, { color: rgbaOf(COLOR.tile), skip: 0 });
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      gl.viewport(0, 0, w, canvas.height);
    }
    gl.useProgram(g.copy.p);
    gl.bindTexture(gl.TEXTURE_2D, g.texture);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.useProgram(g.shapes.p);
    // Tiles touched this tick, highlighted.
    const t = tiles.touched;
    if (t && t.length) {
      if (g.touchedBoxes.length < 4 * t.length) g.touchedBoxes = new Uint16Array(4 * t.length);
      const b = tiles.boxes;
      for (let i = 0; i < t.length; i++) g.touchedBoxes.set(b.subarray(4 * t[i], 4 * t[i] + 4), 4 * i);
      instances(g.touched, g.touchedBoxes.subarray(0, 4 * t.length), true);
      sameMark(MARK.BOX);
      shapes(t.length, { color: rgbaOf(COLOR.touched), skip: 0, minHalf: 1 });
    }
  }

  function glDraw(frame) {
    if (!g) glSetup();
    const w = side();
    gl.viewport(0, 0, w, canvas.height);
    const bg = rgbaOf(COLOR.world);
    gl.clearColor(bg[0], bg[1], bg[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    if (!frame) return;
    gl.bindVertexArray(g.vao);
    gl.useProgram(g.shapes.p);
    setView(g.shapes, w);
    if (frame.tiles) {
      glTiles(frame.tiles);
    }
    if (lab.query) box(...lab.query, { color: rgbaOf(COLOR.queryFill) });

    // Every object, coloured by its marks (the player is drawn below).
    const n = frame.marks.length;
    instances(g.objects, frame.objects, true);
    marksFrom(g.marks, frame.marks);
    shapes(n, {});

    const brute = frame.h.flags & FLAG.BRUTE_FORCE;
    if (lab.showNodes && !brute && frame.leaves.length) {
      instances(g.leaves, frame.leaves, true);
      sameMark(MARK.BOX);
      shapes(frame.leaves.length / 4, { color: rgbaOf('rgba(120, 160, 220, 0.6)'), ring: 1, grow: 0.5, minHalf: 0, skip: 0, corners: true });
    }
    if (lab.query) box(...lab.query, { color: rgbaOf(COLOR.query), ring: 1.5, grow: 0.75 });

    // On top: query hits and contacts (at least 3 pixels across), the
    // player, its candidates' outlines above its contacts, the pick.
    if (topCount) {
      instances(g.top, topObjects.subarray(0, 4 * topCount), true);
      marksFrom(g.topMarks, topMarks.subarray(0, topCount));
      shapes(topCount, { only: MARK.IN_QUERY | MARK.CONTACT, minHalf: 1.5 });
    }
    const p = frame.h.player;
    box(p.x - PLAYER_HALF, p.y - PLAYER_HALF, p.x + PLAYER_HALF, p.y + PLAYER_HALF, { color: rgbaOf(COLOR.playerFill) });
    box(p.x - PLAYER_HALF, p.y - PLAYER_HALF, p.x + PLAYER_HALF, p.y + PLAYER_HALF, { color: rgbaOf(COLOR.player), ring: 2, grow: 1 });
    if (topCount) {
      instances(g.top, null, true);
      marksFrom(g.topMarks, null);
      shapes(topCount, { only: MARK.CANDIDATE, color: rgbaOf(COLOR.candidate), ring: 1.5, grow: 1.5, minHalf: 1.5 });
      shapes(topCount, { only: MARK.PICKED, color: rgbaOf(COLOR.picked), ring: 2, grow: 4, minHalf: 2 });
    }
    if (lab.hover && lab.showNodes) {
      const [x0, y0, x1, y1] = lab.hover.bounds;
      box(x0, y0, x1, y1, { color: rgbaOf(COLOR.hover), ring: 2, grow: 1 });
    }
  }

  // ----- drawing with the 2D canvas (when WebGL is not available) -----

  const groups = {
    object: [], colliding: [], query: [], contact: [], candidate: [], picked: [],
    largeObject: [], largeColliding: [], largeQuery: [], largeContact: [],
  };

  let tileCache = null; // { key, canvas }

  function draw2d(frame) {
    const w = canvas.width;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = COLOR.world;
    ctx.fillRect(0, 0, w, canvas.height);
    if (!frame) return;
    const z = lab.view.zoom;
    const s = (w * z) / Q; // pixels per quantization step
    const px = (w * z) / lab.world; // pixels per world unit
    const off = [lab.view.x * w * z, lab.view.y * w * z]; // pixels left and above the canvas

    // Sort objects into groups by what they are, then draw each group in
    // one go: one path and one fill per colour, whatever the count.
    for (const k in groups) groups[k].length = 0;
    const o = frame.objects;
    const marks = frame.marks;
    for (let i = 0; i < marks.length; i++) {
      const m = marks[i];
      const large = m & MARK.LARGE;
      if (m & MARK.PLAYER) {
        // Drawn on its own, below.
      } else if (m & MARK.CONTACT) (large ? groups.largeContact : groups.contact).push(i);
      else if (m & MARK.IN_QUERY) (large ? groups.largeQuery : groups.query).push(i);
      else if (m & MARK.COLLIDING) (large ? groups.largeColliding : groups.colliding).push(i);
      else (large ? groups.largeObject : groups.object).push(i);
      if (m & MARK.CANDIDATE && !(m & MARK.PLAYER)) groups.candidate.push(i);
      if (m & MARK.PICKED) groups.picked.push(i);
    }

    if (frame.tiles) tiles2d(frame.tiles, s, off);

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
    const nodes = lab.showNodes && !(frame.h.flags & FLAG.BRUTE_FORCE);
    const raster = marks.length > RASTER_ABOVE;
    if (raster) {
      rasterObjects(frame, s, off, layers, !!frame.tiles, nodes);
      ctx.setTransform(1, 0, 0, 1, -off[0], -off[1]);
      queryArea(px, 'fill');
      for (const [indices, color] of largeLayers) seeThrough(indices, color, o, marks, s);
    } else {
      ctx.setTransform(1, 0, 0, 1, -off[0], -off[1]);
      queryArea(px, 'fill');
      for (const [indices, color] of largeLayers) seeThrough(indices, color, o, marks, s);
      for (const [indices, color] of layers) fillGroup(indices, color, o, marks, s, 0);
    }
    if (nodes && !raster) drawNodes(frame.leaves, s, off);
    ctx.setTransform(1, 0, 0, 1, -off[0], -off[1]);
    queryArea(px, 'stroke');
    // Query hits and contacts on top, at least 3 pixels across.
    fillGroup(groups.query, COLOR.query, o, marks, s, 1.5);
    fillGroup(groups.contact, COLOR.contact, o, marks, s, 1.5);

    // The player is see-through, so that its candidates and contacts
    // (mostly under it) show.
    const p = frame.h.player;
    const half = PLAYER_HALF * px;
    ctx.fillStyle = COLOR.playerFill;
    ctx.fillRect(p.x * px - half, p.y * px - half, 2 * half, 2 * half);
    ctx.strokeStyle = COLOR.player;
    ctx.lineWidth = 2;
    ctx.strokeRect(p.x * px - half, p.y * px - half, 2 * half, 2 * half);
    strokeGroup(groups.candidate, COLOR.candidate, o, marks, s, 1.5, 1.5);
    strokeGroup(groups.picked, COLOR.picked, o, marks, s, 2, 4);
    if (lab.hover && lab.showNodes) {
      const [x0, y0, x1, y1] = lab.hover.bounds;
      ctx.strokeStyle = COLOR.hover;
      ctx.lineWidth = 2;
      ctx.strokeRect(x0 * px, y0 * px, (x1 - x0) * px, (y1 - y0) * px);
    }
  }

  function tiles2d(tiles, s, off) {
    const w = canvas.width;
    const key = `${s}:${off}:${w}`;
    // Keyed by the boxes themselves: versions count afresh in a new scene.
    if (!tileCache || tileCache.key !== key || tileCache.boxes !== tiles.boxes) {
      const c = tileCache && tileCache.canvas.width === w ? tileCache.canvas : document.createElement('canvas');
      c.width = w;
      c.height = canvas.height;
      const t = c.getContext('2d');
      t.clearRect(0, 0, w, c.height);
      t.beginPath();
      const b = tiles.boxes;
      for (let i = 0; i < b.length; i += 4) {
        const hx = Math.max(b[i + 2] * s, 0.5);
        const hy = Math.max(b[i + 3] * s, 0.5);
        t.rect(b[i] * s - off[0] - hx, b[i + 1] * s - off[1] - hy, 2 * hx, 2 * hy);
      }
      t.fillStyle = COLOR.tile;
      t.fill();
      tileCache = { key, boxes: tiles.boxes, canvas: c };
    }
    ctx.drawImage(tileCache.canvas, 0, 0);
    const b = tiles.boxes;
    ctx.beginPath();
    for (const i of tiles.touched || []) {
      const hx = Math.max(b[4 * i + 2] * s, 1);
      const hy = Math.max(b[4 * i + 3] * s, 1);
      ctx.rect(b[4 * i] * s - off[0] - hx, b[4 * i + 1] * s - off[1] - hy, 2 * hx, 2 * hy);
    }
    ctx.fillStyle = COLOR.touched;
    ctx.fill();
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
    const [r, gg, b] = [(v >> 16) & 255, (v >> 8) & 255, v & 255];
    return littleEndian ? (0xff000000 | (b << 16) | (gg << 8) | r) >>> 0 : ((r << 24) | (gg << 16) | (b << 8) | 0xff) >>> 0;
  }

  // The node colour over the world's, for writing straight into pixels.
  const NODE_ON_WORLD = '#435979';

  function rasterObjects(frame, s, off, layers, keep, nodes) {
    const w = canvas.width;
    const h = canvas.height;
    if (keep) {
      // The tiles are already on the canvas: start from them.
      image = ctx.getImageData(0, 0, w, h);
      pixels = new Uint32Array(image.data.buffer);
    } else {
      if (!image || image.width !== w || image.height !== h) {
        image = ctx.createImageData(w, h);
        pixels = new Uint32Array(image.data.buffer);
      }
      pixels.fill(rgba(COLOR.world));
    }
    // The leaves' cells first, as 1-pixel lines: the objects go on top.
    if (nodes) rasterNodes(frame.leaves, s, off, w, h);
    const o = frame.objects;
    const marks = frame.marks;
    for (const [indices, color] of layers) {
      const c = rgba(color);
      for (const i of indices) {
        const k = 4 * i;
        const x = o[k] * s - off[0];
        const y = o[k + 1] * s - off[1];
        const hx = o[k + 2] * s;
        const hy = o[k + 3] * s;
        if (x + hx < 0 || y + hy < 0 || x - hx > w || y - hy > h) continue;
        if (marks[i] & MARK.BOX) {
          spanRect(x - hx, y - hy, x + hx, y + hy, c, w, h);
        } else {
          spanCircle(x, y, hx, c, w, h);
        }
      }
    }
    ctx.putImageData(image, 0, 0);
  }

  function rasterNodes(l, s, off, w, h) {
    const c = rgba(NODE_ON_WORLD);
    for (let i = 0; i < l.length; i += 4) {
      const x0 = Math.round(l[i] * s - off[0]);
      const y0 = Math.round(l[i + 1] * s - off[1]);
      const x1 = Math.round(l[i + 2] * s - off[0]);
      const y1 = Math.round(l[i + 3] * s - off[1]);
      if (x1 < 0 || y1 < 0 || x0 >= w || y0 >= h) continue;
      const a = Math.max(0, x0);
      const b = Math.min(w - 1, x1);
      if (y0 >= 0) pixels.fill(c, y0 * w + a, y0 * w + b + 1);
      if (y1 < h) pixels.fill(c, y1 * w + a, y1 * w + b + 1);
      const top = Math.max(0, y0);
      const bottom = Math.min(h - 1, y1);
      for (let row = top; row <= bottom; row++) {
        if (x0 >= 0) pixels[row * w + x0] = c;
        if (x1 < w) pixels[row * w + x1] = c;
      }
    }
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
  function drawNodes(l, s, off) {
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.beginPath();
    for (let i = 0; i < l.length; i += 4) {
      const x0 = Math.round(l[i] * s - off[0]) + 0.5;
      const y0 = Math.round(l[i + 1] * s - off[1]) + 0.5;
      const x1 = Math.round(l[i + 2] * s - off[0]) + 0.5;
      const y1 = Math.round(l[i + 3] * s - off[1]) + 0.5;
      ctx.rect(x0, y0, x1 - x0, y1 - y0);
    }
    ctx.strokeStyle = COLOR.node;
    ctx.lineWidth = 1;
    ctx.stroke();
  }

  function fillGroup(indices, color, o, marks, s, least) {
    if (!indices.length) return;
    ctx.beginPath();
    for (const i of indices) shapePath(o, marks, i, s, 0, least);
    ctx.fillStyle = color;
    ctx.fill();
  }

  function seeThrough(indices, color, o, marks, s) {
    if (!indices.length) return;
    ctx.globalAlpha = 0.16;
    fillGroup(indices, color, o, marks, s, 0);
    ctx.globalAlpha = 0.9;
    strokeGroup(indices, color, o, marks, s, 1.5, 0);
    ctx.globalAlpha = 1;
  }

  function strokeGroup(indices, color, o, marks, s, width, grow) {
    if (!indices.length) return;
    ctx.beginPath();
    for (const i of indices) shapePath(o, marks, i, s, grow, 0);
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.stroke();
  }

  // Adds object i to the current path, grown by `grow` pixels and at least
  // `least` pixels in half size. Objects smaller than about a pixel become
  // small squares: much faster to fill.
  function shapePath(o, marks, i, s, grow, least) {
    const k = 4 * i;
    const x = o[k] * s;
    const y = o[k + 1] * s;
    const hx = Math.max(o[k + 2] * s, 0.6, least) + grow;
    const hy = Math.max(o[k + 3] * s, 0.6, least) + grow;
    if (marks[i] & MARK.BOX || hx < 1.2) {
      ctx.rect(x - hx, y - hy, 2 * hx, 2 * hy);
    } else {
      ctx.moveTo(x + hx, y);
      ctx.arc(x, y, hx, 0, 2 * Math.PI);
    }
  }

  // Kept for the figures, which call it: what is drawn is shown under the
  // world on every drawing, and notices are about the connection only.
  function drawNotice() {}

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
    setText('notice-text', text);
    $('notice').hidden = false;
  }

  function hideNotice() {
    $('notice').hidden = true;
    $('retry-line').hidden = true;
  }

  // ----- controls -----

  // The count slider is logarithmic: 0..1000 spans count_min..count_max.
  function countToSlider(count) {
    const { count_min: lo, count_max: hi } = lab.limits;
    return Math.round((1000 * Math.log(count / lo)) / Math.log(hi / lo));
  }

  // Two significant digits, so that the slider lands on round numbers.
  function round2(raw) {
    const step = Math.pow(10, Math.max(0, Math.floor(Math.log10(Math.max(1, raw))) - 1));
    return Math.round(raw / step) * step;
  }

  function sliderToCount(v) {
    const { count_min: lo, count_max: hi } = lab.limits;
    const raw = lo * Math.pow(hi / lo, v / 1000);
    return Math.min(hi, Math.max(lo, round2(raw)));
  }

  // The tiles slider is logarithmic too, from 0: 0..1000 spans 0..tiles_max
  // as 10^(v/1000 · log10(tiles_max + 1)) − 1.
  const tilesMax = () => (lab.limits && lab.limits.tiles_max) || 1_000_000;

  function tilesToSlider(tiles) {
    return Math.round((1000 * Math.log10(tiles + 1)) / Math.log10(tilesMax() + 1));
  }

  function sliderToTiles(v) {
    const raw = Math.pow(10, (v / 1000) * Math.log10(tilesMax() + 1)) - 1;
    return Math.min(tilesMax(), Math.max(0, round2(raw)));
  }

  function setupLimits(limits) {
    $('count').min = limits.count_min;
    $('count').max = limits.count_max;
    $('max-items').max = limits.max_items;
    $('max-depth').max = limits.max_depth;
    $('tiles').max = tilesMax();
  }

  function syncControls(settings) {
    lab.settings = settings;
    $('count').value = settings.count;
    if (lab.limits) $('count-range').value = countToSlider(settings.count);
    $('scene').value = settings.scene;
    const level = settings.scene === 'level';
    document.body.classList.toggle('level', level);
    for (const el of document.querySelectorAll('.level-only input')) el.disabled = !level;
    if (settings.tiles !== undefined) {
      $('tiles').value = settings.tiles;
      $('tiles-range').value = tilesToSlider(settings.tiles);
    }
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
    if (!send({ type: 'settings', [field]: value })) {
      // The controls are disabled while disconnected; this is the race
      // where the connection closed under the pointer.
      say(`not connected: ${field} was not changed`, true);
      if (lab.settings) syncControls(lab.settings);
    }
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
    const tilesRange = $('tiles-range');
    tilesRange.addEventListener('input', () => {
      $('tiles').value = sliderToTiles(Number(tilesRange.value));
    });
    tilesRange.addEventListener('change', () => setting('tiles', sliderToTiles(Number(tilesRange.value))));
    $('tiles').addEventListener('change', (e) => {
      const v = Number(e.target.value);
      if (Number.isInteger(v)) setting('tiles', v);
      else say('static tiles must be a whole number', true);
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
    $('reset-view').addEventListener('click', resetView);
    $('retry-now').addEventListener('click', () => {
      retryDelay = RETRY_FIRST;
      connect();
    });
    $('help-open').addEventListener('click', openHelp);
    $('help-close').addEventListener('click', () => $('help').close());
  }

  function openHelp() {
    const help = $('help');
    if (!help.open) help.showModal();
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

  // ----- mouse: drag a query rectangle, click to pick, wheel to zoom,
  // drag with Shift, Space or the middle button to pan -----

  let drag = null; // { x, y, moved } in world units, while the button is down
  let pan = null; // { sx, sy, x, y }: where the pan started, on the page and in the view
  let queryDirty = false;
  let spaceHeld = false;
  let spacePanned = false;

  // The point of the canvas under the pointer, as fractions of its side
  // (of its content: the border is not part of the world).
  function canvasAt(event) {
    const r = canvas.getBoundingClientRect();
    const x = event.clientX - r.left - canvas.clientLeft;
    const y = event.clientY - r.top - canvas.clientTop;
    return [x / canvas.clientWidth, y / canvas.clientHeight];
  }

  function worldAt(event) {
    const [fx, fy] = canvasAt(event);
    const v = lab.view;
    return [(v.x + fx / v.zoom) * lab.world, (v.y + fy / v.zoom) * lab.world];
  }

  function wireMouse() {
    canvas.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 && e.button !== 1) return;
      canvas.focus();
      canvas.setPointerCapture(e.pointerId);
      if (e.button === 1 || e.shiftKey || spaceHeld) {
        e.preventDefault();
        pan = { sx: e.clientX, sy: e.clientY, x: lab.view.x, y: lab.view.y };
        if (spaceHeld) spacePanned = true;
        canvas.classList.add('panning');
        return;
      }
      const [x, y] = worldAt(e);
      drag = { x, y, sx: e.clientX, sy: e.clientY, moved: false };
    });
    canvas.addEventListener('pointermove', (e) => {
      lab.cursor = worldAt(e);
      pendingRedraw = true;
      if (pan) {
        lab.view.x = pan.x - (e.clientX - pan.sx) / canvas.clientWidth / lab.view.zoom;
        lab.view.y = pan.y - (e.clientY - pan.sy) / canvas.clientHeight / lab.view.zoom;
        clampView();
        return;
      }
      if (!drag) return;
      if (!drag.moved && Math.hypot(e.clientX - drag.sx, e.clientY - drag.sy) < 4) return;
      drag.moved = true;
      const [x, y] = lab.cursor;
      lab.query = [Math.min(drag.x, x), Math.min(drag.y, y), Math.max(drag.x, x), Math.max(drag.y, y)];
      queryDirty = true;
    });
    canvas.addEventListener('pointerleave', () => {
      if (drag || pan) return;
      lab.cursor = null;
      pendingRedraw = true;
    });
    const release = (e) => {
      if (pan) {
        pan = null;
        canvas.classList.remove('panning');
        return;
      }
      if (!drag) return;
      if (e.type === 'pointerup') {
        if (!drag.moved) send({ type: 'pick', at: worldAt(e) });
        else queryDirty = true;
      }
      drag = null;
    };
    canvas.addEventListener('pointerup', release);
    canvas.addEventListener('pointercancel', release);
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      const [fx, fy] = canvasAt(e);
      const lines = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
      zoomAt(Math.exp((-e.deltaY * lines) / 500), fx, fy);
      lab.cursor = worldAt(e);
    }, { passive: false });
    canvas.addEventListener('auxclick', (e) => e.preventDefault());
    canvas.addEventListener('contextmenu', (e) => {
      e.preventDefault();
      clearSelection();
    });
  }

  // ----- keyboard: the player, pause, step, view, help -----

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
      if ($('help').open) return; // the dialog has the keys (Esc closes it)
      if (forControl(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const key = KEYS[e.key];
      if (key) {
        e.preventDefault();
        held.add(key);
        steer();
        return;
      }
      if (e.key === ' ') {
        // Space pauses when released, unless it was held to pan.
        e.preventDefault();
        if (!e.repeat && !spaceHeld) {
          spaceHeld = true;
          spacePanned = false;
          canvas.classList.add('can-pan');
        }
        return;
      }
      if (e.repeat) return;
      if (e.key === 'n' || e.key === 'N') send({ type: 'step' });
      else if (e.key === 't' || e.key === 'T') { $('nodes').click(); }
      else if (e.key === 'Escape') clearSelection();
      else if (e.key === '0' || e.key === 'r' || e.key === 'R') resetView();
      else if (e.key === '+' || e.key === '=') zoomAt(1.5, 0.5, 0.5);
      else if (e.key === '-' || e.key === '_') zoomAt(1 / 1.5, 0.5, 0.5);
      else if (e.key === '?') { e.preventDefault(); openHelp(); }
    });
    window.addEventListener('keyup', (e) => {
      if (e.key === ' ' && spaceHeld) {
        spaceHeld = false;
        canvas.classList.remove('can-pan');
        if (!spacePanned && !forControl(e)) togglePause();
        return;
      }
      const key = KEYS[e.key];
      if (key) {
        held.delete(key);
        steer();
      }
    });
    window.addEventListener('blur', () => {
      held.clear();
      steer();
      spaceHeld = false;
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
    const sidePx = Math.max(100, Math.floor(Math.min(world.clientWidth, world.clientHeight)));
    const ratio = window.devicePixelRatio || 1;
    canvas.style.width = `${sidePx}px`;
    canvas.style.height = `${sidePx}px`;
    canvas.width = Math.round(sidePx * ratio);
    canvas.height = Math.round(sidePx * ratio);
    pendingRedraw = true;
  }

  // ----- start -----

  wireControls();
  wireMouse();
  wireKeys();
  new ResizeObserver(fit).observe($('world'));
  fit();
  clampView();
  connect();
  requestAnimationFrame(animate);
})();
