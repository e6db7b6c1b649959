// End-to-end test of the quadrat lab in a real browser: builds the lab,
// starts it on a free port, drives the page in Debian's Chromium through
// playwright-core, and saves screenshots to target/e2e/.
//
// Run: npm ci && node --test   (in this folder; needs /usr/bin/chromium)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..', '..', '..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(root, process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
const shots = path.join(target, 'e2e');
const binary = path.join(target, 'release', 'quadrat-lab');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

// Frame flags and object marks, as in src/serve/frame.rs and src/sim.rs.
const PAUSED = 1;
const BRUTE_FORCE = 2;
const QUERY = 16;
const PICKED = 32;

let lab; // the server process
let labOutput = '';
let browser;
let page;
const pageErrors = [];

before(async () => {
  const build = spawnSync('cargo', ['build', '--release', '-p', 'quadrat-lab'], { cwd: root, stdio: 'inherit' });
  assert.equal(build.status, 0, 'cargo build --release -p quadrat-lab');
  mkdirSync(shots, { recursive: true });

  lab = spawn(binary, ['serve', '--port', '0'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the lab printed no URL: ${labOutput}`)), 30_000);
    lab.stdout.on('data', (chunk) => {
      labOutput += chunk;
      const match = labOutput.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (match) {
        clearTimeout(timer);
        resolve(match[0]);
      }
    });
    lab.on('exit', (code) => reject(new Error(`the lab exited with ${code}: ${labOutput}`)));
  });

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript(() => {
    window.frameHeader = () => window.lab && window.lab.frame && window.lab.frame.h;
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.goto(url);
});

after(async () => {
  await browser?.close();
  if (lab && lab.exitCode === null) lab.kill('SIGKILL');
});

const header = () => page.evaluate(() => window.lab.frame && window.lab.frame.h);
const text = (id) => page.locator(`#${id}`).textContent();
const shot = (name) => page.screenshot({ path: path.join(shots, `${name}.png`) });

// Waits until `predicate(arg)` holds in the page, then returns the latest
// frame header. Predicates run in the page, where `frameHeader()` (added
// by the test) returns the latest frame's header.
async function waitForHeader(predicate, arg, timeout = 15_000) {
  await page.waitForFunction(predicate, arg, { timeout });
  return header();
}

async function setCount(count) {
  await page.fill('#count', String(count));
  await page.press('#count', 'Enter');
  await waitForHeader((n) => frameHeader()?.count === n, count);
}

// Clicks a segment of the broad-phase switch, as a person would.
const broadPhase = (name) => page.locator('.segmented label', { hasText: name }).click();

// Page coordinates of a point of the world.
async function pageAt(x, y) {
  const box = await page.locator('#view').boundingBox();
  const world = await page.evaluate(() => window.lab.world);
  return [box.x + (x / world) * box.width, box.y + (y / world) * box.height];
}

test('the page loads, frames arrive and the figures update', async () => {
  const first = await waitForHeader(() => frameHeader()?.frame > 0);
  assert.equal(first.count, 1000);
  const figures = ['f-pairs', 'f-update', 'f-pairtime', 'f-drawfps'];
  await page.waitForFunction(() => document.getElementById('f-objects').textContent === '1,000 + player');
  const before = await Promise.all(figures.map(text));
  await page.waitForTimeout(1000);
  const later = await header();
  assert.ok(later.frame >= first.frame + 20, `frames ${first.frame} → ${later.frame} in a second`);
  assert.ok(later.simFps > 10, `simulation at ${later.simFps} ticks/s`);
  const after = await Promise.all(figures.map(text));
  assert.notDeepEqual(after, before, 'the figures change');
  assert.match(await text('f-simfps'), /\d+ ticks\/s/);
  assert.match(await text('f-tree'), /^[\d,]+ nodes · depth \d+$/);
  assert.equal(await page.locator('#status').getAttribute('data-state'), 'live');
  await shot('lab-start');
});

test('changing the object count', async () => {
  await setCount(3000);
  await page.waitForFunction(() => document.getElementById('f-objects').textContent === '3,000 + player');
  const h = await header();
  assert.equal(h.sent, 3001);
  assert.ok(h.nodes > 1);
  // The slider follows the number.
  const slider = Number(await page.inputValue('#count-range'));
  assert.ok(slider > 600 && slider < 640, `slider at ${slider}`);
});

test('a dragged query rectangle highlights exactly what the server returns', async () => {
  const [x0, y0] = await pageAt(200, 200);
  const [x1, y1] = await pageAt(550, 500);
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  await page.mouse.move(x1, y1, { steps: 10 });
  await page.mouse.up();
  const rect = await page.evaluate(() => window.lab.query);
  [200, 200, 550, 500].forEach((v, i) => assert.ok(Math.abs(rect[i] - v) < 3, `query ${rect}`));

  // Several frames: each drawn frame highlights what its header says.
  for (let i = 0; i < 5; i++) {
    await page.waitForFunction(
      (flag) => window.lab.drawn && window.lab.frame.h.flags & flag && window.lab.drawn.frame === window.lab.frame.h.frame,
      QUERY,
    );
    const drawn = await page.evaluate(() => window.lab.drawn);
    assert.ok(drawn.queryHits > 50, `the query returns ${drawn.queryHits}`);
    assert.equal(drawn.highlighted, drawn.queryHits, `frame ${drawn.frame}`);
    await page.waitForTimeout(100);
  }
  const h = await header();
  await page.waitForFunction(() => /objects$/.test(document.getElementById('f-query').textContent));
  assert.match(await text('f-query'), /^[\d,]+ objects$/);
  assert.ok(h.queryHits > 0);
  await shot('lab-query');
});

test('arrow keys and WASD move the player', async () => {
  await page.locator('#view').focus();
  const start = (await header()).player;
  await page.keyboard.down('ArrowRight');
  await page.waitForTimeout(500);
  await page.keyboard.up('ArrowRight');
  const right = await waitForHeader((x) => frameHeader()?.player.x > x + 50, start.x);
  assert.equal(right.player.y, start.y);

  await page.keyboard.down('ArrowDown');
  await page.waitForTimeout(300);
  await page.keyboard.up('ArrowDown');
  const down = await waitForHeader((y) => frameHeader()?.player.y > y + 30, start.y);

  await page.keyboard.down('w');
  await page.waitForTimeout(300);
  await page.keyboard.up('w');
  const up = await waitForHeader((y) => frameHeader()?.player.y < y - 30, down.player.y);
  // Released: the player stops.
  await page.waitForTimeout(200);
  const still = await header();
  await page.waitForTimeout(300);
  assert.deepEqual((await header()).player, still.player);
  assert.ok(up.player.x >= right.player.x);
  assert.match(await text('f-candidates'), /^\d+ \(boxes touch\)$/);
  await shot('lab-player');
});

test('a click picks the nearest object', async () => {
  // Hold the objects still first, then click on object 7's centre as the
  // paused frame has it (read before pausing, it may have moved on).
  await page.keyboard.press('Space');
  await waitForHeader((flag) => (frameHeader()?.flags & flag) !== 0, PAUSED);
  const [x, y] = await page.evaluate(() => {
    const o = window.lab.frame.objects;
    const scale = window.lab.world / 65535;
    return [o[28] * scale, o[29] * scale];
  });
  const [px, py] = await pageAt(x, y);
  await page.mouse.click(px, py);
  const h = await waitForHeader((flag) => (frameHeader()?.flags & flag) !== 0, PICKED);
  assert.ok(h.pickedDistance < 2, `picked #${h.picked} at ${h.pickedDistance}`);
  await page.waitForFunction(() => /^#\d+ · [\d.]+ away$/.test(document.getElementById('f-picked').textContent));
});

test('pause and single step', async () => {
  const paused = await header();
  assert.ok(paused.flags & PAUSED);
  assert.equal(await page.locator('#status').getAttribute('data-state'), 'paused');
  assert.equal(await text('pause'), 'resume');
  await page.waitForTimeout(300);
  assert.equal((await header()).frame, paused.frame, 'no frames while paused and idle');
  await page.keyboard.press('n');
  await waitForHeader((f) => frameHeader()?.frame === f + 1, paused.frame);
  await page.click('#pause');
  await waitForHeader((flag) => (frameHeader()?.flags & flag) === 0, PAUSED);
});

test('brute force refuses counts that would stall, and says so', async () => {
  await setCount(10000);
  await broadPhase('brute force');
  await page.waitForFunction(() => document.getElementById('message').classList.contains('error'));
  assert.match(await text('message'), /brute force is limited to 5,000 objects/);
  // Nothing changed: the control snaps back, the quadtree goes on.
  assert.ok(await page.isChecked('input[name="broad"][value="quadtree"]'));
  assert.equal(((await header()).flags & BRUTE_FORCE), 0);
  await shot('lab-brute-force-refused');

  await setCount(2000);
  await broadPhase('brute force');
  const h = await waitForHeader((flag) => (frameHeader()?.flags & flag) !== 0, BRUTE_FORCE);
  assert.equal(h.checks, (2001 * 2000) / 2);
  await page.waitForFunction(() => document.getElementById('f-checks').textContent.startsWith('brute force'));
  await broadPhase('quadtree');
  await waitForHeader((flag) => (frameHeader()?.flags & flag) === 0, BRUTE_FORCE);
});

test('drawing at 10,000 objects', async () => {
  await page.click('#clear');
  await setCount(10000);
  await page.waitForTimeout(1500);
  const measured = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const stats = window.lab.stats;
        const [drawn0, received0] = [stats.drawn, stats.received];
        let callbacks = 0;
        const t0 = performance.now();
        const tick = (now) => {
          callbacks += 1;
          if (now - t0 < 4000) {
            requestAnimationFrame(tick);
            return;
          }
          const seconds = (now - t0) / 1000;
          resolve({
            animationFramesPerSecond: callbacks / seconds,
            drawnPerSecond: (stats.drawn - drawn0) / seconds,
            framesReceivedPerSecond: (stats.received - received0) / seconds,
            drawMs: stats.drawMs,
            simFps: window.lab.frame.h.simFps,
          });
        };
        requestAnimationFrame(tick);
      }),
  );
  const report = { objects: 10000, ...measured };
  writeFileSync(path.join(shots, 'fps.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `drawing at 10,000 objects: ${measured.animationFramesPerSecond.toFixed(1)} animation frames/s, ` +
      `${measured.drawnPerSecond.toFixed(1)} drawn/s (${measured.drawMs.toFixed(1)} ms each), ` +
      `${measured.framesReceivedPerSecond.toFixed(1)} frames received/s, simulation ${measured.simFps.toFixed(1)} ticks/s`,
  );
  assert.ok(measured.drawnPerSecond > 0);
  await shot('lab-10k');
});

test('the page raised no errors', () => {
  assert.deepEqual(pageErrors, []);
});

test('Ctrl-C stops the server cleanly', async () => {
  const exited = new Promise((resolve) => lab.on('exit', (code, signal) => resolve({ code, signal })));
  lab.kill('SIGINT');
  const { code } = await exited;
  assert.equal(code, 0);
  assert.match(labOutput, /stopped/);
  // The page notices, and says why (the server's close code, 1001).
  await page.waitForFunction(() => document.getElementById('status').dataset.state === 'closed');
  const told = await page.evaluate(() => [
    document.getElementById('status').textContent,
    document.getElementById('notice').textContent,
  ]);
  assert.match(told[0], /server stopped/);
  assert.match(told[1], /shutting down/);
});
