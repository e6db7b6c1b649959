//! What sorted layouts without a tree cost on a benchmark scene: the
//! simplest forms of a build as keys and a radix sort, and of a pair scan
//! without a tree walk. It times each part beside quadrat's `rebuild` and
//! `for_each_pair` on the same boxes, then a few drift frames (every box
//! steps up to a quarter of its size) beside `update_all` and
//! `for_each_pair`, and checks every pair count against quadrat's. With
//! the `peers` feature (the default), broccoli, the fastest peer in the
//! benchmark's build + pairs, is built from scratch and counts its pairs
//! on the same boxes in the same run, and each total is printed over its
//! time.
//!
//! ```text
//! cargo run --release -p quadrat-bench --example grid_floor -- [uniform|clustered|mixed] [n] [runs] [count|list]
//! ```
//!
//! With `list`, the strips, quadrat and broccoli hand out their pairs
//! instead of counting them: each pushes every pair, as the two boxes'
//! indices in the scene, to a vector kept from run to run, as the
//! benchmark's build + pairs asks of everyone. After every run and every
//! drift frame, the example fails unless every list holds the same pairs
//! as quadrat's, each once (the cells, which only count, are checked by
//! their count).
//!
//! - **Cells,** one level: square cells, the smallest power-of-two
//!   fraction of the world no narrower than the largest box, so every box
//!   reaches at most the cells around the one holding its centre. Each box
//!   gets a key (its centre's cell, row by row, above its index), the keys
//!   are sorted in passes of 8 bits, and the boxes are gathered in that
//!   order into four arrays. The scan meets each cell's boxes with the
//!   boxes after them in the cell, in the next cell of the row, and in the
//!   three cells of the next row. Boxes of very different sizes make the
//!   cells coarse, and the scan slow.
//! - **Strips,** at levels by size: each box sits at the finest level whose
//!   strips are wider than it, in the strip holding its centre, and each
//!   strip's boxes are in the order of their `min.x` (quantized to 18 bits
//!   in the key). A sweep along `x` meets each box with the boxes that
//!   start before it ends, in its own strip and the next of its level,
//!   eight candidates at a time without a branch; each box also searches
//!   the strips of the finer levels it reaches. After a drift frame, the
//!   strips are refreshed from their last order instead of sorted anew.
//!   The keys are sorted by their top byte first, then each bucket by the
//!   three bytes below it, so that those passes stay in the cache.
//! - **Strips on two threads** (`strips×2`): the same layout, each part
//!   split in two. Each thread computes half the keys; the sort splits
//!   each half by the keys' top bits into a buffer of its own, cuts the
//!   buckets in two halves of the keys and gives each thread one, which it
//!   gathers and sorts; each thread gathers half the order and sweeps half
//!   of every level's boxes. The refresh rewrites the last order from new
//!   keys computed in the boxes' own order, so it needs no scatter.

use std::process::ExitCode;
use std::time::Instant;

use quadrat::scenario::Layout;
use quadrat::{Aabb, QuadTree};
use quadrat_bench::scene::{Frames, Motion, Scene};

/// The boxes a sweep tests at a time, without a branch.
const LANES: usize = 8;

/// The finest level of the cells and the strips: 1024 of them to a side.
const MAX_LEVEL: u32 = 10;

/// The median of `v`, in milliseconds.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Boxes as four arrays, in the order of their keys.
struct Boxes {
    min_x: Vec<f32>,
    min_y: Vec<f32>,
    max_x: Vec<f32>,
    max_y: Vec<f32>,
}

impl Boxes {
    fn new(n: usize) -> Boxes {
        Boxes {
            min_x: vec![0.0; n],
            min_y: vec![0.0; n],
            max_x: vec![0.0; n],
            max_y: vec![0.0; n],
        }
    }

    /// Puts the box `[min x, min y, max x, max y]` at `j`.
    #[inline]
    fn set(&mut self, j: usize, b: &[f32; 4]) {
        (self.min_x[j], self.min_y[j]) = (b[0], b[1]);
        (self.max_x[j], self.max_y[j]) = (b[2], b[3]);
    }

    /// 1 when the closed boxes at `i` and `j` intersect, else 0, with no
    /// branch.
    #[inline]
    fn hits(&self, i: usize, j: usize) -> u64 {
        u64::from(
            (self.min_x[j] <= self.max_x[i])
                & (self.min_x[i] <= self.max_x[j])
                & (self.min_y[j] <= self.max_y[i])
                & (self.min_y[i] <= self.max_y[j]),
        )
    }
}

/// The times between four instants, in milliseconds.
fn laps(t: [Instant; 4]) -> [f64; 3] {
    [1, 2, 3].map(|k| (t[k] - t[k - 1]).as_secs_f64() * 1e3)
}

/// The grid's keys and boxes, in the order of the cells, and its level.
struct Grid {
    keys: Vec<u64>,
    boxes: Boxes,
    level: u32,
}

impl Grid {
    fn new(n: usize) -> Grid {
        Grid {
            keys: Vec::with_capacity(n),
            boxes: Boxes::new(n),
            level: 0,
        }
    }

    /// Keys, sort and gather; returns the time of each.
    fn build(&mut self, scene: &Scene, spare: &mut Vec<u64>) -> [f64; 3] {
        let [x0, y0, x1, y1] = scene.world;
        let side = (x1 - x0).max(y1 - y0);
        let widest = scene
            .boxes
            .iter()
            .map(|b| (b[2] - b[0]).max(b[3] - b[1]))
            .fold(0.0f32, f32::max);
        let mut level = 0;
        while level < MAX_LEVEL && side / (1u32 << (level + 1)) as f32 >= widest {
            level += 1;
        }
        self.level = level;
        let cells = 1u32 << level;
        let scale = cells as f32 / side;
        let cell =
            |c: f32, origin: f32| ((c - origin) * scale).clamp(0.0, (cells - 1) as f32) as u64;

        let t0 = Instant::now();
        self.keys.clear();
        self.keys
            .extend(scene.boxes.iter().zip(0u64..).map(|(b, i)| {
                let cx = cell((b[0] + b[2]) * 0.5, x0);
                let cy = cell((b[1] + b[3]) * 0.5, y0);
                (((cy << level) | cx) << 32) | i
            }));
        let t1 = Instant::now();
        radix_sort(&mut self.keys, spare, 32..32 + 8 * (2 * level).div_ceil(8));
        let t2 = Instant::now();
        for (j, &k) in self.keys.iter().enumerate() {
            let b = &scene.boxes[(k & 0xffff_ffff) as usize];
            self.boxes.set(j, b);
        }
        laps([t0, t1, t2, Instant::now()])
    }

