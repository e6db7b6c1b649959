//! The library's hot paths, with throughput: bulk build and rebuild (on one
//! thread and, through the `parallel` feature, on all cores), moving frames
//! (per-item `update` and `update_all`), all pairs (sequential and on all
//! cores), and each kind of query.
//!
//! `cargo bench -p quadrat-bench --bench hot`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quadrat::scenario::{Layout, Rng, Scenario};
use quadrat::{Aabb, Circle, Key, QuadTree, Ray};
use std::hint::black_box;
use std::time::Duration;

fn tree_of(s: &Scenario) -> (QuadTree<u32>, Vec<Key>) {
    let mut tree = QuadTree::new(s.world);
    let keys = tree.insert_many(s.boxes().into_iter().zip(0..));
    (tree, keys)
}

/// Each box moved by a small random step (a quarter of its size at most).
fn stepped(boxes: &[Aabb], size: f32, seed: u64) -> Vec<Aabb> {
    let mut rng = Rng::new(seed);
    let d = size * 0.25;
    boxes
        .iter()
        .map(|b| b.translate([rng.range(-d, d), rng.range(-d, d)]))
        .collect()
}

fn bench(c: &mut Criterion) {
    let sizes = [10_000usize, 100_000, 1_000_000];
    let mut g = c.benchmark_group("build");
    g.sample_size(10).warm_up_time(Duration::from_millis(300));
    for &n in &sizes {
        let s = Scenario::new(Layout::Uniform, n, 1);
        let boxes = s.boxes();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("insert_many", n), &boxes, |b, boxes| {
            b.iter(|| {
                let mut t = QuadTree::new(s.world);
                t.insert_many(boxes.iter().copied().zip(0u32..));
                t
            })
        });
        g.bench_with_input(
            BenchmarkId::new("par_insert_many", n),
            &boxes,
            |b, boxes| {
                b.iter(|| {
                    let mut t = QuadTree::new(s.world);
                    t.par_insert_many(boxes.iter().copied().zip(0u32..));
                    t
                })
            },
        );
        let (mut tree, _) = tree_of(&s);
        g.bench_function(BenchmarkId::new("rebuild", n), |b| {
            b.iter(|| tree.rebuild())
        });
        g.bench_function(BenchmarkId::new("par_rebuild", n), |b| {
            b.iter(|| tree.par_rebuild())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("moving_frame");
    g.sample_size(10).warm_up_time(Duration::from_millis(300));
    for &n in &sizes[..2] {
        let s = Scenario::new(Layout::Uniform, n, 1);
        let frames = [
            stepped(&s.boxes(), s.size, 1),
            stepped(&s.boxes(), s.size, 2),
        ];
        g.throughput(Throughput::Elements(n as u64));
        let (mut tree, keys) = tree_of(&s);
        let mut f = 0;
        g.bench_function(BenchmarkId::new("update_each", n), |b| {
            b.iter(|| {
                f ^= 1;
                for (k, bx) in keys.iter().zip(&frames[f]) {
                    tree.update(*k, *bx);
                }
            })
        });
        let (mut tree, _) = tree_of(&s);
        g.bench_function(BenchmarkId::new("update_all", n), |b| {
            b.iter(|| {
                f ^= 1;
                let frame = &frames[f];
                tree.update_all(|_, &i, _| frame[i as usize]);
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("pairs");
    g.sample_size(10).warm_up_time(Duration::from_millis(300));
    for layout in Layout::ALL {
        for &n in &sizes {
            let s = Scenario::new(layout, n, 1);
            let (tree, _) = tree_of(&s);
            g.throughput(Throughput::Elements(n as u64));
            let id = format!("{}/{n}", layout.name());
            g.bench_function(BenchmarkId::new("sequential", &id), |b| {
                b.iter(|| {
                    let mut count = 0usize;
                    tree.for_each_pair(|_, _| count += 1);
                    count
                })
            });
            g.bench_function(BenchmarkId::new("parallel", &id), |b| {
                b.iter(|| {
                    let count = std::sync::atomic::AtomicUsize::new(0);
                    tree.par_for_each_pair(|_, _| {
                        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    });
                    count.into_inner()
                })
            });
        }
    }
    g.finish();

    // 10k queries over 1M boxes, about 10 hits each.
    let mut g = c.benchmark_group("queries_over_1m");
    g.sample_size(10).warm_up_time(Duration::from_millis(300));
    let s = Scenario::new(Layout::Uniform, 1_000_000, 1);
    let (tree, _) = tree_of(&s);
    let probes: Vec<Aabb> = Scenario::new(Layout::Uniform, 10_000, 2).boxes();
    g.throughput(Throughput::Elements(probes.len() as u64));
    let side = s.size * 0.58; // about 10 hits: (side + size)^2 * n / 1000^2
    g.bench_function("area", |b| {
        b.iter(|| {
            probes
                .iter()
                .map(|p| {
                    tree.query(Aabb::from_center(p.center(), [side, side]))
                        .count()
                })
                .sum::<usize>()
        })
    });
    g.bench_function("circle", |b| {
        b.iter(|| {
            probes
                .iter()
                .map(|p| {
                    tree.query_circle(Circle::new(p.center(), side * 1.1))
                        .count()
                })
                .sum::<usize>()
        })
    });
    g.bench_function("point", |b| {
        b.iter(|| {
            probes
                .iter()
                .map(|p| tree.query_point(p.center()).count())
                .sum::<usize>()
        })
    });
    g.bench_function("nearest_10", |b| {
        b.iter(|| {
            probes
                .iter()
                .map(|p| tree.nearest(p.center(), 10).len())
                .sum::<usize>()
        })
    });
    let mut rng = Rng::new(3);
    let rays: Vec<Ray> = probes
        .iter()
        .map(|p| Ray::new(p.center(), [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)]))
        .collect();
    g.bench_function("raycast", |b| {
        b.iter(|| {
            rays.iter()
                .filter(|r| black_box(tree.raycast(**r, 1000.0)).is_some())
                .count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
