// What the browser tests share: where things are, building and starting the
// lab, Chromium with its flags, a page that records its errors, and a PNG
// decoder for counting pixels in screenshots (no dependency).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '..', '..', '..', '..');
const target = process.env.CARGO_TARGET_DIR ? path.resolve(root, process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
/** Where screenshots go. */
export const shots = path.join(target, 'e2e');
const binary = path.join(target, 'release', 'quadrat-lab');

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

/** Builds the lab in release and makes the screenshots' folder. */
export function buildLab() {
  const build = spawnSync('cargo', ['build', '--release', '-p', 'quadrat-lab'], { cwd: root, stdio: 'inherit' });
  assert.equal(build.status, 0, 'cargo build --release -p quadrat-lab');
  mkdirSync(shots, { recursive: true });
}

/** Starts a lab on a free port; resolves to { process, url, output() }. */
export function startLab(args = []) {
  const child = spawn(binary, ['serve', '--port', '0', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the lab printed no URL: ${output}`)), 30_000);
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (match) {
        clearTimeout(timer);
        resolve({ process: child, url: match[0], output: () => output });
      }
    });
    child.on('exit', (code) => reject(new Error(`the lab exited with ${code}: ${output}`)));
  });
}

/** Debian's Chromium, headless, with the flags this machine needs. */
export function launchBrowser() {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/**
 * A 1440 × 900 page at `url` whose errors (uncaught, or logged as errors)
 * are pushed onto `errors`; in the page, `frameHeader()` returns the latest
 * frame's header.
 */
export async function openPage(browser, url, errors) {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.addInitScript(() => {
    window.frameHeader = () => window.lab && window.lab.frame && window.lab.frame.h;
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(url);
  return page;
}

/**
 * Decodes a PNG (8-bit RGB or RGBA, not interlaced, as Chromium writes
 * them) into { width, height, channels, data }.
 */
export function decodePng(png) {
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      assert.equal(body[8], 8, 'bit depth 8');
      channels = { 2: 3, 6: 4 }[body[9]];
      assert.ok(channels, `colour type ${body[9]}`);
      assert.equal(body[12], 0, 'not interlaced');
    } else if (type === 'IDAT') {
      idat.push(body);
    }
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const data = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? data[y * stride + x - channels] : 0;
      const b = y > 0 ? data[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? data[(y - 1) * stride + x - channels] : 0;
      let v = row[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      data[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, data };
}