    /// The number of intersecting pairs (closed boxes).
    fn pairs(&self) -> u64 {
        let n = self.keys.len();
        let level = self.level;
        let last = (1u32 << level) - 1;
        let cell = |j: usize| ((self.keys[j] >> 32) & 0xffff_ffff) as u32;
        let hits = |i: usize, j: usize| self.boxes.hits(i, j);
        let mut pairs = 0;
        // The first box of the next row in reach of the current cell; it
        // only moves forward, as the cells do.
        let mut below = 0;
        for i in 0..n {
            let c = cell(i);
            let (row, col) = (c >> level, c & last);
            let mut j = i + 1;
            while j < n && cell(j) >> level == row && cell(j) <= c + 1 {
                pairs += hits(i, j);
                j += 1;
            }
            if row == last {
                continue;
            }
            let (lo, hi) = (
                ((row + 1) << level) | col.saturating_sub(1),
                ((row + 1) << level) | (col + 1).min(last),
            );
            below = below.max(i + 1);
            while below < n && cell(below) < lo {
                below += 1;
            }
            let mut j = below;
            while j < n && cell(j) <= hi {
                pairs += hits(i, j);
                j += 1;
            }
        }
        pairs
    }
}

/// Bits of a strip key that hold a box's quantized `min.x`.
const X_BITS: u32 = 18;
/// Where a strip key holds the strip's row, above the quantized `min.x`.
const ROW_SHIFT: u32 = 32 + X_BITS;
/// Where a strip key holds the level, above the row.
const LEVEL_SHIFT: u32 = ROW_SHIFT + MAX_LEVEL;

/// The same boxes in horizontal strips, at levels by size: each box sits
/// at the finest level whose strips are wider than it, in the strip
/// that holds its centre, and each strip's boxes are in the order of their
/// `min.x`. A sweep along each strip and between neighbouring strips of a
/// level replaces the scan of whole cells, and each box searches the
/// strips it reaches at the finer levels.
struct Strips {
    /// `level << 60 | row << 50 | quantized min.x << 32 | index`, sorted.
    keys: Vec<u64>,
    boxes: Boxes,
    /// Each box's quantized `min.x`, as in its key.
    start_x: Vec<u32>,
    /// Each box's `max.x`, quantized as the keys quantize `min.x`.
    reach: Vec<u32>,
    /// Where each box (by its index in the scene) sits in the order.
    place: Vec<u32>,
    /// For each level, where each of its strips starts in `keys`, and
    /// where the last ends.
    starts: Vec<Vec<usize>>,
    /// How boxes map to levels, strips and quantized `x`.
    space: Space,
}

/// The world as the strips see it: its lower corner, its side and the
/// side's reciprocal.
#[derive(Clone, Copy)]
struct Space {
    origin: [f32; 2],
    side: f32,
    recip: f32,
}

impl Strips {
    fn new(n: usize) -> Strips {
        Strips {
            keys: Vec::with_capacity(n),
            boxes: Boxes::new(n),
            start_x: vec![0; n],
            reach: vec![0; n],
            place: vec![0; n],
            starts: (0..=MAX_LEVEL).map(|l| vec![0; (1 << l) + 1]).collect(),
            space: Space {
                origin: [0.0; 2],
                side: 1.0,
                recip: 1.0,
            },
        }
    }
}

impl Space {
    /// The space of a scene's world.
    fn of(scene: &Scene) -> Space {
        let [x0, y0, x1, y1] = scene.world;
        let side = (x1 - x0).max(y1 - y0);
        Space {
            origin: [x0, y0],
            side,
            recip: 1.0 / side,
        }
    }

    /// The finest level whose strips are wider than `extent`: about the
    /// binary logarithm of `side / extent`, read from the exponent of the
    /// ratio, then checked.
    fn level_of(&self, extent: f32) -> u32 {
        let ratio = self.side / extent;
        let mut level = if ratio >= 1.0 {
            ((ratio.to_bits() >> 23) & 0xff)
                .saturating_sub(127)
                .min(MAX_LEVEL)
        } else {
            0
        };
        while level > 0 && self.side * (1.0 / (1u32 << level) as f32) <= extent {
            level -= 1;
        }
        level
    }

    /// The strip of `level` that holds height `y` (clamped to the world's).
    fn row(&self, level: u32, y: f32) -> u32 {
        let rows = 1u32 << level;
        ((y - self.origin[1]) * self.recip * rows as f32).clamp(0.0, (rows - 1) as f32) as u32
    }

    /// `x`'s place among `1 << X_BITS` equal steps of the world, clamped
    /// to them; the order of places is the order of the coordinates.
    fn quantize(&self, x: f32) -> u32 {
        let scale = (1u32 << X_BITS) as f32 * self.recip;
        ((x - self.origin[0]) * scale).clamp(0.0, ((1u32 << X_BITS) - 1) as f32) as u32
    }

    /// The keys of `boxes` into `out` (as long), in their order, half on
    /// each of two threads.
    fn par_keys(self, boxes: &[[f32; 4]], out: &mut [u64]) {
        let (first, second) = out.split_at_mut(boxes.len() / 2);
        let keys = |out: &mut [u64], from: usize| {
            let part = &boxes[from..from + out.len()];
            for ((k, b), i) in out.iter_mut().zip(part).zip(from as u32..) {
                *k = self.key(b, i);
            }
        };
        std::thread::scope(|s| {
            s.spawn(|| keys(second, boxes.len() / 2));
            keys(first, 0);
        });
    }

    /// The key of box `b`, the scene's box `i`.
    fn key(&self, b: &[f32; 4], i: u32) -> u64 {
        let level = self.level_of((b[2] - b[0]).max(b[3] - b[1]));
        let row = self.row(level, (b[1] + b[3]) * 0.5);
        (u64::from(level) << LEVEL_SHIFT)
            | (u64::from(row) << ROW_SHIFT)
            | (u64::from(self.quantize(b[0])) << 32)
            | u64::from(i)
    }
}

