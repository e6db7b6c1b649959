// End-to-end test of what the lab's simulation sends and the figures panel
// shows, in Debian's Chromium through playwright-core: the figures follow
// max_depth and max_items, brute force keeps no tree, the level scene
// loads and its tiles are drawn, every figure explains itself on focus.
// Builds the lab, starts it on a free port; screenshots go to target/e2e/.
//
// Run: npm ci && node --test sim.test.mjs   (in this folder; needs /usr/bin/chromium)

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { buildLab, decodePng, launchBrowser, openPage, shots, startLab } from './harness.mjs';

// Frame flags, as in src/serve/frame.rs.
const BRUTE_FORCE = 2;

let lab; // the server: { process, url, output() }
let browser;
let page;
const pageErrors = [];

before(async () => {
  buildLab();
  lab = await startLab();
  browser = await launchBrowser();
  page = await openPage(browser, lab.url, pageErrors);
  await page.waitForFunction(() => frameHeader()?.frame > 0);
});

after(async () => {
  await browser?.close();
  if (lab && lab.process.exitCode === null) lab.process.kill('SIGKILL');
});

const header = () => page.evaluate(() => window.lab.frame && window.lab.frame.h);
const text = (id) => page.locator(`#${id}`).textContent();
const shot = (name) => page.screenshot({ path: path.join(shots, `${name}.png`) });

async function waitForHeader(predicate, arg, timeout = 20_000) {
  await page.waitForFunction(predicate, arg, { timeout });
  return header();
}

// Sets a control as a person would, by its value, and fires its change.
async function setControl(id, value) {
  await page.evaluate(
    ([id, value]) => {
      const el = document.getElementById(id);
      el.value = String(value);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    },
    [id, value],
  );
}

// The tree's box tests once a new round of comparisons has come in: the
// median of a few frames' figures. A change of settings clears them, and
// they come back in turns over a few ticks (the tree's walk, then the
// sweep), so a frame counts once both have.
async function treeFigures() {
  const seen = [];
  let last = 0;
  while (seen.length < 5) {
    const h = await waitForHeader((f) => frameHeader()?.frame > f + 6, last);
    last = h.frame;
    if (h.treeTests > 0 && h.sweepTests > 0) seen.push(h);
  }
  seen.sort((a, b) => a.treeTests - b.treeTests);
  return seen[2];
}

// A PNG screenshot's pixels: { width, height, at(x, y) -> [r, g, b] }.
function pixels(png) {
  const { width, height, channels, data } = decodePng(png);
  return {
    width,
    height,
    at: (x, y) => {
      const k = (Math.round(y) * width + Math.round(x)) * channels;
      return [data[k], data[k + 1], data[k + 2]];
    },
  };
}

test('the page decodes every frame to what the server counted', async () => {
  await setControl('count', 5000);
  await waitForHeader(() => frameHeader()?.count === 5000);
  await page.locator('#view').focus();
  await page.keyboard.down('ArrowRight');
  const problems = [];
  for (let k = 0; k < 40; k++) {
    const found = await page.evaluate(() => {
      const f = window.lab.frame;
      const h = f.h;
      const n = h.count + 1;
      const q = (v) => Math.round((v * 65535) / window.lab.world);
      const out = [];
      if (f.objects.length !== 4 * n || f.marks.length !== n) out.push(`lengths ${f.objects.length}, ${f.marks.length} for ${n}`);
      const px = f.objects[4 * (n - 1)];
      const py = f.objects[4 * (n - 1) + 1];
      if (Math.abs(px - q(h.player.x)) > 1 || Math.abs(py - q(h.player.y)) > 1) out.push(`frame ${h.frame}: player at ${px}, ${py}, header ${q(h.player.x)}, ${q(h.player.y)}`);
      let colliding = 0;
      for (let i = 0; i < n; i++) if (f.marks[i] & 2) colliding += 1;
      if (colliding !== h.colliding) out.push(`frame ${h.frame}: ${colliding} marked colliding, header ${h.colliding}`);
      let items = 0;
      for (const c of f.leafItems) items += c;
      if (items > n || f.leafDepth.length !== h.leaves || f.leaves.length !== 4 * h.leaves) out.push(`frame ${h.frame}: leaves ${h.leaves}, ${items} items`);
      return out;
    });
    problems.push(...found);
    await page.waitForTimeout(50);
  }
  await page.keyboard.up('ArrowRight');
  assert.deepEqual(problems, []);
  await setControl('count', 1000);
  await waitForHeader(() => frameHeader()?.count === 1000);
});

