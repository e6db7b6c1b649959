//! Brute force versus the quadtree: building and finding all pairs.
//!
//! `cargo bench -p quadrat-bench --bench pairs` — uniform boxes, about 3 overlaps
//! per box, n = 1k, 10k, 100k.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use quadrat::scenario::{Layout, Scenario};
use quadrat::{Aabb, QuadTree};
use std::hint::black_box;
use std::time::Duration;

/// The O(n²) baseline: every pair tested once.
fn brute_pairs(boxes: &[Aabb]) -> usize {
    let mut count = 0;
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            count += usize::from(a.intersects(b));
        }
    }
    count
}

fn build(world: Aabb, boxes: &[Aabb]) -> QuadTree<u32> {
    let mut tree = QuadTree::new(world);
    for (i, &b) in boxes.iter().enumerate() {
        tree.insert(b, i as u32);
    }
    tree
}

fn tree_pairs(tree: &QuadTree<u32>) -> usize {
    let mut count = 0;
    tree.for_each_pair(|_, _| count += 1);
    count
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("build_and_pairs");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    for n in [1_000, 10_000, 100_000] {
        let s = Scenario::new(Layout::Uniform, n, 1);
        let boxes = s.boxes();
        assert_eq!(brute_pairs(&boxes), tree_pairs(&build(s.world, &boxes)));
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("quadtree", n), &boxes, |b, boxes| {
            b.iter(|| tree_pairs(&build(s.world, black_box(boxes))))
        });
        group.bench_with_input(BenchmarkId::new("brute_force", n), &boxes, |b, boxes| {
            b.iter(|| brute_pairs(black_box(boxes)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("quadtree_parts");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    for n in [1_000, 10_000, 100_000] {
        let s = Scenario::new(Layout::Uniform, n, 1);
        let boxes = s.boxes();
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("build", n), &boxes, |b, boxes| {
            b.iter(|| build(s.world, black_box(boxes)))
        });
        let tree = build(s.world, &boxes);
        group.bench_with_input(BenchmarkId::new("pairs", n), &tree, |b, tree| {
            b.iter(|| tree_pairs(black_box(tree)))
        });
        let mut refill = build(s.world, &boxes);
        group.bench_with_input(BenchmarkId::new("clear_refill", n), &boxes, |b, boxes| {
            b.iter(|| {
                refill.clear();
                for (i, &bx) in boxes.iter().enumerate() {
                    refill.insert(bx, i as u32);
                }
            })
        });
        let areas: Vec<Aabb> = Scenario::new(Layout::Uniform, 1000, 2)
            .boxes()
            .into_iter()
            .map(|a| a.expand(s.size))
            .collect();
        group.throughput(Throughput::Elements(areas.len() as u64));
        group.bench_with_input(BenchmarkId::new("queries_x1000", n), &tree, |b, tree| {
            b.iter(|| areas.iter().map(|&a| tree.query(a).count()).sum::<usize>())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