impl Strips {
    /// Keys, sort and gather (with each strip's start); returns the time
    /// of each.
    fn build(&mut self, scene: &Scene, spare: &mut Vec<u64>) -> [f64; 3] {
        self.space = Space::of(scene);
        let t0 = Instant::now();
        let space = self.space;
        self.keys.clear();
        let keys = scene.boxes.iter().zip(0u32..).map(|(b, i)| space.key(b, i));
        self.keys.extend(keys);
        let t1 = Instant::now();
        msd_sort(&mut self.keys, spare, 56, below_top_byte);
        let t2 = Instant::now();
        self.gather(&scene.boxes);
        laps([t0, t1, t2, Instant::now()])
    }

    /// The boxes' new places after they moved, from the last order instead
    /// of a sort from scratch: each new key is written where its box sat
    /// (reading the boxes in their own order), then one stable counting
    /// pass by level and strip (a box that stays in its strip keeps its
    /// place among the others), a sort of each strip that takes its runs
    /// as they come, and the gather. Returns the time of the keys, the
    /// sort and the gather.
    fn refresh(&mut self, boxes: &[[f32; 4]], spare: &mut Vec<u64>) -> [f64; 3] {
        let t0 = Instant::now();
        let mut keys = core::mem::take(&mut self.keys);
        for (i, b) in (0u32..).zip(boxes) {
            keys[self.place[i as usize] as usize] = self.space.key(b, i);
        }
        let t1 = Instant::now();
        let strips = 1usize << (64 - ROW_SHIFT);
        let mut count = vec![0usize; strips + 1];
        for &k in &keys {
            count[(k >> ROW_SHIFT) as usize + 1] += 1;
        }
        for s in 1..=strips {
            count[s] += count[s - 1];
        }
        spare.resize(keys.len(), 0);
        let mut at = count.clone();
        for &k in &keys {
            let s = (k >> ROW_SHIFT) as usize;
            spare[at[s]] = k;
            at[s] += 1;
        }
        core::mem::swap(&mut keys, spare);
        for s in 0..strips {
            keys[count[s]..count[s + 1]].sort();
        }
        self.keys = keys;
        let t2 = Instant::now();
        self.gather(boxes);
        laps([t0, t1, t2, Instant::now()])
    }

    /// Puts each box in the order of the keys, with its quantized ends,
    /// and finds where each strip starts.
    fn gather(&mut self, boxes: &[[f32; 4]]) {
        for (j, &k) in self.keys.iter().enumerate() {
            let b = &boxes[(k & 0xffff_ffff) as usize];
            self.boxes.set(j, b);
            self.start_x[j] = ((k >> 32) & ((1 << X_BITS) - 1)) as u32;
            self.reach[j] = self.space.quantize(b[2]);
            self.place[(k & 0xffff_ffff) as usize] = j as u32;
        }
        self.find_starts();
    }

    /// Finds where each strip starts in the sorted keys, by binary search.
    fn find_starts(&mut self) {
        for (level, starts) in self.starts.iter_mut().enumerate() {
            let first = u64::from(level as u32) << LEVEL_SHIFT;
            for (row, start) in starts.iter_mut().enumerate() {
                let bound = first | ((row as u64) << ROW_SHIFT);
                *start = self.keys.partition_point(|&k| k < bound);
            }
        }
    }

    /// [`build`](Strips::build) on two threads: each computes the keys of
    /// half the boxes, the keys are sorted by [`par_sort`], and each thread
    /// gathers half the order. Leaves `place` as it was (only the one-thread
    /// refresh reads it).
    fn par_build(&mut self, scene: &Scene, spare: &mut Vec<u64>) -> [f64; 3] {
        self.space = Space::of(scene);
        let t0 = Instant::now();
        let space = self.space;
        let n = scene.boxes.len();
        self.keys.resize(n, 0);
        space.par_keys(&scene.boxes, &mut self.keys);
        let t1 = Instant::now();
        par_sort(&mut self.keys, spare, 56, below_top_byte);
        let t2 = Instant::now();
        self.par_gather(&scene.boxes);
        laps([t0, t1, t2, Instant::now()])
    }

    /// [`refresh`](Strips::refresh) on two threads, without `place`: each
    /// thread computes the new keys of half the boxes in their own order,
    /// then each rewrites half of the last order with its boxes' new keys;
    /// the keys are sorted by strip with [`par_sort`], each strip by a
    /// `sort` that takes its runs as they come, and the boxes gathered as
    /// by [`par_build`](Strips::par_build).
    fn par_refresh(
        &mut self,
        boxes: &[[f32; 4]],
        fresh: &mut Vec<u64>,
        spare: &mut Vec<u64>,
    ) -> [f64; 3] {
        let t0 = Instant::now();
        let (space, n) = (self.space, boxes.len());
        fresh.resize(n, 0);
        space.par_keys(boxes, fresh);
        let fresh = &*fresh;
        let (k0, k1) = self.keys.split_at_mut(n / 2);
        let renew = |part: &mut [u64]| {
            for k in part {
                *k = fresh[(*k & 0xffff_ffff) as usize];
            }
        };
        std::thread::scope(|s| {
            s.spawn(|| renew(k1));
            renew(k0);
        });
        let t1 = Instant::now();
        par_sort(&mut self.keys, spare, ROW_SHIFT, |strip, _| {
            strip.sort();
            true
        });
        let t2 = Instant::now();
        self.par_gather(boxes);
        laps([t0, t1, t2, Instant::now()])
    }

    /// [`gather`](Strips::gather) on two threads, each writing half the
    /// order, without `place`.
    fn par_gather(&mut self, boxes: &[[f32; 4]]) {
        let (space, keys) = (self.space, &self.keys);
        let m = keys.len() / 2;
        let b = &mut self.boxes;
        let (mx0, mx1) = b.min_x.split_at_mut(m);
        let (my0, my1) = b.min_y.split_at_mut(m);
        let (xx0, xx1) = b.max_x.split_at_mut(m);
        let (xy0, xy1) = b.max_y.split_at_mut(m);
        let (sx0, sx1) = self.start_x.split_at_mut(m);
        let (r0, r1) = self.reach.split_at_mut(m);
        type Half<'a> = (&'a [u64], [&'a mut [f32]; 4], &'a mut [u32], &'a mut [u32]);
        let fill = |(keys, [mx, my, xx, xy], sx, r): Half<'_>| {
            for (j, &k) in keys.iter().enumerate() {
                let b = &boxes[(k & 0xffff_ffff) as usize];
                (mx[j], my[j], xx[j], xy[j]) = (b[0], b[1], b[2], b[3]);
                sx[j] = ((k >> 32) & ((1 << X_BITS) - 1)) as u32;
                r[j] = space.quantize(b[2]);
            }
        };
        let (keys0, keys1) = keys.split_at(m);
        std::thread::scope(|s| {
            s.spawn(|| fill((keys1, [mx1, my1, xx1, xy1], sx1, r1)));
            fill((keys0, [mx0, my0, xx0, xy0], sx0, r0));
        });
        self.find_starts();
    }