test('the tree\'s box tests and time follow max_depth and max_items', async () => {
  await setControl('count', 20000);
  await waitForHeader(() => frameHeader()?.count === 20000);
  const deep = await treeFigures();
  await shot('sim-figures-default-depth');
  const deepText = await text('f-tree-tests');

  await setControl('max-depth', 0);
  await waitForHeader(() => frameHeader()?.nodes === 1);
  const flat = await treeFigures();
  await shot('sim-figures-depth-0');
  assert.equal(await text('f-tree'), '1 node · depth 0');
  assert.match(await page.locator('#drawn').textContent(), / 1 leaf · /);
  // One node: the tree's walk is a sort-and-sweep, many times the work.
  assert.ok(flat.treeTests > 5 * deep.treeTests, `box tests ${deep.treeTests} at depth ${deep.depth}, ${flat.treeTests} at depth 0`);
  // Times are shown, not compared: speed is measured, never asserted.
  assert.ok(flat.treeMs > 0 && deep.treeMs > 0, `walk ${deep.treeMs} ms at depth ${deep.depth}, ${flat.treeMs} ms at depth 0`);
  console.log(`walk ${deep.treeMs} ms at depth ${deep.depth}, ${flat.treeMs} ms at depth 0`);
  assert.ok(Math.abs(flat.treeTests - flat.sweepTests) < 0.2 * flat.sweepTests, `one node ${flat.treeTests}, sweep ${flat.sweepTests}`);
  assert.notEqual(await text('f-tree-tests'), deepText);
  assert.match(await text('f-saved'), /× vs sweep/);

  await setControl('max-depth', 16);
  await waitForHeader(() => frameHeader()?.depth > 0);
  await setControl('max-items', 1);
  await waitForHeader(() => window.lab.settings?.max_items === 1 && window.lab.settings?.max_depth === 16);
  const fine = await treeFigures();
  await setControl('max-items', 128);
  await waitForHeader((n) => frameHeader()?.nodes < n / 4, fine.nodes);
  const coarse = await treeFigures();
  assert.ok(coarse.treeTests > 1.5 * fine.treeTests, `box tests ${fine.treeTests} at max_items 1, ${coarse.treeTests} at 128`);
  await setControl('max-items', 8);
  await setControl('count', 1000);
  await waitForHeader(() => frameHeader()?.count === 1000);
});

test('brute force keeps no tree and says so', async () => {
  await setControl('count', 2000);
  await waitForHeader(() => frameHeader()?.count === 2000);
  await page.locator('.segmented label', { hasText: 'brute force' }).click();
  const h = await waitForHeader((flag) => (frameHeader()?.flags & flag) !== 0, BRUTE_FORCE);
  assert.equal(h.leaves, 0);
  assert.equal(h.checks, (2001 * 2000) / 2);
  assert.equal(await page.evaluate(() => window.lab.frame.leaves.length), 0);
  await page.waitForFunction(() => document.getElementById('f-tree').textContent === 'not kept (brute force)');
  const checks = await text('f-checks');
  assert.equal(checks, 'brute force · 2.00 M');
  // Every figure fits its row: nothing is cut off.
  const clipped = await page.evaluate(() =>
    [...document.querySelectorAll('.figures dd')].filter((dd) => dd.scrollWidth > dd.clientWidth + 1).map((dd) => dd.id),
  );
  assert.deepEqual(clipped, []);
  await shot('sim-brute-force');
  await page.locator('.segmented label', { hasText: 'quadtree' }).click();
  await waitForHeader((flag) => (frameHeader()?.flags & flag) === 0 && frameHeader()?.leaves > 0, BRUTE_FORCE);
  await setControl('count', 1000);
});

