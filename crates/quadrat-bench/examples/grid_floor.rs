//! What a one-level sorted grid costs on a benchmark scene: the simplest
//! form of a build as keys and a radix sort, and of a pair scan without a
//! tree walk. It times each part beside quadrat's `rebuild` and
//! `for_each_pair` on the same boxes, and checks its pair count against
//! quadrat's.
//!
//! ```text
//! cargo run --release -p quadrat-bench --example grid_floor -- [uniform|clustered|mixed] [n] [runs]
//! ```
//!
//! The grid has one level: its cells are the smallest power-of-two fraction
//! of the world no narrower than the largest box, so every box reaches at
//! most the cells around the one holding its centre. Each box gets a key
//! (its centre's cell, row by row, above its index), the keys are sorted in
//! three passes of 8 bits, and the boxes are gathered in that order into
//! four arrays. The scan meets each cell's boxes with the boxes after them
//! in the cell, in the next cell of the row, and in the three cells below.
//! Scenes with boxes of very different sizes get a coarse grid; the
//! uniform layout, where every box has the same size, is the case it is
//! meant for.

use std::process::ExitCode;
use std::time::Instant;

use quadrat::scenario::Layout;
use quadrat::{Aabb, QuadTree};
use quadrat_bench::scene::Scene;

/// The most levels the grid goes down: 1024 × 1024 cells.
const MAX_LEVEL: u32 = 10;

/// The median of `v`, in milliseconds.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The grid's keys and boxes, in the order of the cells, and its level.
struct Grid {
    keys: Vec<u64>,
    min_x: Vec<f32>,
    min_y: Vec<f32>,
    max_x: Vec<f32>,
    max_y: Vec<f32>,
    level: u32,
}

impl Grid {
    fn new(n: usize) -> Grid {
        Grid {
            keys: Vec::with_capacity(n),
            min_x: vec![0.0; n],
            min_y: vec![0.0; n],
            max_x: vec![0.0; n],
            max_y: vec![0.0; n],
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
        spare.resize(self.keys.len(), 0);
        for pass in 0..(2 * level).div_ceil(8) {
            let shift = 32 + 8 * pass;
            let mut count = [0usize; 256];
            for &k in &self.keys {
                count[((k >> shift) & 0xff) as usize] += 1;
            }
            let mut sum = 0;
            for c in &mut count {
                (*c, sum) = (sum, sum + *c);
            }
            for &k in &self.keys {
                let d = ((k >> shift) & 0xff) as usize;
                spare[count[d]] = k;
                count[d] += 1;
            }
            core::mem::swap(&mut self.keys, spare);
        }
        let t2 = Instant::now();
        for (j, &k) in self.keys.iter().enumerate() {
            let b = &scene.boxes[(k & 0xffff_ffff) as usize];
            (self.min_x[j], self.min_y[j]) = (b[0], b[1]);
            (self.max_x[j], self.max_y[j]) = (b[2], b[3]);
        }
        let t3 = Instant::now();
        [t0, t1, t2, t3]
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
            .collect::<Vec<_>>()
            .try_into()
            .expect("three parts")
    }

    /// The number of intersecting pairs (closed boxes).
    fn pairs(&self) -> u64 {
        let n = self.keys.len();
        let level = self.level;
        let last = (1u32 << level) - 1;
        let cell = |j: usize| ((self.keys[j] >> 32) & 0xffff_ffff) as u32;
        let hits = |i: usize, j: usize| {
            u64::from(
                (self.min_x[j] <= self.max_x[i])
                    & (self.min_x[i] <= self.max_x[j])
                    & (self.min_y[j] <= self.max_y[i])
                    & (self.min_y[i] <= self.max_y[j]),
            )
        };
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
    let scene = Scene::new(layout, n, 7);

    let mut tree = QuadTree::new(Aabb::from(scene.world));
    tree.insert_many(scene.boxes.iter().map(|&b| (Aabb::from(b), ())));
    let mut grid = Grid::new(n);
    let mut spare = Vec::new();
    let (mut parts, mut scan, mut rebuild, mut walk) = (vec![], vec![], vec![], vec![]);
    let (mut found, mut expected) = (0, 0);
    for _ in 0..runs {
        parts.push(grid.build(&scene, &mut spare));
        let t = Instant::now();
        found = grid.pairs();
        scan.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        tree.rebuild();
        rebuild.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let mut count = 0u64;
        tree.for_each_pair(|_, _| count += 1);
        walk.push(t.elapsed().as_secs_f64() * 1e3);
        expected = count;
    }
    let part = |k: usize| median(parts.iter().map(|p| p[k]).collect());
    let build = median(parts.iter().map(|p| p.iter().sum()).collect());
    println!(
        "{} n={n}, {} × {} cells, medians of {runs}:",
        layout.name(),
        1u32 << grid.level,
        1u32 << grid.level
    );
    println!(
        "  grid:    keys {:.2} ms, sort {:.2} ms, gather {:.2} ms, build {build:.2} ms; pairs {:.2} ms ({found})",
        part(0),
        part(1),
        part(2),
        median(scan)
    );
    println!(
        "  quadrat: rebuild {:.2} ms; for_each_pair {:.2} ms ({expected})",
        median(rebuild),
        median(walk)
    );
    if found == expected {
        ExitCode::SUCCESS
    } else {
        eprintln!("grid_floor: the grid found {found} pairs where quadrat found {expected}");
        ExitCode::FAILURE
    }
}