    /// The boxes of `j..end` (in the order of `min.x`) that start no
    /// further right than box `i` ends and intersect it, counted eight at a
    /// time ([`hit_lanes`]) with no branch but the one that stops the sweep.
    ///
    /// With `LIST`, each pair found is also written to `out` as the two
    /// boxes' indices in the scene, the smaller first, from the mask of the
    /// lanes that hit. Always inlined: as a call of its own it ran 1.23×
    /// the instructions of the counting scan (callgrind, uniform 100k).
    #[inline(always)]
    fn sweep<const LIST: bool>(
        &self,
        i: usize,
        mut j: usize,
        end: usize,
        out: &mut Sink<'_>,
    ) -> u64 {
        let b = &self.boxes;
        let (reach, x0, x1, y0, y1) = (
            self.reach[i],
            b.min_x[i],
            b.max_x[i],
            b.min_y[i],
            b.max_y[i],
        );
        let mut found = 0;
        while j + LANES <= end {
            let r = j..j + LANES;
            let (sx, mx, my, xx, xy) = (
                &self.start_x[r.clone()],
                &b.min_x[r.clone()],
                &b.min_y[r.clone()],
                &b.max_x[r.clone()],
                &b.max_y[r],
            );
            let mut mask = hit_lanes([mx, xx, my, xy], [x0, x1, y0, y1]);
            found += u64::from(mask.count_ones());
            // Listing: a pair for each lane that hit (most blocks hold none).
            if LIST && mask != 0 {
                let a = self.keys[i] as u32;
                let ids = &self.keys[j..j + LANES];
                let room = out.room();
                let mut w = 0;
                while mask != 0 {
                    let b = ids[mask.trailing_zeros() as usize] as u32;
                    room[w] = (a.min(b), a.max(b));
                    w += 1;
                    mask &= mask - 1;
                }
                out.advance(w);
            }
            if sx[LANES - 1] > reach {
                return found;
            }
            j += LANES;
        }
        while j < end && self.start_x[j] <= reach {
            let hit = b.hits(i, j);
            if LIST && hit == 1 {
                self.push(out, i, j);
            }
            found += hit;
            j += 1;
        }
        found
    }

    /// Pushes the pair of the boxes at `i` and `j` to `out`, as their
    /// indices in the scene, the smaller first.
    #[inline]
    fn push(&self, out: &mut Sink<'_>, i: usize, j: usize) {
        let (a, b) = (self.keys[i] as u32, self.keys[j] as u32);
        out.room()[0] = (a.min(b), a.max(b));
        out.advance(1);
    }

    /// The number of intersecting pairs (closed boxes).
    ///
    /// Two boxes that intersect have each `min.x` at most the other's
    /// `max.x`, and quantizing keeps that order, so from the box earlier in
    /// the order a sweep forward reaches the other before the quantized
    /// `min.x` passes its own quantized `max.x`. Within a strip, that finds
    /// every pair once. Between a strip and the next, each box sweeps the
    /// other strip from the first box not earlier than itself (on a tie, the
    /// box of the first strip counts as earlier), so each pair is found
    /// once too. A pair of boxes at two levels is found from the coarser
    /// box, which searches every strip of the finer level whose boxes can
    /// reach it.
    fn pairs(&self) -> u64 {
        self.pairs_in::<false>(0, 1, &mut Sink::direct(Vec::new()))
    }

    /// [`pairs`](Strips::pairs) on two threads, each taking half the boxes
    /// of every level (whole strips) and half the boxes that search finer
    /// levels.
    fn par_pairs(&self) -> u64 {
        std::thread::scope(|s| {
            let other = s.spawn(|| self.pairs_in::<false>(1, 2, &mut Sink::direct(Vec::new())));
            self.pairs_in::<false>(0, 2, &mut Sink::direct(Vec::new()))
                + other.join().expect("the other half")
        })
    }

    /// Every pair into the first places of `out`, as [`Strips::push`]
    /// writes them; returns how many. `out` keeps its length from call to
    /// call (what lies past the pairs is left from before), so that a
    /// buffer kept from run to run is not filled with zeros again each time
    /// it grows back.
    fn list(&self, out: &mut Vec<(u32, u32)>) -> u64 {
        let mut sink = Sink::direct(core::mem::take(out));
        let found = self.pairs_in::<true>(0, 1, &mut sink);
        *out = core::mem::take(&mut sink.buf);
        found
    }

    /// [`list`](Strips::list) on two threads: each gathers its pairs in a
    /// buffer of [`Sink::BUFFER`] and appends them to `out` under a lock
    /// whenever it fills, as quadrat's `par_map_pairs_into` does.
    fn par_list(&self, out: &mut Vec<(u32, u32)>) -> u64 {
        out.clear();
        let shared = std::sync::Mutex::new(out);
        std::thread::scope(|s| {
            let other = s.spawn(|| self.pairs_in::<true>(1, 2, &mut Sink::shared(&shared)));
            self.pairs_in::<true>(0, 2, &mut Sink::shared(&shared))
                + other.join().expect("the other half")
        })
    }