test('every figure explains itself on hover and keyboard focus', async () => {
  const terms = page.locator('.figures dt[tabindex="0"]');
  const n = await terms.count();
  assert.ok(n >= 15, `${n} figures with explanations`);
  for (let i = 0; i < n; i++) {
    const dt = terms.nth(i);
    const tip = await dt.getAttribute('aria-describedby');
    assert.ok(tip, 'described by its explanation');
    assert.ok((await page.locator(`#${tip}`).textContent()).length > 20);
  }
  const dropped = page.locator('.figures dt', { hasText: 'frames dropped' });
  await dropped.focus();
  const tip = page.locator(`#${await dropped.getAttribute('aria-describedby')}`);
  assert.ok(await tip.isVisible(), 'shown on focus');
  assert.match(await tip.textContent(), /not sent/);
  await shot('sim-figure-explained');
  await page.locator('#view').focus();
  assert.ok(!(await tip.isVisible()), 'hidden again');
  const docs = page.locator('#f-links a', { hasText: 'docs' });
  assert.equal(await docs.getAttribute('href'), 'https://docs.rs/quadrat');
});

test('the level scene: tiles sent once and drawn, movers counted', async () => {
  // The scene control offers the level; add the option if this page has
  // none (the wire accepts the scene either way).
  await page.evaluate(() => {
    const select = document.getElementById('scene');
    if (![...select.options].some((o) => o.value === 'level')) select.add(new Option('level', 'level'));
  });
  await page.selectOption('#scene', 'level');
  const h = await waitForHeader(() => frameHeader()?.tilesVersion > 0 && window.lab.frame.tiles);
  assert.equal(await page.evaluate(() => window.lab.settings.max_depth), 16);
  assert.ok(h.depth > 0 && h.nodes > 1, `the level's tree: ${h.nodes} nodes, depth ${h.depth}`);
  const tiles = await page.evaluate(() => {
    const t = window.lab.frame.tiles;
    const k = 4 * Math.floor(t.boxes.length / 8);
    return { n: t.boxes.length / 4, version: t.version, first: Array.from(t.boxes.slice(k, k + 4)) };
  });
  assert.equal(tiles.n, h.tiles);
  assert.ok(h.tiles >= 10000, `${h.tiles} tiles`);
  // Only the movers and the player move: the resting tiles cost nothing.
  const later = await waitForHeader((f) => frameHeader()?.frame > f + 10, h.frame);
  assert.ok(later.moved > 0 && later.moved <= later.count + 1, `${later.moved} moved of ${later.count} movers`);
  assert.ok(later.stepCandidates < later.tiles, `${later.stepCandidates} pairs examined`);
  // The figures are redrawn five times a second, not on every frame: wait
  // for the first redraw that knows the level.
  await page.waitForFunction(() => document.getElementById('f-moved').textContent !== 'level scene only');
  assert.match(await text('f-moved'), /^[\d,]+ bod(y|ies) moved$/);
  assert.match(await text('f-stepwork'), /pairs · [\d,]+ exact · (incremental|full pass)$/);
  // The same tiles object for as long as the version holds.
  const same = await page.evaluate(() => {
    const a = window.lab.frame.tiles.boxes;
    return new Promise((resolve) => setTimeout(() => resolve(a === window.lab.frame.tiles.boxes), 500));
  });
  assert.ok(same, 'the tiles are kept, not sent again');

  // A wall tile's pixels differ from the floor's.
  await page.waitForTimeout(300);
  const png = pixels(await page.screenshot({ path: path.join(shots, 'sim-level.png') }));
  const box = await page.locator('#view').boundingBox();
  const world = await page.evaluate(() => window.lab.world);
  const toPage = (q) => (q / 65535) * world;
  const [cx, cy] = [toPage(tiles.first[0]), toPage(tiles.first[1])];
  const wall = png.at(box.x + (cx / world) * box.width, box.y + (cy / world) * box.height);
  // The middle of a room, away from the walls and the player.
  const floor = png.at(box.x + 0.3 * box.width, box.y + 0.1 * box.height);
  const differ = wall.some((v, i) => Math.abs(v - floor[i]) > 20);
  assert.ok(differ, `a wall tile at (${cx.toFixed(0)}, ${cy.toFixed(0)}) is drawn: ${wall} against the floor's ${floor}`);
  assert.deepEqual(pageErrors, []);
});