    /// The pairs found from share `part` of `parts`: at each level, the
    /// strips from the one holding the `part`-th fraction of its boxes, and
    /// of the boxes that search finer levels, the `part`-th fraction.
    fn pairs_in<const LIST: bool>(&self, part: usize, parts: usize, out: &mut Sink<'_>) -> u64 {
        let x = &self.start_x;
        let space = self.space;
        let share = |lo: usize, hi: usize, k: usize| lo + (hi - lo) * k / parts;
        let mut pairs = 0;
        for starts in &self.starts {
            let last = starts.len() - 1;
            let (first, end) = (starts[0], starts[last]);
            let strip_at = |j: usize| starts[..last].partition_point(|&s| s < j);
            let strips = if parts == 1 {
                0..last
            } else {
                strip_at(share(first, end, part))..strip_at(share(first, end, part + 1))
            };
            let strips = if part + 1 == parts {
                strips.start..last
            } else {
                strips
            };
            for s in strips {
                let a = starts[s]..starts[s + 1];
                let b = starts[s + 1]..*starts.get(s + 2).unwrap_or(&starts[s + 1]);
                for i in a.clone() {
                    pairs += self.sweep::<LIST>(i, i + 1, a.end, out);
                }
                if b.is_empty() {
                    continue;
                }
                // The boxes of this strip sweep the next from the first box
                // at or after them; those of the next sweep this one from
                // the first box strictly after them.
                let mut from = b.start;
                for i in a.clone() {
                    while from < b.end && x[from] < x[i] {
                        from += 1;
                    }
                    pairs += self.sweep::<LIST>(i, from, b.end, out);
                }
                let mut from = a.start;
                for i in b {
                    while from < a.end && x[from] <= x[i] {
                        from += 1;
                    }
                    pairs += self.sweep::<LIST>(i, from, a.end, out);
                }
            }
        }
        // Across levels: each box meets the finer levels' boxes whose
        // centres lie within half a strip of it (and so in the strips that
        // hold those heights), starting from the first that begins no
        // further left than a strip's width (twice, for rounding) before it.
        let levels: Vec<u32> = (0..=MAX_LEVEL)
            .filter(|&l| {
                let s = &self.starts[l as usize];
                s[0] < s[s.len() - 1]
            })
            .collect();
        for (c, &coarse) in levels.iter().enumerate() {
            let s = &self.starts[coarse as usize];
            let (lo, hi) = (s[0], s[s.len() - 1]);
            for i in share(lo, hi, part)..share(lo, hi, part + 1) {
                let b = &self.boxes;
                for &fine in &levels[c + 1..] {
                    let width = space.side / (1u32 << fine) as f32;
                    let from_x = space.quantize(b.min_x[i] - 2.0 * width);
                    let rows = space.row(fine, b.min_y[i] - 0.5 * width)
                        ..=space.row(fine, b.max_y[i] + 0.5 * width);
                    let starts = &self.starts[fine as usize];
                    for r in rows {
                        let strip = starts[r as usize]..starts[r as usize + 1];
                        let j = strip.start
                            + self.start_x[strip.clone()].partition_point(|&x| x < from_x);
                        pairs += self.sweep::<LIST>(i, j, strip.end, out);
                    }
                }
            }
        }
        pairs
    }
}

/// Which of the [`LANES`] boxes `[min x, max x, min y, max y]` meet the
/// box `[x0, x1, y0, y1]` (closed), as a mask of lanes: on x86-64 in two
/// vector compares of four lanes and a `movemask` each, which the compiler
/// does not make of the scalar tests.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn hit_lanes(b: [&[f32]; 4], [x0, x1, y0, y1]: [f32; 4]) -> u32 {
    use core::arch::x86_64::{_mm_and_ps, _mm_cmple_ps, _mm_movemask_ps, _mm_set_ps, _mm_set1_ps};
    let [mx, xx, my, xy] = b;
    // SAFETY: these need SSE alone, which every x86-64 processor has (it
    // is in the target's baseline); they compute on their arguments and
    // touch no memory (the lanes are read from the slices, bounds checked).
    unsafe {
        let quad = |v: &[f32], o: usize| _mm_set_ps(v[o + 3], v[o + 2], v[o + 1], v[o]);
        let half = |o: usize| {
            let x = _mm_and_ps(
                _mm_cmple_ps(quad(mx, o), _mm_set1_ps(x1)),
                _mm_cmple_ps(_mm_set1_ps(x0), quad(xx, o)),
            );
            let y = _mm_and_ps(
                _mm_cmple_ps(quad(my, o), _mm_set1_ps(y1)),
                _mm_cmple_ps(_mm_set1_ps(y0), quad(xy, o)),
            );
            _mm_movemask_ps(_mm_and_ps(x, y)) as u32
        };
        half(0) | half(4) << 4
    }
}

/// [`hit_lanes`] elsewhere, one lane at a time.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn hit_lanes(b: [&[f32]; 4], [x0, x1, y0, y1]: [f32; 4]) -> u32 {
    let [mx, xx, my, xy] = b;
    let mut mask = 0;
    for k in 0..LANES {
        let hit = (mx[k] <= x1) & (x0 <= xx[k]) & (my[k] <= y1) & (y0 <= xy[k]);
        mask |= u32::from(hit) << k;
    }
    mask
}

/// Where a pair scan that lists its pairs puts them: straight into the
/// caller's vector on one thread; on two, into a buffer of its own that is
/// appended to the shared vector under its lock whenever it fills, and
/// when the sink is dropped. The pairs so far are `buf[..len]`; `buf` is
/// kept at least [`LANES`] longer, so that a block of boxes can write a
/// pair for each of them and keep those that hit.
struct Sink<'a> {
    buf: Vec<(u32, u32)>,
    len: usize,
    to: Option<&'a std::sync::Mutex<&'a mut Vec<(u32, u32)>>>,
}

impl<'a> Sink<'a> {
    /// The pairs a thread gathers before it takes the lock.
    const BUFFER: usize = 4096;

    /// A sink that pushes to `out`, taken by value and given back as `buf`.
    fn direct(out: Vec<(u32, u32)>) -> Sink<'a> {
        Sink {
            buf: out,
            len: 0,
            to: None,
        }
    }

    /// A sink that appends to `to`, [`Sink::BUFFER`] pairs at a time.
    fn shared(to: &'a std::sync::Mutex<&'a mut Vec<(u32, u32)>>) -> Sink<'a> {
        Sink {
            buf: vec![(0, 0); Self::BUFFER + LANES],
            len: 0,
            to: Some(to),
        }
    }

    /// Room for [`LANES`] pairs after the last: a pair written at `k` is
    /// kept by [`advance`](Sink::advance) past `k`.
    #[inline]
    fn room(&mut self) -> &mut [(u32, u32)] {
        if self.len + LANES > self.buf.len() {
            let grown = (2 * self.buf.len()).max(Self::BUFFER) + LANES;
            self.buf.resize(grown, (0, 0));
        }
        &mut self.buf[self.len..self.len + LANES]
    }

    /// Keeps the first `w` pairs written to the room.
    #[inline]
    fn advance(&mut self, w: usize) {
        self.len += w;
        if self.to.is_some() && self.len >= Self::BUFFER {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(to) = self.to {
            let mut to = to.lock().expect("no panic holds the lock");
            to.extend_from_slice(&self.buf[..self.len]);
            self.len = 0;
        }
    }
}

impl Drop for Sink<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Sorts `keys` by their bits in `bits`, 8 at a time, least significant
/// first, with `spare` as the second buffer.
fn radix_sort(keys: &mut Vec<u64>, spare: &mut Vec<u64>, bits: core::ops::Range<u32>) {
    spare.resize(keys.len(), 0);
    for shift in bits.step_by(8) {
        radix_pass(keys, spare, shift);
        core::mem::swap(keys, spare);
    }
}

/// Sorts `keys` by their bits from `shift` up (at most 14 of them), then
/// within each bucket of equal such bits by `finish`, on one thread: the
/// keys are split by those bits into `spare` (a stable counting pass), and
/// each bucket is finished in place with as much scratch from `keys`, so
/// that its later passes stay within a bucket small enough for the cache.
/// `finish` returns as for [`par_sort`].
fn msd_sort(
    keys: &mut [u64],
    spare: &mut Vec<u64>,
    shift: u32,
    finish: impl Fn(&mut [u64], &mut [u64]) -> bool,
) {
    let buckets = 1usize << (64 - shift);
    let mut start = vec![0usize; buckets + 1];
    for &k in keys.iter() {
        start[(k >> shift) as usize + 1] += 1;
    }
    for b in 1..=buckets {
        start[b] += start[b - 1];
    }
    spare.resize(keys.len(), 0);
    let mut at = start.clone();
    for &k in keys.iter() {
        let b = (k >> shift) as usize;
        spare[at[b]] = k;
        at[b] += 1;
    }
    for b in 0..buckets {
        let range = start[b]..start[b + 1];
        let (bucket, room) = (&mut spare[range.clone()], &mut keys[range]);
        if finish(bucket, room) {
            room.copy_from_slice(bucket);
        }
    }
}

/// Sorts a bucket of keys that share their top byte by the three bytes
/// below it (bits 32 to 56), one stable pass each: the result ends in
/// `scratch`, so this returns `false`.
fn below_top_byte(bucket: &mut [u64], scratch: &mut [u64]) -> bool {
    let (mut from, mut to) = (bucket, scratch);
    for shift in [32, 40, 48] {
        radix_pass(from, to, shift);
        (from, to) = (to, from);
    }
    false
}

/// One stable pass of a radix sort: `from` into `to` by the 8 bits of each
/// key from `shift` up.
fn radix_pass(from: &[u64], to: &mut [u64], shift: u32) {
    let mut count = [0usize; 256];
    for &k in from {
        count[((k >> shift) & 0xff) as usize] += 1;
    }
    let mut sum = 0;
    for c in &mut count {
        (*c, sum) = (sum, sum + *c);
    }
    for &k in from {
        let d = ((k >> shift) & 0xff) as usize;
        to[count[d]] = k;
        count[d] += 1;
    }
}

/// Sorts `keys` on two threads by their bits from `shift` up (at most 14
/// of them), then within each bucket of equal such bits by `finish`: each
/// half of the keys is split by the bits into a buffer of its own, the
/// buckets are cut where their sizes come closest to half the keys, and
/// each thread gathers its buckets from both halves (the first half's
/// first, so that equal keys keep their order) into its part of `spare`.
/// It then calls `finish` for each bucket with the bucket's keys and as
/// much scratch from its part of `keys`; `finish` orders the bucket and
/// returns `true` when it left the result in the bucket, `false` when in
/// the scratch.
fn par_sort(
    keys: &mut [u64],
    spare: &mut Vec<u64>,
    shift: u32,
    finish: impl Fn(&mut [u64], &mut [u64]) -> bool + Sync,
) {
    let (n, buckets) = (keys.len(), 1usize << (64 - shift));
    let bucket = |k: u64| (k >> shift) as usize;
    let split = |half: &[u64]| {
        let mut start = vec![0usize; buckets + 1];
        for &k in half {
            start[bucket(k) + 1] += 1;
        }
        for b in 1..=buckets {
            start[b] += start[b - 1];
        }
        let (mut at, mut out) = (start.clone(), vec![0u64; half.len()]);
        for &k in half {
            let b = bucket(k);
            out[at[b]] = k;
            at[b] += 1;
        }
        (start, out)
    };
    let (h0, h1) = keys.split_at(n / 2);
    let [(s0, o0), (s1, o1)] = std::thread::scope(|s| {
        let other = s.spawn(|| split(h1));
        [split(h0), other.join().expect("the other half")]
    });
    let start: Vec<usize> = (0..=buckets).map(|b| s0[b] + s1[b]).collect();
    let cut = (0..=buckets)
        .min_by_key(|&b| start[b].abs_diff(n / 2))
        .expect("buckets");
    spare.resize(n, 0);
    let (p0, p1) = spare.split_at_mut(start[cut]);
    let (q0, q1) = keys.split_at_mut(start[cut]);
    let (halves, finish) = ([(&s0, &o0), (&s1, &o1)], &finish);
    let work = |part: &mut [u64], scratch: &mut [u64], range: core::ops::Range<usize>| {
        let mut w = 0;
        for b in range {
            let from = w;
            for (start, out) in halves {
                let run = &out[start[b]..start[b + 1]];
                part[w..w + run.len()].copy_from_slice(run);
                w += run.len();
            }
            // Leave the result in `scratch`, the caller's `keys`.
            let (bucket, room) = (&mut part[from..w], &mut scratch[from..w]);
            if finish(bucket, room) {
                room.copy_from_slice(bucket);
            }
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| work(p1, q1, cut..buckets));
        work(p0, q0, 0..cut);
    });
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let layout = match args.first().map(String::as_str) {
        None | Some("uniform") => Layout::Uniform,
        Some("clustered") => Layout::Clustered,
        Some("mixed") => Layout::MixedSizes,
        Some(other) => {
            eprintln!("grid_floor: unknown layout {other:?} (uniform, clustered or mixed)");
            return ExitCode::FAILURE;
        }
    };
    let parse = |i: usize, default: usize| match args.get(i) {
        None => Some(default),
        Some(s) => s.replace('_', "").parse().ok(),
    };
    let (Some(n), Some(runs)) = (parse(1, 1_000_000), parse(2, 9)) else {
        eprintln!("grid_floor: n and runs are whole numbers");
        return ExitCode::FAILURE;
    };
    let runs = runs.max(1);
    let list = match args.get(3).map(String::as_str) {
        None | Some("count") => false,
        Some("list") => true,
        Some(other) => {
            eprintln!("grid_floor: unknown output {other:?} (count or list)");
            return ExitCode::FAILURE;
        }
    };
    let scene = Scene::new(layout, n, 7);
    let mut lists = Lists::default();

    let mut tree = QuadTree::new(Aabb::from(scene.world));
    tree.insert_many(scene.boxes.iter().map(|&b| (Aabb::from(b), ())));
    let mut grid = Grid::new(n);
    let mut strips = Strips::new(n);
    let mut two = Strips::new(n);
    let mut peer = Peer::new();
    let (mut spare, mut fresh) = (Vec::new(), Vec::new());
    let (mut parts, mut scan, mut rebuild, mut walk) = (vec![], vec![], vec![], vec![]);
    let (mut strip_parts, mut sweep, mut two_parts, mut two_sweep) =
        (vec![], vec![], vec![], vec![]);
    let (mut found, mut swept, mut swept2, mut expected) = (0, 0, 0, 0);
    for _ in 0..runs {
        parts.push(grid.build(&scene, &mut spare));
        let t = Instant::now();
        found = grid.pairs();
        scan.push(t.elapsed().as_secs_f64() * 1e3);
        strip_parts.push(strips.build(&scene, &mut spare));
        let t = Instant::now();
        swept = lists.strips(&strips, list);
        sweep.push(t.elapsed().as_secs_f64() * 1e3);
        two_parts.push(two.par_build(&scene, &mut spare));
        let t = Instant::now();
        swept2 = lists.two(&two, list);
        two_sweep.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        tree.rebuild();
        rebuild.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        expected = lists.tree(&tree, list);
        walk.push(t.elapsed().as_secs_f64() * 1e3);
        peer.time(&scene.boxes, list.then_some(&mut lists.peer));
        if let Err(e) = lists.agree(list) {
            eprintln!("grid_floor: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!(
        "{} n={n}, {} × {} cells, medians of {runs}:",
        layout.name(),
        1u32 << grid.level,
        1u32 << grid.level
    );
    print_parts("cells", "build", &parts, median(scan), found);
    let (sweep, two_sweep) = (median(sweep), median(two_sweep));
    print_parts("strips", "build", &strip_parts, sweep, swept);
    print_parts("strips×2", "build", &two_parts, two_sweep, swept2);
    let (rebuild, walk) = (median(rebuild), median(walk));
    println!("  quadrat: rebuild {rebuild:.2} ms; for_each_pair {walk:.2} ms ({expected})");
    let sum = |parts: &[[f64; 3]], pairs: f64| {
        median(parts.iter().map(|p| p.iter().sum()).collect()) + pairs
    };
    peer.report(
        "build + pairs",
        &[
            ("quadrat", rebuild + walk),
            ("strips", sum(&strip_parts, sweep)),
            ("strips×2", sum(&two_parts, two_sweep)),
        ],
    );
    if found != expected || swept != expected || swept2 != expected || !peer.agrees(expected) {
        eprintln!(
            "grid_floor: the cells found {found} pairs, the strips {swept} and {swept2} on two threads{}, where quadrat found {expected}",
            peer.found()
        );
        return ExitCode::FAILURE;
    }
    // Drift frames: every box steps up to a quarter of its size, then the
    // strips are refreshed from their last order and swept (on one thread
    // and on two), the tree moves its items with `update_all` and walks its
    // pairs, and the peer is rebuilt and finds its pairs.
    let mut tree = QuadTree::new(Aabb::from(scene.world));
    tree.insert_many(scene.boxes.iter().map(|&b| Aabb::from(b)).zip(0u32..));
    strips.build(&scene, &mut spare);
    two.par_build(&scene, &mut spare);
    let mut peer = Peer::new();
    let mut frames = Frames::new(&scene, Motion::Drift, 11);
    let (mut refresh, mut sweep, mut update, mut walk) = (vec![], vec![], vec![], vec![]);
    let (mut two_refresh, mut two_sweep) = (vec![], vec![]);
    let mut counts = (0, 0, 0);
    for _ in 0..runs {
        frames.advance();
        let boxes = &frames.boxes;
        refresh.push(strips.refresh(boxes, &mut spare));
        let t = Instant::now();
        let swept = lists.strips(&strips, list);
        sweep.push(t.elapsed().as_secs_f64() * 1e3);
        two_refresh.push(two.par_refresh(boxes, &mut fresh, &mut spare));
        let t = Instant::now();
        let swept2 = lists.two(&two, list);
        two_sweep.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        tree.update_all(|_, &i, _| Aabb::from(boxes[i as usize]));
        update.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let count = lists.tree(&tree, list);
        walk.push(t.elapsed().as_secs_f64() * 1e3);
        peer.time(boxes, list.then_some(&mut lists.peer));
        counts = (swept, swept2, count);
        if swept != count || swept2 != count || !peer.agrees(count) {
            break;
        }
        if let Err(e) = lists.agree(list) {
            eprintln!("grid_floor: after a drift frame, {e}");
            return ExitCode::FAILURE;
        }
    }
    println!("  a drift frame, medians of {runs}:");
    let (sweep, two_sweep) = (median(sweep), median(two_sweep));
    print_parts("strips", "refresh", &refresh, sweep, counts.0);
    print_parts("strips×2", "refresh", &two_refresh, two_sweep, counts.1);
    let (update, walk) = (median(update), median(walk));
    println!(
        "  quadrat: update_all {update:.2} ms; for_each_pair {walk:.2} ms ({})",
        counts.2
    );
    peer.report(
        "a frame",
        &[
            ("quadrat", update + walk),
            ("strips", sum(&refresh, sweep)),
            ("strips×2", sum(&two_refresh, two_sweep)),
        ],
    );
    if counts.0 == counts.2 && counts.1 == counts.2 && peer.agrees(counts.2) {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "grid_floor: after a drift frame, the strips found {} pairs and {} on two threads{}, where quadrat found {}",
            counts.0,
            counts.1,
            peer.found(),
            counts.2
        );
        ExitCode::FAILURE
    }
}

/// The pairs each layout found, when they are listed (`list` on the
/// command line) instead of counted: the strips on one thread and on two,
/// quadrat and broccoli, each as the boxes' indices in the scene, the
/// smaller first. The buffers are kept from run to run, as the layouts
/// keep their arrays; the strips' own on one thread holds its last run's
/// pairs in its first `strips_len` places.
#[derive(Default)]
struct Lists {
    strips: Vec<(u32, u32)>,
    strips_len: usize,
    two: Vec<(u32, u32)>,
    tree: Vec<(u32, u32)>,
    peer: Vec<(u32, u32)>,
}

impl Lists {
    /// The strips' pairs on one thread: counted, or listed.
    fn strips(&mut self, strips: &Strips, list: bool) -> u64 {
        if list {
            let found = strips.list(&mut self.strips);
            self.strips_len = found as usize;
            found
        } else {
            strips.pairs()
        }
    }

    /// The strips' pairs on two threads: counted, or listed.
    fn two(&mut self, two: &Strips, list: bool) -> u64 {
        if list {
            two.par_list(&mut self.two)
        } else {
            two.par_pairs()
        }
    }

    /// quadrat's pairs, by `for_each_pair`: counted, or listed by the
    /// keys' indices (a tree built by one `insert_many` into an empty tree
    /// hands out index `i` for the `i`-th box).
    fn tree<T>(&mut self, tree: &QuadTree<T>, list: bool) -> u64 {
        if list {
            let out = &mut self.tree;
            out.clear();
            tree.for_each_pair(|a, b| {
                let (i, j) = (a.index(), b.index());
                out.push((i.min(j), i.max(j)));
            });
            out.len() as u64
        } else {
            let mut count = 0u64;
            tree.for_each_pair(|_, _| count += 1);
            count
        }
    }

    /// When listed, checks that every layout found the same pairs as
    /// quadrat (broccoli too, when it ran), each once: the lists are sorted
    /// and compared.
    fn agree(&mut self, list: bool) -> Result<(), String> {
        if !list {
            return Ok(());
        }
        let mut expected = self.tree.clone();
        expected.sort_unstable();
        if let Some(w) = expected.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("quadrat listed the pair {:?} twice", w[0]));
        }
        let peer = !self.peer.is_empty() || cfg!(feature = "peers");
        let mut named = vec![
            ("the strips", &self.strips[..self.strips_len]),
            ("the strips on two threads", &self.two[..]),
        ];
        if peer {
            named.push(("broccoli", &self.peer[..]));
        }
        for (name, found) in named {
            let mut found = found.to_vec();
            found.sort_unstable();
            if found != expected {
                let missing = expected.iter().find(|p| found.binary_search(p).is_err());
                let extra = found.iter().find(|p| expected.binary_search(p).is_err());
                return Err(format!(
                    "{name} listed {} pairs where quadrat listed {} (first missing {missing:?}, first extra {extra:?})",
                    found.len(),
                    expected.len()
                ));
            }
        }
        Ok(())
    }
}

/// broccoli, the fastest peer in the benchmark's build + pairs, timed on
/// the same boxes as the others: its tree built from scratch over the boxes
/// (the scenes have none of zero width or height, which its closed pair
/// search would need grown), then its pairs counted, as the others count
/// theirs. Without the `peers` feature, it times nothing and agrees with
/// any count.
struct Peer {
    times: Vec<f64>,
    found: Option<u64>,
}

impl Peer {
    fn new() -> Peer {
        Peer {
            times: vec![],
            found: None,
        }
    }

    /// Times one build and pair count over `boxes`.
    /// With `out`, the pairs are pushed there instead (cleared first), as
    /// the boxes' indices, the smaller first.
    #[cfg(feature = "peers")]
    fn time(&mut self, boxes: &[[f32; 4]], out: Option<&mut Vec<(u32, u32)>>) {
        let t = Instant::now();
        let mut elems: Vec<_> = boxes
            .iter()
            .zip(0u32..)
            .map(|(b, i)| (broccoli::rect(b[0], b[2], b[1], b[3]), i))
            .collect();
        let mut tree = broccoli::Tree::new(&mut elems);
        let count = match out {
            Some(out) => {
                out.clear();
                tree.find_colliding_pairs(|a, b| out.push((a.1.min(b.1), a.1.max(b.1))));
                out.len() as u64
            }
            None => {
                let mut count = 0u64;
                tree.find_colliding_pairs(|_, _| count += 1);
                count
            }
        };
        self.times.push(t.elapsed().as_secs_f64() * 1e3);
        self.found = Some(count);
    }

    #[cfg(not(feature = "peers"))]
    fn time(&mut self, _: &[[f32; 4]], _: Option<&mut Vec<(u32, u32)>>) {}

    /// `true` unless the peer ran and found another number of pairs.
    fn agrees(&self, pairs: u64) -> bool {
        self.found.is_none_or(|f| f == pairs)
    }

    /// What the peer found, for a message.
    fn found(&self) -> String {
        self.found
            .map_or(String::new(), |f| format!(" and broccoli {f}"))
    }

    /// Prints the peer's median and each of `others` over it.
    fn report(&self, what: &str, others: &[(&str, f64)]) {
        if self.times.is_empty() {
            return;
        }
        let peer = median(self.times.clone());
        let ratios: Vec<String> = others
            .iter()
            .map(|(name, t)| format!("{name} {:.2}", t / peer))
            .collect();
        println!(
            "  broccoli: {what} {peer:.2} ms; over it: {}",
            ratios.join(", ")
        );
    }
}

/// Prints one layout's line: the medians of its parts, of their sum (as
/// `total`), and of its pair scan, with the pairs it found.
fn print_parts(layout: &str, total: &str, parts: &[[f64; 3]], pairs: f64, found: u64) {
    let part = |k: usize| median(parts.iter().map(|p| p[k]).collect());
    println!(
        "  {:<8} keys {:.2} ms, sort {:.2} ms, gather {:.2} ms, {total} {:.2} ms; pairs {pairs:.2} ms ({found})",
        format!("{layout}:"),
        part(0),
        part(1),
        part(2),
        median(parts.iter().map(|p| p.iter().sum()).collect()),
    );
}
